{#
    The erasure verifier on a schedule (docs/erasure.md, "The verifier"): the pre-hook reads the
    bytes of every onboarded table and every copy for the requests the id table lists (or var
    `erasure_request_id`), appends the run's rows to erasure_verification_runs, _locations and
    _findings (python_hooks/erasure/records.py), and leaves one row per request in a temporary
    view, which this model appends.  Rows holding ids never fail the run.
#}
{{ config(
    materialized='incremental',
    enabled=compliance.purge_configured(),
    incremental_strategy='append',
    full_refresh=false,
    pre_hook="{{ compliance.erasure_verification_prepare() }}",
) }}

{{ compliance.erasure_table_sql(compliance.erasure_verification_view()) }}
