{#
    `dbt run-operation erasure_certificate --args '{request_id: REQ-1}'`: the request's evidence
    (its status and dates, the purge runs, the live tables checked, the pre-purge copies with
    their deletion dates, the byte verification when one ran) written as JSON and Markdown under
    `target/erasure/`, with the project's git revision.  No id is written.  Reads the erasure
    models: build them first (`dbt run --select tag:erasure`).
#}
{% macro erasure_certificate(request_id) %}
    {%- set request_key = request_id | string | trim if request_id is not none else '' -%}
    {%- if not request_key -%}
        {%- do exceptions.raise_compiler_error("erasure_certificate: give the request, e.g. --args '{request_id: REQ-1}'") -%}
    {%- endif -%}
    {%- set requests_relation = compliance.erasure_relation('erasure_requests') -%}
    {%- if requests_relation is none -%}
        {%- do exceptions.raise_compiler_error("erasure_certificate: " ~ target.schema ~ ".erasure_requests does not exist; build it first: dbt run --select tag:erasure") -%}
    {%- endif -%}
    {%- set where = "where request_id = " ~ compliance.sql_string(request_key) -%}
    {%- set found = compliance.query_rows('select * from ' ~ requests_relation ~ ' ' ~ where) -%}
    {%- if not found -%}
        {%- set known = compliance.query_rows('select request_id from ' ~ requests_relation ~ ' order by request_id limit 20') | map(attribute='request_id') | list -%}
        {%- do exceptions.raise_compiler_error("erasure_certificate: no request '" ~ request_key ~ "' in " ~ requests_relation
            ~ " (known: " ~ (known | join(', ') or 'none') ~ "). Requests come from the id table's request_id, or are purge runs' invocation ids; run `dbt run --select tag:erasure` to refresh.") -%}
    {%- endif -%}
    {%- set schema = target.schema -%}
    {%- set runs = compliance.query_rows('select invocation_id, started_at, purged_at, partitions_committed, partitions_failed from '
        ~ compliance.table_ref(schema, 'erasure_request_log') ~ ' ' ~ where ~ ' order by purged_at') -%}
    {%- set tables = compliance.query_rows('select table_id, identifier_field, remaining_rows, checked_at from '
        ~ compliance.table_ref(schema, 'erasure_live_findings') ~ ' ' ~ where ~ ' order by table_id') -%}
    {%- set copies = compliance.query_rows('select invocation_id, database_name, table_name, partition_spec, location, backup_table, rows_purged, purged_at, will_delete_at, schedule_note, deleted_at from '
        ~ compliance.table_ref(schema, 'erasure_copies') ~ ' ' ~ where ~ ' order by purged_at, table_name, partition_spec') -%}
    {%- set verification = [] -%}
    {%- if compliance.erasure_relation('erasure_verification') is not none -%}
        {%- set verification = compliance.query_rows('select * from ' ~ compliance.table_ref(schema, 'erasure_verification') ~ ' ' ~ where
            ~ ' and invocation_id = (select max_by(invocation_id, verified_at) from ' ~ compliance.table_ref(schema, 'erasure_verification') ~ ' ' ~ where ~ ')'
            ~ ' order by table_name, location') -%}
    {%- endif -%}
    {%- set written = adapter.erasure_write_certificate(found[0], runs, tables, copies, verification, flags.TARGET_PATH, flags.PROJECT_DIR) -%}
    {%- do log("Erasure certificate for request " ~ request_key ~ " (status " ~ written.status ~ "): " ~ written.markdown ~ " and " ~ written.json, info=true) -%}
    {{ return(written) }}
{% endmacro %}
