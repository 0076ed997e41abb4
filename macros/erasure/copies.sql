-- noqa: disable=LT02
{#
    The copies of a request's data that its purge runs left (erasure_copies, the ledger and the
    certificate read them): a Hive table's swapped partitions, a Delta Lake table's older versions
    and log, each with the date it will be gone and the deletion retention logged.  No id is read.
#}

{#-
    The retention schedule of every table the purge log names, as rows: database_name,
    table_name, in_scope (false: outside `retention_scope`, never cleaned) and copy_days (after
    how many days retention deletes a pre-purge copy, retention_copy_days; null: no age limit).
-#}
{% macro erasure_copy_policies_sql(purge_log_relation, policies_relation) -%}
    {%- set pairs = [] -%}
    {%- if execute and purge_log_relation is not none and load_relation(purge_log_relation) is not none -%}
        {%- for row in run_query('select distinct database_name, table_name from ' ~ purge_log_relation ~ " where state = 'COMMITTED' order by 1, 2").rows -%}
            {%- do pairs.append([row[0], row[1]]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if not pairs -%}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['in_scope', 'boolean'], ['copy_days', 'double'],
        ['backup_days', 'double']]) }}
    {%- else -%}
        {%- set defaults = compliance.retention_defaults() -%}
        {%- set rows = compliance.retention_policy_rows(policies_relation) -%}
        {%- set scope = compliance.parse_table_patterns(var('retention_scope', ''), 'retention_scope') -%}
    select
        database_name,
        table_name,
        in_scope,
        cast(copy_days as double) as copy_days,
        cast(backup_days as double) as backup_days
    from values
        {%- for pair in pairs %}
            {%- set policy = compliance.retention_policy(pair[0], pair[1], rows, defaults) %}
            {%- set days = compliance.retention_copy_days(policy) %}
            {%- set backup_days = '' if policy.backup_retention_days is none else policy.backup_retention_days | string | trim %}
        ({{ compliance.sql_string(pair[0]) }}, {{ compliance.sql_string(pair[1]) }},
            {{ 'true' if compliance.retention_in_scope(pair[0], pair[1], scope) else 'false' }},
            {{ 'cast(null as double)' if days is none else days }},
            {{ 'cast(null as double)' if backup_days == '' else backup_days | float }}){{ "," if not loop.last }}
        {%- endfor %}
        as policy (database_name, table_name, in_scope, copy_days, backup_days)
    {%- endif -%}
{%- endmacro %}


{#-
    Every pre-purge copy of the data a request's purge runs removed (the old location of each
    partition, or unpartitioned table, a run that served it swapped: its backup table points at
    it, the stale-data records list it), with the date retention will delete it, and each
    successful, non-dry `delete` in `retention_log` of that location (or of that backup partition,
    wherever reaping moved it) after the swap: one row per copy and deletion (attempt_id null
    while none).  Relations that do not exist yet read as empty.
-#}
{% macro erasure_copy_deletions_sql(request_log, purge_log, retention_log, policies_relation) -%}
    {%- set request_log = compliance.erasure_existing(request_log) -%}
    {%- set purge_log = compliance.erasure_existing(purge_log) -%}
    {%- set retention_log = compliance.erasure_existing(retention_log) -%}
with

copy_serving_runs as ({{ compliance.erasure_copy_serving_runs_sql(request_log) }}),
copy_swaps as ({{ compliance.erasure_copy_swaps_sql(purge_log) }}),
copy_deletion_attempts as ({{ compliance.erasure_copy_deletion_attempts_sql(retention_log) }}),
copy_policies as ({{ compliance.erasure_copy_policies_sql(purge_log, policies_relation) }}),
copy_rows as ({{ compliance.erasure_copy_rows_sql() }}),
copy_final as ({{ compliance.erasure_copy_with_deletions_sql() }})

select * from copy_final
{%- endmacro %}

{#- The request log as (request_id, invocation_id): which purge runs served each request. -#}
{% macro erasure_copy_serving_runs_sql(request_log) -%}
    {%- if request_log is not none %}
    select request_id, invocation_id from {{ request_log }}
    {%- else %}
    {{ compliance.empty_select_sql([['request_id', 'string'], ['invocation_id', 'string']]) }}
    {%- endif %}
{%- endmacro %}

{#-
    The copies the purge log's committed, non-dry rows leave, by kind (`copy_kind`):
    - `backup`: a Hive table's swapped partition, its old location and backup table;
    - `delta_version`: a Delta Lake table's partition, whose files of the versions before the
      delete stay readable by time travel until VACUUM (retention) deletes them;
    - `delta_log`: a Delta table's log, one per table and run, which Delta itself cleans at a
      checkpoint past `delta.logRetentionDuration` (`log_hours`).
    - `iceberg_snapshot`: an Iceberg table's partition, whose files of the snapshots before the
      purge stay readable by time travel until retention's expire_snapshots removes them.
    A Delta row names no backup; its reason (python_hooks/purge/delta.py, log_note) names the log
    and its duration.
-#}
{% macro erasure_copy_swaps_sql(purge_log) -%}
    {%- if purge_log is not none %}
    select
        invocation_id,
        database_name,
        table_name,
        partition_spec,
        old_location,
        backup_table,
        rows_purged,
        ended_at,
        'backup' as copy_kind,
        cast(null as double) as log_hours
    from {{ purge_log }}
    where state = 'COMMITTED' and not coalesce(dry_run, false) and backup_table is not null

    union all

    select
        invocation_id,
        database_name,
        table_name,
        partition_spec,
        coalesce(old_location, new_location) as old_location,
        cast(null as string) as backup_table,
        rows_purged,
        ended_at,
        case when reason like 'Delta Lake: version %' then 'delta_version' else 'iceberg_snapshot' end as copy_kind,
        cast(null as double) as log_hours
    from {{ purge_log }}
    where
        state = 'COMMITTED' and not coalesce(dry_run, false) and backup_table is null
        and (reason like 'Delta Lake: version %' or reason like 'Apache Iceberg: snapshot %')

    union all

    select
        invocation_id,
        database_name,
        table_name,
        cast(null as string) as partition_spec,
        max(regexp_extract(reason, 'its log [(](.*/_delta_log)[)] is cleaned', 1)) as old_location,
        cast(null as string) as backup_table,
        sum(rows_purged) as rows_purged,
        max(ended_at) as ended_at,
        'delta_log' as copy_kind,
        max(cast(nullif(regexp_extract(reason, 'logRetentionDuration [(]([0-9.]+) hours[)]', 1), '') as double)) as log_hours
    from {{ purge_log }}
    where
        state = 'COMMITTED' and not coalesce(dry_run, false) and backup_table is null
        and reason like 'Delta Lake: version %' and reason like '%/_delta_log) is cleaned%'
    group by invocation_id, database_name, table_name
    {%- else %}
    {{ compliance.empty_select_sql([['invocation_id', 'string'], ['database_name', 'string'], ['table_name', 'string'],
        ['partition_spec', 'string'], ['old_location', 'string'], ['backup_table', 'string'], ['rows_purged', 'bigint'],
        ['ended_at', 'timestamp'], ['copy_kind', 'string'], ['log_hours', 'double']]) }}
    {%- endif %}
{%- endmacro %}

{#- Retention's successful, non-dry deletes: the location (as a key) or backup partition each removed, and when. -#}
{% macro erasure_copy_deletion_attempts_sql(retention_log) -%}
    {%- if retention_log is not none %}
    select
        attempt_id,
        kind,
        concat(database_name, '.', table_name) as table_id,
        partition_spec,
        {{ compliance.erasure_location_key('location') }} as location_key,
        attempted_at,
        -- a VACUUM's or an expire_snapshots' horizon, in UTC (python_hooks/retention/
        -- delta_versions.py, iceberg_snapshots.py): the files a version or snapshot removed before
        -- it are gone, unless a branch or tag kept one (a `report` row of the same pass)
        cast(concat(nullif(case
            when kind = 'delta_version' then regexp_extract(note, '^VACUUM retain [^(]* [(]files removed before ([0-9-]+ [0-9:.]+) UTC[)]', 1)
            when kind = 'iceberg_snapshot' and not pinned
                then regexp_extract(note, '^expire_snapshots older than [^(]* [(]([0-9-]+ [0-9:.]+) UTC[)]', 1)
        end, ''), '+00:00') as timestamp) as horizon_at
    from (
        select
            *,
            max(case when action = 'report' then 1 else 0 end)
                over (partition by invocation_id, database_name, table_name) = 1 as pinned
        from {{ retention_log }}
    ) as attempts
    where action = 'delete' and succeeded and not coalesce(dry_run, false)
    {%- else %}
    {{ compliance.empty_select_sql([['attempt_id', 'string'], ['kind', 'string'], ['table_id', 'string'], ['partition_spec', 'string'],
        ['location_key', 'string'], ['attempted_at', 'timestamp'], ['horizon_at', 'timestamp']]) }}
    {%- endif %}
{%- endmacro %}

{#- Each pre-purge copy of a request, with the date retention will delete it under the policies in force (or why it will not). -#}
{% macro erasure_copy_rows_sql() -%}
    select
        copy_serving_runs.request_id,
        copy_swaps.invocation_id,
        copy_swaps.database_name,
        copy_swaps.table_name,
        copy_swaps.partition_spec,
        copy_swaps.copy_kind,
        concat(copy_swaps.database_name, '.', copy_swaps.table_name) as table_id,
        copy_swaps.old_location as location,
        {{ compliance.erasure_location_key('copy_swaps.old_location') }} as location_key,
        copy_swaps.backup_table,
        copy_swaps.rows_purged,
        copy_swaps.ended_at as purged_at,
        case
            when copy_swaps.copy_kind = 'delta_log' and copy_swaps.log_hours is not null
                then copy_swaps.ended_at + make_dt_interval(0, 0, 0, cast(copy_swaps.log_hours * 3600 as decimal(18, 6)))
            when copy_swaps.copy_kind in ('delta_version', 'iceberg_snapshot') and copy_policies.in_scope and copy_policies.backup_days is not null
                then copy_swaps.ended_at + make_dt_interval(0, 0, 0, cast(copy_policies.backup_days * 86400 as decimal(18, 6)))
            when copy_swaps.copy_kind = 'backup' and copy_policies.in_scope and copy_policies.copy_days is not null
                then copy_swaps.ended_at + make_dt_interval(0, 0, 0, cast(copy_policies.copy_days * 86400 as decimal(18, 6)))
        end as will_delete_at,
        case
            when copy_swaps.copy_kind = 'delta_log' then concat(
                'deleted by Delta, not by retention: at the first checkpoint past delta.logRetentionDuration',
                case when copy_swaps.log_hours is null then ' (which this product cannot read)' else '' end,
                '; it holds ids only where statistics or a predicate give them, as erasure_verification_locations shows')
            when not coalesce(copy_policies.in_scope, true) then 'outside retention_scope: never deleted by retention'
            when copy_swaps.copy_kind in ('delta_version', 'iceberg_snapshot') and copy_policies.backup_days is null
                then 'no backup_retention_days: retention does not expire the older versions of this table'
            when copy_policies.copy_days is null then 'no backup_retention_days: deleted when newer backups exceed backup_retention_versions'
        end as schedule_note
    from copy_serving_runs
    inner join copy_swaps
        on copy_serving_runs.invocation_id = copy_swaps.invocation_id
    left join copy_policies
        on
            copy_swaps.database_name = copy_policies.database_name
            and copy_swaps.table_name = copy_policies.table_name
{%- endmacro %}

{#- Each copy with every deletion, after its swap, of its location or of its backup partition (attempt_id null while none). -#}
{% macro erasure_copy_with_deletions_sql() -%}
    select
        copy_rows.request_id,
        copy_rows.invocation_id,
        copy_rows.database_name,
        copy_rows.table_name,
        copy_rows.partition_spec,
        copy_rows.copy_kind,
        copy_rows.location,
        copy_rows.backup_table,
        copy_rows.rows_purged,
        copy_rows.purged_at,
        copy_rows.will_delete_at,
        copy_rows.schedule_note,
        copy_deletion_attempts.attempt_id,
        copy_deletion_attempts.attempted_at
    from copy_rows
    left join copy_deletion_attempts
        on
            copy_rows.purged_at <= copy_deletion_attempts.attempted_at
            and (
                (copy_rows.copy_kind = 'backup' and copy_rows.location_key = copy_deletion_attempts.location_key)
                or (
                    copy_rows.copy_kind = 'backup'
                    and copy_deletion_attempts.kind = 'backup'
                    and copy_rows.backup_table = copy_deletion_attempts.table_id
                    and copy_rows.partition_spec <=> copy_deletion_attempts.partition_spec
                )
                -- a VACUUM or an expire_snapshots whose horizon reaches back past the purge removed
                -- its older versions' or snapshots' files
                or (
                    copy_rows.copy_kind in ('delta_version', 'iceberg_snapshot')
                    and copy_deletion_attempts.kind = copy_rows.copy_kind
                    and copy_rows.table_id = copy_deletion_attempts.table_id
                    and copy_deletion_attempts.horizon_at >= copy_rows.purged_at
                )
            )
{%- endmacro %}

{#- One row per pre-purge copy (erasure_copy_deletions_sql, its first deletion as `deleted_at`). -#}
{% macro erasure_copies_sql(request_log, purge_log, retention_log, policies_relation) -%}
with

copies_with_deletions as (
    {{ compliance.erasure_copy_deletions_sql(request_log, purge_log, retention_log, policies_relation) }}
),

copies_first_deletion as (
    select
        request_id,
        invocation_id,
        database_name,
        table_name,
        partition_spec,
        copy_kind,
        location,
        backup_table,
        rows_purged,
        purged_at,
        will_delete_at,
        schedule_note,
        min(attempted_at) as deleted_at
    from copies_with_deletions
    group by
        request_id,
        invocation_id,
        database_name,
        table_name,
        partition_spec,
        copy_kind,
        location,
        backup_table,
        rows_purged,
        purged_at,
        will_delete_at,
        schedule_note
)

select * from copies_first_deletion
{%- endmacro %}
