{#-
    Every pre-purge copy of the data a request's purge runs removed: the old location of each
    partition (or unpartitioned table) the runs swapped, which the run's backup table points at
    and which is recorded as stale data.  With the date retention will delete it under the
    policies in force, and the date it did (the first successful delete in `retention_log` of
    that location, or of that backup partition wherever reaping moved it).
-#}
{{ config(materialized='table', enabled=compliance.purge_configured()) }}
-- depends_on: {{ ref('purge_log') }}
-- depends_on: {{ ref('retention_log') }}
-- depends_on: {{ ref('retention_policies') }}

{%- set purge_log_exists = execute and load_relation(ref('purge_log')) is not none %}
{%- set retention_log_exists = execute and load_relation(ref('retention_log')) is not none %}

with

ledger as (

    select * from {{ ref('erasure_request_log') }}

),

purged as (

    {%- if purge_log_exists %}
        select
            invocation_id,
            database_name,
            table_name,
            partition_spec,
            old_location,
            backup_table,
            rows_purged,
            ended_at
        from {{ ref('purge_log') }}
        where state = 'COMMITTED' and not dry_run
    {%- else %}
        {{ compliance.empty_select_sql([['invocation_id', 'string'], ['database_name', 'string'], ['table_name', 'string'],
            ['partition_spec', 'string'], ['old_location', 'string'], ['backup_table', 'string'], ['rows_purged', 'bigint'],
            ['ended_at', 'timestamp']]) }}
    {%- endif %}

),

deletions as (

    {%- if retention_log_exists %}
        select
            kind,
            concat(database_name, '.', table_name) as table_id,
            partition_spec,
            {{ compliance.erasure_location_key('location') }} as location_key,
            attempted_at
        from {{ ref('retention_log') }}
        where action = 'delete' and succeeded and not dry_run
    {%- else %}
        {{ compliance.empty_select_sql([['kind', 'string'], ['table_id', 'string'], ['partition_spec', 'string'],
            ['location_key', 'string'], ['attempted_at', 'timestamp']]) }}
    {%- endif %}

),

policies as (

    {{ compliance.erasure_copy_policies_sql(ref('purge_log'), ref('retention_policies')) }}

),

copies as (

    select
        ledger.request_id,
        purged.invocation_id,
        purged.database_name,
        purged.table_name,
        purged.partition_spec,
        purged.old_location as location,
        {{ compliance.erasure_location_key('purged.old_location') }} as location_key,
        purged.backup_table,
        purged.rows_purged,
        purged.ended_at as purged_at,
        case
            when policies.in_scope and policies.copy_days is not null
                then purged.ended_at + make_dt_interval(0, 0, 0, cast(policies.copy_days * 86400 as decimal(18, 6)))
        end as will_delete_at,
        case
            when not coalesce(policies.in_scope, true) then 'outside retention_scope: never deleted by retention'
            when policies.copy_days is null then 'no backup_retention_days: deleted when newer backups exceed backup_retention_versions'
        end as schedule_note
    from ledger
    inner join purged
        on ledger.invocation_id = purged.invocation_id
    left join policies
        on
            purged.database_name = policies.database_name
            and purged.table_name = policies.table_name

),

final as (

    select
        copies.request_id,
        copies.invocation_id,
        copies.database_name,
        copies.table_name,
        copies.partition_spec,
        copies.location,
        copies.backup_table,
        copies.rows_purged,
        copies.purged_at,
        copies.will_delete_at,
        copies.schedule_note,
        min(deletions.attempted_at) as deleted_at
    from copies
    left join deletions
        on
            copies.purged_at <= deletions.attempted_at
            and (
                copies.location_key = deletions.location_key
                or (
                    deletions.kind = 'backup'
                    and copies.backup_table = deletions.table_id
                    and copies.partition_spec <=> deletions.partition_spec
                )
            )
    group by
        copies.request_id,
        copies.invocation_id,
        copies.database_name,
        copies.table_name,
        copies.partition_spec,
        copies.location,
        copies.backup_table,
        copies.rows_purged,
        copies.purged_at,
        copies.will_delete_at,
        copies.schedule_note

)

select * from final
