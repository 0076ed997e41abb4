{#
    One retention pass: the pre-hook deletes what is past its policy and leaves one row per
    deletion attempt in a temporary view; this model keeps the latest pass, `retention_log`
    appends it and then fails the run when any attempt failed.
    Downstream of the purge, so `dbt run --select purge+` cleans up after purging.
#}
-- depends_on: {{ ref('purge_log') }}
{{ config(
    materialized='table',
    pre_hook="{{ compliance.run_retention(ref('retention_policies')) }}",
) }}

with attempts as (
    select * from retention_attempts
),

final as (
    select
        attempt_id,
        invocation_id,
        attempted_at,
        kind,
        action,
        database_name,
        table_name,
        partition_spec,
        location,
        files_deleted,
        bytes_deleted,
        succeeded,
        failure_reason,
        note,
        dry_run
    from attempts
)

select * from final
