{{ config(materialized='incremental', incremental_strategy='append') }}

with

run_results as (

    select * from {{ ref('purge') }}

),

{% if is_incremental() %}
logged as (

    select distinct invocation_id from {{ this }}

),
{% endif %}

final as (

    select run_results.*
    from run_results
    {%- if is_incremental() %}
    left anti join logged
        on run_results.invocation_id = logged.invocation_id
    {%- endif %}

)

select * from final
