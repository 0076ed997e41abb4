{#-
    For every table this run purged (or found clean), how many rows still hold a listed id.
    Must be 0: the post-hook fails `dbt run` and the test fails `dbt build` otherwise.
-#}
{{ config(materialized="table", post_hook="{{ compliance.purge_assert_verified(this) }}") }}

{%- set targets = compliance.purge_verification_targets(ref('purge')) %}

with

checks as (

    {{ compliance.purge_remaining_ids_sql(targets) }}

),

final as (

    select
        concat(database_name, '.', table_name) as table_id,
        database_name,
        table_name,
        identifier_field,
        remaining_rows,
        current_timestamp() as checked_at
    from checks

)

select * from final
