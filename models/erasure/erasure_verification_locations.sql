{#- Appended by the verifier (python_hooks/erasure/records.py), in the pre-hook of erasure_verification; the yml defines the table. -#}
{{ config(
    materialized='incremental',
    enabled=compliance.purge_configured(),
    incremental_strategy='append',
    full_refresh=false,
) }}
-- depends_on: {{ ref('erasure_verification') }}

{{ compliance.erasure_table_sql() }}
