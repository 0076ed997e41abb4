{#-
    The ledger linking erasure requests to the purge runs that served them: one row per request
    and purge run (dry runs serve nothing).  Appended after each purge, never rebuilt.  A request
    is the id table's `request_id`, or, when it has none, the purge run itself.  Counts only:
    no id is copied here.  Before a purge node has ever finished (its relation does not exist:
    a first run killed midway), nothing is appended.
-#}
{{ config(
    materialized='incremental',
    enabled=compliance.purge_configured(),
    incremental_strategy='append',
    full_refresh=false,
) }}

with

purge_results as (

    {%- if compliance.erasure_existing(ref('purge')) is not none %}
        select * from {{ ref('purge') }}
    {%- else %}
        {{ compliance.empty_select_sql([['invocation_id', 'string'], ['database_name', 'string'], ['table_name', 'string'],
            ['state', 'string'], ['dry_run', 'boolean'], ['started_at', 'timestamp'], ['ended_at', 'timestamp']]) }}
    {%- endif %}

),

listed as (

    {{ compliance.erasure_listed_ids_sql() }}

),

purge_run as (

    select
        invocation_id,
        min(started_at) as started_at,
        max(ended_at) as purged_at,
        sum(case when state = 'COMMITTED' then 1 else 0 end) as partitions_committed,
        sum(case when state = 'FAILED' then 1 else 0 end) as partitions_failed,
        count(distinct concat(database_name, '.', table_name)) as tables_examined
    from purge_results
    where not dry_run
    group by invocation_id

),

requests as (

    select
        request_id,
        min(requested_at) as requested_at,
        count(*) as id_count
    from listed
    group by request_id

),

final as (

    select
        coalesce(requests.request_id, purge_run.invocation_id) as request_id,
        requests.requested_at,
        requests.id_count,
        purge_run.invocation_id,
        purge_run.started_at,
        purge_run.purged_at,
        purge_run.partitions_committed,
        purge_run.partitions_failed,
        purge_run.tables_examined,
        current_timestamp() as recorded_at
    from requests
    cross join purge_run
    {%- if is_incremental() %}
        where purge_run.invocation_id not in (
            select distinct logged.invocation_id from {{ this }} as logged
        )
    {%- endif %}

)

select * from final
