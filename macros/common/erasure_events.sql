-- noqa: disable=LT02
{#
    Contract shared by restore (and anything else that brings purged rows back) and the erasure
    models: such an operation records an event here, and `erasure_requests` marks the requests
    whose purge swapped that table or partition `reintroduced` until the next clean purge.
    Signatures are fixed; the reader is models/erasure/erasure_requests.sql.
#}
{% macro erasure_events_relation() -%}
    {{ compliance.table_ref(target.schema, 'erasure_events') }}
{%- endmacro %}

{#- The columns of erasure_events after recorded_at and invocation_id (all strings). -#}
{% macro erasure_event_columns() -%}
    {{ return(['event', 'database_name', 'table_name', 'partition_spec', 'backup_table', 'location']) }}
{%- endmacro %}

{% macro record_erasure_event(event, database, table, partition_spec, backup_table, location) %}
    {%- for sql in compliance.log_rows_sql(compliance.erasure_events_relation(), compliance.erasure_event_columns(),
        [[event, database, table, partition_spec, backup_table, location]]) -%}
        {% call statement('erasure_event') %}{{ sql }}{% endcall %}
    {%- endfor -%}
{% endmacro %}

{#- The events as a query; an empty one before the first event. -#}
{% macro erasure_events_sql() -%}
    {%- if execute and adapter.get_relation(database=none, schema=target.schema, identifier='erasure_events') is not none -%}
    select * from {{ compliance.erasure_events_relation() }}
    {%- else -%}
    {{ compliance.empty_log_sql(compliance.erasure_event_columns()) }}
    {%- endif -%}
{%- endmacro %}
