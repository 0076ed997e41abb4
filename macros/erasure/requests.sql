-- noqa: disable=LT02
{#
    Erasure requests: what links a request to the purge runs that served it, and where its ids
    may still be.  No macro here copies an id anywhere: ids are read from the id table (the
    source `compliance.id_table`) inside the queries that need them, and only counts,
    locations and dates are written.

    The id table may carry `request_id` (string) and `requested_at` (timestamp).  Without
    `request_id`, a request is a purge run: its id is the run's dbt invocation_id and its ids are
    every id of the id table.
#}

{#- The id table's column names, lower-cased ([] at parse time or when it does not exist). -#}
{% macro erasure_id_table_columns() -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set source_relation = source('compliance', 'id_table') -%}
    {%- set relation = adapter.get_relation(database=source_relation.database, schema=source_relation.schema, identifier=source_relation.identifier) -%}
    {%- if relation is none -%}{{ return([]) }}{%- endif -%}
    {%- set names = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do names.append(column.name | lower) -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}

{#- True when the id table carries `request_id`: requests are then the user's, not purge runs. -#}
{% macro erasure_has_request_ids() -%}
    {{ return('request_id' in compliance.erasure_id_table_columns()) }}
{%- endmacro %}

{#-
    The ids of the id table with the request each belongs to: columns `id`, `request_id`
    (null when the id table has no `request_id`: every request then holds every id) and
    `requested_at`.  NULL ids purge nothing and are left out.
-#}
{% macro erasure_listed_ids_sql() -%}
    {%- set columns = compliance.erasure_id_table_columns() -%}
    {%- set id_column = compliance.quote_ident(var('compliance_id_column', 'guestid') | string | trim) -%}
    select
        listed.{{ id_column }} as id,
        {{ 'cast(listed.request_id as string)' if 'request_id' in columns else 'cast(null as string)' }} as request_id,
        {{ 'cast(listed.requested_at as timestamp)' if 'requested_at' in columns else 'cast(null as timestamp)' }} as requested_at
    from {{ source('compliance', 'id_table') }} as listed
    where listed.{{ id_column }} is not null
{%- endmacro %}

{#- A location as a key: `file:///x`, `file:/x/` and `file:/x` compare equal. -#}
{% macro erasure_location_key(expression) -%}
    regexp_replace(regexp_replace({{ expression }}, '^file:/+', 'file:/'), '/+$', '')
{%- endmacro %}

{#- `erasure_deadline_days` (default 30) as a number of days; anything else is an error naming the var. -#}
{% macro erasure_deadline_days() -%}
    {%- set value = var('erasure_deadline_days', 30) | string | trim -%}
    {%- if not modules.re.fullmatch('[0-9]+(\.[0-9]+)?', value) -%}
        {%- do exceptions.raise_compiler_error("erasure_deadline_days: '" ~ value ~ "' is not a number of days (a non-negative number, e.g. 30)") -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{#- `relation` when it exists, else none (at parse time: none). -#}
{% macro erasure_existing(relation) -%}
    {%- if not execute or relation is none -%}{{ return(none) }}{%- endif -%}
    {{ return(load_relation(relation)) }}
{%- endmacro %}

{#- A timestamp expression as text in UTC (`2026-11-26 04:22:53 UTC`), whatever the session's time zone. -#}
{% macro erasure_utc_text(expression) -%}
    date_format(to_utc_timestamp({{ expression }}, current_timezone()), "yyyy-MM-dd HH:mm:ss 'UTC'")
{%- endmacro %}

{#-
    The purges and restores the metastore and the purge journal show (python_hooks/erasure/locations.py
    warehouse_changes, in the verification's scope): registered side tables at their creation, and
    journal entries, as rows (source, kind, invocation_id, database_name, table_name, happened_at).
    Read when the ledger is built, so a run that never reached any log still counts.
-#}
{% macro erasure_warehouse_changes_sql() -%}
    {%- set changes = adapter.erasure_warehouse_changes(compliance.erasure_verification_scope()) if execute else [] -%}
    {%- if not changes -%}
    {{ compliance.empty_select_sql([['source', 'string'], ['kind', 'string'], ['invocation_id', 'string'], ['database_name', 'string'],
        ['table_name', 'string'], ['happened_at', 'timestamp']]) }}
    {%- else -%}
    select source, kind, invocation_id, database_name, table_name, timestamp_micros(happened_us) as happened_at
    from values
        {%- for change in changes %}
        ({{ compliance.sql_string(change.source) }}, {{ compliance.sql_string(change.kind) }}, {{ compliance.sql_string(change.invocation_id) }},
            {{ compliance.sql_string(change.database_name) }}, {{ compliance.sql_string(change.table_name) }}, {{ change.happened_us | int }}L){{ "," if not loop.last }}
        {%- endfor %}
        as changes (source, kind, invocation_id, database_name, table_name, happened_us)
    {%- endif -%}
{%- endmacro %}

{#- The per-request rows of the verifications (erasure_verification), or none before the first. -#}
{% macro erasure_verified_sql(verification) -%}
    {%- set verification = compliance.erasure_existing(verification) -%}
    {%- if verification is not none -%}
    select
        verification_id,
        request_id,
        started_at,
        ended_at,
        live_rows,
        copy_rows,
        unread_live,
        unread_copies,
        live_holding,
        copies_holding,
        unread_locations
    from {{ verification }}
    {%- else -%}
    {{ compliance.empty_select_sql([['verification_id', 'string'], ['request_id', 'string'], ['started_at', 'timestamp'],
        ['ended_at', 'timestamp'], ['live_rows', 'bigint'], ['copy_rows', 'bigint'], ['unread_live', 'bigint'],
        ['unread_copies', 'bigint'], ['live_holding', 'string'], ['copies_holding', 'string'], ['unread_locations', 'string']]) }}
    {%- endif -%}
{%- endmacro %}

{#-
    The request ledger (docs/erasure.md, "Status"): one row per request with its status, what is
    missing and where.  `r` holds the relations: request_log, purge_log, retention_log, events,
    verification (each may not exist yet) and copies_sql (erasure_copies_sql).  The model
    `erasure_requests` and the certificate both run this, so they cannot disagree.

    A request is `live_clean` only when its latest verification started after its last purge and
    the last restore and read every live location, finding none of its ids; `erased` only when that
    verification also started after the last deletion of a copy and found none anywhere, with no
    location unread.  Its last purge is the latest of the runs that served it and of the runs no
    log attributes to a request (an interrupted run: its side tables and journal entries).  A
    request whose ids are no longer listed cannot be verified again: only its own runs count for it.
-#}
{% macro erasure_ledger_sql(r) -%}
    {%- set request_log = compliance.erasure_existing(r.request_log) -%}
    {%- set purge_log = compliance.erasure_existing(r.purge_log) -%}
    {%- set retention_log = compliance.erasure_existing(r.retention_log) -%}
    {%- set events = compliance.erasure_existing(r.events) -%}
    {%- set has_request_ids = compliance.erasure_has_request_ids() -%}
with

-- the requests: those the id table lists and those purge runs served (erasure_request_log)
listed as ({{ compliance.erasure_ledger_listed_sql() }}),
listed_requests as ({{ compliance.erasure_ledger_listed_requests_sql() }}),
ledger as ({{ compliance.erasure_ledger_request_log_sql(request_log) }}),
served as ({{ compliance.erasure_ledger_served_sql() }}),
requests as ({{ compliance.erasure_ledger_requests_sql(has_request_ids) }}),
attributed as (select distinct invocation_id from ledger),

-- what changed the warehouse since: purges no log attributes to a request, restores, writes, deletions
purge_runs as ({{ compliance.erasure_ledger_purge_runs_sql(purge_log) }}),
warehouse_changes as ({{ compliance.erasure_warehouse_changes_sql() }}),
unattributed_purges as ({{ compliance.erasure_ledger_unattributed_purges_sql() }}),
restores as ({{ compliance.erasure_ledger_restores_sql(events) }}),
last_write as ({{ compliance.erasure_ledger_last_write_sql() }}),
last_deletion as ({{ compliance.erasure_ledger_last_deletion_sql(retention_log) }}),

-- what the verifications found, and what the exemptions keep
verified as ({{ compliance.erasure_verified_sql(r.verification) }}),
latest as ({{ compliance.erasure_ledger_latest_sql() }}),
live_tables as ({{ compliance.erasure_live_tables_sql(r.findings) }}),
exempt as ({{ compliance.erasure_ledger_exempt_sql() }}),

-- the pre-purge copies of each request
request_copies as ({{ r.copies_sql }}),
copies_by_request as ({{ compliance.erasure_ledger_copies_by_request_sql() }}),

-- the status: the facts, the rule, the rows (each CTE referenced once: Spark inlines a CTE at
-- every reference, so a second one would read and join everything before it again)
facts as ({{ compliance.erasure_ledger_facts_sql() }}),
judged as ({{ compliance.erasure_ledger_judged_sql() }}),
final as ({{ compliance.erasure_ledger_final_sql() }})

select * from final
{%- endmacro %}

{#- The id table's ids with their request (erasure_listed_ids_sql), or an empty select when there is no id table. -#}
{% macro erasure_ledger_listed_sql() -%}
    {{ compliance.erasure_listed_ids_sql() if compliance.erasure_id_table_columns() else compliance.empty_select_sql([['id', 'string'], ['request_id', 'string'], ['requested_at', 'timestamp']]) }}
{%- endmacro %}

{#- Per request the id table lists: when it was requested and how many ids it holds. -#}
{% macro erasure_ledger_listed_requests_sql() -%}
    select
        request_id,
        min(requested_at) as requested_at,
        count(distinct id) as id_count
    from listed
    where request_id is not null
    group by request_id
{%- endmacro %}

{#- The request log's rows (request, purge run, when it purged), or an empty select before the first. -#}
{% macro erasure_ledger_request_log_sql(request_log) -%}
    {%- if request_log is not none %}
    select request_id, requested_at, id_count, invocation_id, purged_at from {{ request_log }}
    {%- else %}
    {{ compliance.empty_select_sql([['request_id', 'string'], ['requested_at', 'timestamp'], ['id_count', 'bigint'],
        ['invocation_id', 'string'], ['purged_at', 'timestamp']]) }}
    {%- endif %}
{%- endmacro %}

{#- Per request of the request log: its purge runs and when they first and last served it. -#}
{% macro erasure_ledger_served_sql() -%}
    select
        request_id,
        min(requested_at) as requested_at,
        max(id_count) as id_count,
        count(distinct invocation_id) as purge_runs,
        concat_ws(',', sort_array(collect_set(invocation_id))) as purge_invocation_ids,
        min(purged_at) as first_purged_at,
        max(purged_at) as last_served_at
    from ledger
    group by request_id
{%- endmacro %}

{#- Every request, listed or served, with its purge runs and whether the id table still lists it. -#}
{% macro erasure_ledger_requests_sql(has_request_ids) -%}
    select
        coalesce(served.request_id, listed_requests.request_id) as request_id,
        coalesce(listed_requests.requested_at, served.requested_at) as requested_at,
        coalesce(listed_requests.id_count, served.id_count) as id_count,
        coalesce(served.purge_runs, 0) as purge_runs,
        served.purge_invocation_ids,
        served.first_purged_at,
        served.last_served_at,
        {{ 'listed_requests.request_id is not null' if has_request_ids else 'true' }} as still_listed
    from served
    full outer join listed_requests
        on served.request_id = listed_requests.request_id
{%- endmacro %}

{#- Per purge run that committed a swap (not a dry run): when it last did. -#}
{% macro erasure_ledger_purge_runs_sql(purge_log) -%}
    {%- if purge_log is not none %}
    select
        invocation_id,
        max(ended_at) as happened_at
    from {{ purge_log }}
    where state = 'COMMITTED' and not coalesce(dry_run, false)
    group by invocation_id
    {%- else %}
    {{ compliance.empty_select_sql([['invocation_id', 'string'], ['happened_at', 'timestamp']]) }}
    {%- endif %}
{%- endmacro %}

{#- When the last purge no log attributes to a request happened (its swaps, side tables or journal entries). -#}
{% macro erasure_ledger_unattributed_purges_sql() -%}
    select max(happened_at) as happened_at
    from (
        select purge_runs.happened_at
        from purge_runs
        left anti join attributed
            on purge_runs.invocation_id = attributed.invocation_id
        union all
        select warehouse_changes.happened_at
        from warehouse_changes
        left anti join attributed
            on coalesce(warehouse_changes.invocation_id, '') = attributed.invocation_id
        where warehouse_changes.kind in ('staging', 'backup', 'purge')
    ) as unattributed
{%- endmacro %}

{#- When the last restore happened (a restore event, or a trash table the metastore shows). -#}
{% macro erasure_ledger_restores_sql(events) -%}
    select max(happened_at) as happened_at
    from (
        {%- if events is not none %}
        select recorded_at as happened_at from {{ events }} where event = 'restore'
        union all
        {%- endif %}
        select happened_at from warehouse_changes where kind = 'trash'
    ) as restored
{%- endmacro %}

{#- The newest data file under an onboarded table: when it was written and to which table. -#}
{% macro erasure_ledger_last_write_sql() -%}
    select
        max(happened_at) as happened_at,
        max_by(concat(database_name, '.', table_name), happened_at) as table_id
    from warehouse_changes
    where kind = 'write'
{%- endmacro %}

{#- When retention last deleted or dropped anything (successful, not a dry run). -#}
{% macro erasure_ledger_last_deletion_sql(retention_log) -%}
    {%- if retention_log is not none %}
    select max(attempted_at) as happened_at
    from {{ retention_log }}
    where succeeded and not coalesce(dry_run, false) and action in ('delete', 'drop')
    {%- else %}
    select cast(null as timestamp) as happened_at
    {%- endif %}
{%- endmacro %}

{#-
    Each request's latest verification row, with what its verifications say over time, from one
    pass over them: when one last found its ids live (or could not read a live location), when one
    last found none, and the start of every one that found none (clean_starts, for live_clean_at).
-#}
{% macro erasure_ledger_latest_sql() -%}
    select *
    from (
        select
            verified.*,
            row_number() over (partition by request_id order by started_at desc, verification_id desc) as recency,
            max(case when live_rows > 0 or unread_live > 0 then started_at end) over (partition by request_id)
                as last_unclean_at,
            max(case when live_rows = 0 and unread_live = 0 then started_at end) over (partition by request_id)
                as last_clean_at,
            collect_list(case when live_rows = 0 and unread_live = 0 then started_at end) over (partition by request_id)
                as clean_starts
        from verified
    ) as ranked
    where recency = 1
{%- endmacro %}

{#- Per request and verification: the rows that exempt tables hold, and where the others are. -#}
{% macro erasure_ledger_exempt_sql() -%}
    select
        request_id,
        verification_id,
        sum(case when legal_basis is not null then rows_holding_ids else 0 end) as exempt_rows,
        concat_ws('; ', sort_array(collect_list(case when legal_basis is not null then concat(
            table_id, ': ', rows_holding_ids, ' row(s), kept under ', legal_basis,
            ' (owner ', coalesce(owner, 'none'), ', review ', coalesce(review_date, 'none'), ')'
        ) end))) as exempt_holding,
        concat_ws(', ', sort_array(collect_list(case when legal_basis is null then concat(table_id, ': ', rows_holding_ids) end)))
            as not_exempt_holding,
        concat_ws('; ', sort_array(collect_list(case when legal_basis is null and exemption_problem is not null
            then concat(table_id, ': its exemption ', exemption_problem) end))) as exemption_problems
    from live_tables
    group by request_id, verification_id
{%- endmacro %}

{#- Per request: its copies, how many remain, when the last was deleted and when the rest will be. -#}
{% macro erasure_ledger_copies_by_request_sql() -%}
    select
        request_id,
        count(*) as copies_total,
        sum(case when deleted_at is null then 1 else 0 end) as copies_remaining,
        max(deleted_at) as last_copy_deleted_at,
        case
            when sum(case when deleted_at is null and will_delete_at is null then 1 else 0 end) = 0
                then max(case when deleted_at is null then will_delete_at end)
        end as copies_deleted_by
    from request_copies
    group by request_id
{%- endmacro %}

{#- One row per request with everything its status rests on: its runs, the changes since, its latest verification, its copies. -#}
{% macro erasure_ledger_facts_sql() -%}
    select
        requests.request_id,
        requests.requested_at,
        coalesce(requests.requested_at, requests.first_purged_at)
        + make_dt_interval(0, 0, 0, cast({{ compliance.erasure_deadline_days() }} * 86400 as decimal(18, 6))) as deadline_at,
        requests.id_count,
        requests.still_listed,
        requests.purge_runs,
        requests.purge_invocation_ids,
        requests.first_purged_at,
        case
            when requests.still_listed then greatest(requests.last_served_at, unattributed_purges.happened_at)
            else requests.last_served_at
        end as last_purge_at,
        case when requests.still_listed then restores.happened_at end as last_restore_at,
        case when requests.still_listed then last_write.happened_at end as last_write_at,
        case when requests.still_listed then last_write.table_id end as last_write_table,
        case when requests.still_listed then last_deletion.happened_at end as last_deletion_at,
        latest.verification_id,
        latest.started_at as verified_at,
        latest.ended_at as verification_ended_at,
        -- rows an exemption keeps do not hold the request back; they get a status of their own
        latest.live_rows - coalesce(exempt.exempt_rows, 0) as live_rows,
        coalesce(exempt.exempt_rows, 0) as exempt_rows,
        nullif(exempt.exempt_holding, '') as exempt_holding,
        nullif(exempt.not_exempt_holding, '') as not_exempt_holding,
        nullif(exempt.exemption_problems, '') as exemption_problems,
        latest.copy_rows,
        latest.unread_live,
        latest.unread_copies,
        latest.live_holding,
        latest.copies_holding,
        latest.unread_locations,
        latest.last_unclean_at,
        latest.last_clean_at,
        latest.clean_starts,
        coalesce(copies_by_request.copies_total, 0) as copies_total,
        coalesce(copies_by_request.copies_remaining, 0) as copies_remaining,
        copies_by_request.last_copy_deleted_at,
        copies_by_request.copies_deleted_by
    from requests
    cross join unattributed_purges
    cross join restores
    cross join last_write
    cross join last_deletion
    left join latest
        on requests.request_id = latest.request_id
    left join exempt
        on latest.request_id = exempt.request_id and latest.verification_id = exempt.verification_id
    left join copies_by_request
        on requests.request_id = copies_by_request.request_id
{%- endmacro %}

{#- The facts with the last change and the request's progress, by the rule in the ledger's comment. -#}
{% macro erasure_ledger_judged_sql() -%}
    select
        facts.*,
        greatest(facts.last_purge_at, facts.last_restore_at, facts.last_write_at) as last_change_at,
        case
            when facts.purge_runs = 0 then 'pending'
            when facts.verification_id is null then 'unverified'
            when facts.verified_at <= greatest(facts.last_purge_at, facts.last_restore_at, facts.last_write_at) then 'unverified'
            when facts.unread_live > 0 then 'unverified'
            when facts.live_rows > 0
                then case when facts.last_clean_at > facts.first_purged_at then 'reintroduced' else 'pending' end
            when
                facts.copy_rows = 0 and facts.unread_copies = 0
                and (facts.last_deletion_at is null or facts.verified_at > facts.last_deletion_at)
                then case when facts.exempt_rows > 0 then 'retained_exempt' else 'erased' end
            when facts.copy_rows > 0 and (facts.last_deletion_at is null or facts.verified_at > facts.last_deletion_at)
                then 'copies_remaining'
            else 'live_clean'
        end as progress
    from facts
{%- endmacro %}

{#- The ledger rows: the facts, the progress, the status (overdue past the deadline) and what is missing. -#}
{% macro erasure_ledger_final_sql() -%}
    select
        judged.request_id,
        judged.requested_at,
        judged.deadline_at,
        judged.id_count,
        judged.still_listed,
        judged.purge_runs,
        judged.purge_invocation_ids,
        judged.last_purge_at,
        judged.last_restore_at,
        judged.last_deletion_at,
        judged.last_write_at,
        judged.verification_id,
        judged.verified_at,
        judged.verification_ended_at,
        coalesce(judged.live_rows, 0) as live_rows,
        coalesce(judged.copy_rows, 0) as copy_rows,
        coalesce(judged.unread_live, 0) + coalesce(judged.unread_copies, 0) as unread_locations_count,
        judged.live_holding,
        judged.copies_holding,
        judged.unread_locations,
        judged.exempt_rows,
        judged.exempt_holding,
        judged.copies_total,
        judged.copies_remaining,
        judged.copies_deleted_by,
        -- since when its live tables were clean: the first verification that found them so after
        -- the last change and after the last one that did not
        case when judged.progress in ('live_clean', 'copies_remaining', 'erased') then array_min(filter(
            judged.clean_starts,
            started -> started > coalesce(greatest(judged.last_change_at, judged.last_unclean_at), timestamp '1970-01-01 00:00:00')
        )) end as live_clean_at,
        case
            when judged.progress = 'erased' then greatest(judged.last_purge_at, judged.last_copy_deleted_at)
        end as fully_erased_at,
        judged.progress,
        case
            when judged.progress in ('erased', 'reintroduced', 'retained_exempt') then judged.progress
            when current_timestamp() > judged.deadline_at then 'overdue'
            else judged.progress
        end as status,
        {{ compliance.erasure_ledger_missing() }} as missing,
        current_timestamp() as evaluated_at
    from judged
{%- endmacro %}

{#- The ledger's `missing` column: what the request still needs and the command that gives it, by progress. -#}
{% macro erasure_ledger_missing() -%}
        case judged.progress
            when 'pending' then
                case
                    when judged.purge_runs = 0 then 'no purge run has served it yet: dbt run --select purge+'
                    else concat('live tables still hold its ids (', coalesce(judged.not_exempt_holding, judged.live_holding),
                        '): make purge_whitelist select each of them and run dbt run --select purge+, then verify; or, where the law',
                        ' requires keeping one, add a row (table_pattern, legal_basis, owner, review_date) to the seed ',
                        {{ compliance.sql_string(var('erasure_exemptions', 'erasure_exemptions')) }},
                        case when judged.exemption_problems is not null
                            then concat('. Exemptions that exempt nothing: ', judged.exemption_problems) else '' end)
                end
            when 'unverified' then
                case
                    when judged.verification_id is null
                        then 'no verification has read the bytes for it: dbt run --select erasure_verification'
                    when judged.verified_at <= greatest(judged.last_purge_at, judged.last_restore_at)
                        then concat('no verification since the last purge or restore (', {{ compliance.erasure_utc_text('greatest(judged.last_purge_at, judged.last_restore_at)') }},
                            '): dbt run --select erasure_verification')
                    when judged.verified_at <= judged.last_write_at
                        then concat('data was written to ', judged.last_write_table, ' (', {{ compliance.erasure_utc_text('judged.last_write_at') }},
                            ') after the last verification: dbt run --select erasure_verification')
                    else concat('live locations could not be read: ', judged.unread_locations)
                end
            when 'reintroduced' then
                concat('live tables hold its ids again (', judged.live_holding, '): dbt run --select purge+, then verify')
            when 'retained_exempt' then
                concat('its ids remain only in tables an exemption keeps: ', judged.exempt_holding,
                    '; they stay until the exemption ends (seed ', {{ compliance.sql_string(var('erasure_exemptions', 'erasure_exemptions')) }}, ')')
            when 'copies_remaining' then
                concat('copies hold its ids until retention deletes them: ', judged.copies_holding)
            when 'live_clean' then
                case
                    when judged.unread_copies > 0 then concat('copies could not be read: ', judged.unread_locations)
                    else concat('a copy was deleted after the last verification (', {{ compliance.erasure_utc_text('judged.last_deletion_at') }},
                        '): verify again (dbt run --select erasure_verification)')
                end
        end
{%- endmacro %}

{#-
    The relations the ledger reads, for a macro run outside the model (the certificate): those of
    the target schema, the copies computed afresh from purge_log and retention_log.
-#}
{% macro erasure_ledger_relations() -%}
    {%- set rel = compliance.erasure_relation -%}
    {{ return({
        'request_log': rel('erasure_request_log'),
        'purge_log': rel('purge_log'),
        'retention_log': rel('retention_log'),
        'events': rel('erasure_events'),
        'verification': rel('erasure_verification'),
        'findings': rel('erasure_verification_findings'),
        'copies_sql': compliance.erasure_copies_sql(rel('erasure_request_log'), rel('purge_log'), rel('retention_log'), rel('retention_policies')),
    }) }}
{%- endmacro %}
