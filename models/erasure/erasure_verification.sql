{#
    Verification of bytes on a schedule: the pre-hook (compliance.erasure_verification_prepare)
    verifies the pending erasure requests (var `erasure_request_id`, or every request not yet
    found fully erased) and leaves one row per location in a temporary view; this model appends
    them.  Rows still holding ids never fail the run: a backup holds them until retention.  The
    same rows as `dbt run-operation verify_erasure`; see docs/erasure.md.
#}
{{ config(
    materialized='incremental',
    enabled=compliance.purge_configured(),
    incremental_strategy='append',
    pre_hook="{{ compliance.erasure_verification_prepare() }}",
) }}

with

verified as (

    select * from {{ compliance.erasure_verification_view() }}

),

final as (

    select
        verification_id,
        invocation_id,
        request_id,
        verified_at,
        database_name,
        table_name,
        location_kind,
        location,
        referenced_by,
        location_exists,
        files_total,
        files_read,
        files_skipped,
        rows_holding_ids,
        error
    from verified

)

select * from final
