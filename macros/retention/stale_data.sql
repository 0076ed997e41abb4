{#
    Contract shared by purge, restore and compaction: whenever this project swaps a location, the
    old location is recorded here.  The stale-data cleaner (retention) deletes it after
    `stale_retention_days`, once no table or partition in the metastore references it.
    Signature is fixed; the implementation belongs to retention.
#}
{% macro stale_data_relation() -%}
    {{ compliance.table_ref(target.schema, 'stale_data_records') }}
{%- endmacro %}

{% macro record_stale_location(database, table, partition_spec, location, reason) %}
    {% call statement('create_stale_data_records') %}
        create table if not exists {{ compliance.stale_data_relation() }} (
            recorded_at timestamp,
            invocation_id string,
            database_name string,
            table_name string,
            partition_spec string,
            location string,
            reason string
        ) using parquet
    {% endcall %}
    {% call statement('record_stale_location') %}
        insert into {{ compliance.stale_data_relation() }}
        select
            current_timestamp(),
            {{ compliance.sql_string(invocation_id) }},
            {{ compliance.sql_string(database) }},
            {{ compliance.sql_string(table) }},
            {{ compliance.sql_string(partition_spec) }},
            {{ compliance.sql_string(location) }},
            {{ compliance.sql_string(reason) }}
    {% endcall %}
{% endmacro %}
