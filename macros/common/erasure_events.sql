{#
    Contract shared by restore (and anything else that brings purged rows back) and the erasure
    models: such an operation records an event here, and `erasure_requests` marks the requests
    whose purge swapped that table or partition `reintroduced` until the next clean purge.
    Signatures are fixed; the reader is models/erasure/erasure_requests.sql.
#}
{% macro erasure_events_relation() -%}
    {{ compliance.table_ref(target.schema, 'erasure_events') }}
{%- endmacro %}

{% macro record_erasure_event(event, database, table, partition_spec, backup_table, location) %}
    {%- set create -%}
        create table if not exists {{ compliance.erasure_events_relation() }} (
            recorded_at timestamp,
            invocation_id string,
            event string,
            database_name string,
            table_name string,
            partition_spec string,
            backup_table string,
            location string
        ) using parquet
    {%- endset -%}
    {%- set insert -%}
        insert into {{ compliance.erasure_events_relation() }}
        select
            current_timestamp(),
            {{ compliance.sql_string(invocation_id) }},
            {{ compliance.sql_string(event) }},
            {{ compliance.sql_string(database) }},
            {{ compliance.sql_string(table) }},
            {{ compliance.sql_string(partition_spec) }},
            {{ compliance.sql_string(backup_table) }},
            {{ compliance.sql_string(location) }}
    {%- endset -%}
    {% call statement('erasure_event_table') %}{{ create }}{% endcall %}
    {% call statement('erasure_event') %}{{ insert }}{% endcall %}
{% endmacro %}

{#- The events as a query; an empty one before the first event. -#}
{% macro erasure_events_sql() -%}
    {%- if execute and adapter.get_relation(database=none, schema=target.schema, identifier='erasure_events') is not none -%}
    select * from {{ compliance.erasure_events_relation() }}
    {%- else -%}
    select
        cast(null as timestamp) as recorded_at,
        cast(null as string) as invocation_id,
        cast(null as string) as event,
        cast(null as string) as database_name,
        cast(null as string) as table_name,
        cast(null as string) as partition_spec,
        cast(null as string) as backup_table,
        cast(null as string) as location
    where 1 = 0
    {%- endif -%}
{%- endmacro %}
