{#
    Every deletion attempt of every retention pass (the audit log): appends the pass that the
    `retention` model just made, then fails the run if any attempt of it failed (so the failure is
    logged first).  Never rebuilt by --full-refresh.
#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    full_refresh=false,
    enabled=compliance.retention_configured(),
    post_hook="{{ compliance.raise_on_retention_failures() }}",
) }}

with retention as (
    select * from {{ ref('retention') }}
),

final as (
    select * from retention
    {% if is_incremental() -%}
        where invocation_id not in (select distinct logged.invocation_id from {{ this }} as logged)
    {%- endif %}
)

select * from final
