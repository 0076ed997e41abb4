{{ config(materialized='incremental', incremental_strategy='append', enabled=compliance.purge_configured()) }}

with

run_results as (

    select * from {{ ref('purge') }}

),

final as (

    select run_results.*
    from run_results
    {%- if is_incremental() %}
        where run_results.invocation_id not in (
            select distinct logged.invocation_id from {{ this }} as logged
        )
    {%- endif %}

)

select * from final
