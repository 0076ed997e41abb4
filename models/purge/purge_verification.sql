{#-
    For every table this run purged (or found clean), how many rows still hold a listed id.
    Must be 0: the post-hook fails `dbt run` and the test fails `dbt build` otherwise.
-#}
{{ config(materialized="table", post_hook="{{ compliance.purge_assert_verified(this) }}") }}

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
        current_timestamp() as checked_at
    from checks

)

select * from final
