{{ config(materialized='incremental', incremental_strategy='append', enabled=compliance.purge_configured()) }}

with

run_results as (

    select * from {{ ref('purge') }}

),

final as (

    select run_results.*
    from run_results
    {%- if is_incremental() %}
        -- the purge node appends its rows itself (so that what it committed is recorded even when
        -- this model never runs): only rows it could not append arrive here
        where run_results.purge_log_id not in (
            select logged.purge_log_id from {{ this }} as logged
        )
    {%- endif %}

)

select * from final
