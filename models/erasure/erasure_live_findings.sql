{#-
    The live check behind each request's status: for every table the last purge examined and
    every request, how many live rows hold one of the request's ids.  0 everywhere after a clean
    purge; more after a restore, a recompaction or a rebuild that brought purged rows back (the
    request is then `reintroduced` until the next purge).  Counts only, never ids.  Run in the
    same invocation as the purge (`purge+`), it reads again only what that purge's scan did not
    find clean (erasure_live_findings_sql); run on its own, every row of every table.
-#}
{{ config(materialized='table', enabled=compliance.purge_configured()) }}
-- depends_on: {{ source('compliance', 'id_table') }}

{%- set targets = compliance.erasure_live_targets(ref('purge')) %}

with

checked as (

    {{ compliance.purge_targets_sql(targets) }}

),

findings as (

    {{ compliance.erasure_live_findings_sql(targets) }}

),

requests as (

    select distinct request_id from {{ ref('erasure_request_log') }}

),

final as (

    select
        requests.request_id,
        concat(checked.database_name, '.', checked.table_name) as table_id,
        checked.database_name,
        checked.table_name,
        checked.identifier_field,
        coalesce(sum(findings.remaining_rows), 0) as remaining_rows,
        current_timestamp() as checked_at
    from requests
    cross join checked
    left join findings
        on
            checked.database_name = findings.database_name
            and checked.table_name = findings.table_name
            -- a null request_id: the id table has none, every request holds every id
            and (findings.request_id is null or requests.request_id = findings.request_id)
    group by
        requests.request_id,
        checked.database_name,
        checked.table_name,
        checked.identifier_field

)

select * from final
