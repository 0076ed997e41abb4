{#
    One retention pass: the pre-hook (compliance.run_retention, through adapter.retention_run)
    deletes what is past its policy and registers one row per deletion attempt
    as the temporary view compliance.retention_attempts_view(); this model keeps the latest
    pass, `retention_log` appends it and then fails the run when any attempt failed.  The view's
    columns are python_hooks/retention/attempts.py's ATTEMPT_COLUMNS (the yml documents the same).
    Downstream of the purge, so `dbt run --select purge+` cleans up after purging; enabled with
    the purge (var compliance_id_table) and at the repo root (macros/common/capabilities.sql).
#}
{%- if compliance.purge_configured() %}
-- depends_on: {{ ref('purge_log') }}
{%- endif %}
{{ config(
    materialized='table',
    enabled=compliance.retention_configured(),
    pre_hook="{{ compliance.run_retention(ref('retention_policies')) }}",
) }}

with attempts as (
    select * from {{ compliance.retention_attempts_view() }}
),

final as (
    select * from attempts
)

select * from final
