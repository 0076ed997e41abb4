{#-
    For every table this run purged (or found clean), how many rows still hold a listed id in
    what the purge wrote: its rewritten partitions are read again, the partitions its scan found
    clean are not (that scan is their evidence).  Must be 0: the post-hook fails `dbt run` and
    the test fails `dbt build` otherwise.  The tables of var `purge_depends_on` are its inputs in
    the lineage graph, as they are the purge's.
-#}
{{ config(
    materialized="table",
    enabled=compliance.purge_configured(),
    post_hook="{{ compliance.purge_assert_verified(this) }}",
) }}
{%- for name in compliance.purge_depends_on() %}
-- depends_on: {{ compliance.project_node(name) }}
{%- endfor %}

with

checks as (

    {{ purge_verification_checks_sql(ref('purge')) }}

),

final as (

    select
        concat(database_name, '.', table_name) as table_id,
        database_name,
        table_name,
        identifier_field,
        remaining_rows,
        checked,
        partitions_checked,
        current_timestamp() as checked_at
    from checks

)

select * from final
