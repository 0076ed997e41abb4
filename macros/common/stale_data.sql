{#
    Contract shared by purge, restore and compaction: whenever this project swaps a location, the
    old location is recorded here.  The stale-data cleaner (retention) deletes it after
    `stale_retention_days`, once no table or partition in the metastore references it.
    Signatures are fixed; the implementation belongs to retention.
#}
{% macro stale_data_relation() -%}
    {{ compliance.table_ref(target.schema, 'stale_data_records') }}
{%- endmacro %}

{% macro record_stale_location(database, table, partition_spec, location, reason) %}
    {% do compliance.record_stale_locations([{
        'database': database,
        'table': table,
        'partition_spec': partition_spec,
        'location': location,
        'reason': reason,
    }]) %}
{% endmacro %}

{#-
    The batched form: `rows` is a list of {database, table, partition_spec, location, reason};
    one insert for all of them.  The purge swaps many partitions of a table at once.
-#}
{% macro record_stale_locations(rows) %}
    {%- for sql in compliance.stale_records_sql(rows) -%}
        {% call statement('record_stale_locations') %}{{ sql }}{% endcall %}
    {%- endfor -%}
{% endmacro %}

{#- A stale record's columns after `recorded_at` and `invocation_id` (log_rows_sql's layout), and their values per row. -#}
{% macro stale_record_columns() -%}
    {{ return(['database_name', 'table_name', 'partition_spec', 'location', 'reason']) }}
{%- endmacro %}

{% macro stale_record_values(rows) -%}
    {%- set values = [] -%}
    {%- for row in rows -%}
        {%- do values.append([row.database, row.table, row.partition_spec, row.location, row.reason]) -%}
    {%- endfor -%}
    {{ return(values) }}
{%- endmacro %}

{#-
    The statements that record `rows` (create the table if needed, then one insert): none for
    no rows.  For callers that run them themselves (the purge runs them in the background).
-#}
{% macro stale_records_sql(rows) -%}
    {{ return(compliance.log_rows_sql(compliance.stale_data_relation(), compliance.stale_record_columns(), compliance.stale_record_values(rows))) }}
{%- endmacro %}

{#-
    The same rows for catalog.background's parquet append (no Spark job): {database, table,
    columns, invocation_id, rows}; the statements of stale_records_sql write them where it cannot.
-#}
{% macro stale_records_append(rows) -%}
    {{ return({'database': target.schema, 'table': 'stale_data_records', 'invocation_id': invocation_id,
        'columns': ['recorded_at', 'invocation_id'] + compliance.stale_record_columns(), 'rows': compliance.stale_record_values(rows)}) }}
{%- endmacro %}

{#-
    The adapter's snapshot materialization (dbt_lakehouse) swaps a snapshot table's location and
    hands the old directory to `location_swapped`; this project records it like its own swaps.
    The adapter dispatches without a namespace: this macro serves the snapshots of this package
    (and of a root project that installs it, through a root macro that calls this one).
-#}
{% macro lakehouse__location_swapped(database, table, old_location, reason) %}
    {% do compliance.record_stale_location(database, table, none, old_location, reason) %}
{% endmacro %}

{#-
    Before the snapshot materialization writes a new version's directory: record it, and the
    directory it will replace, so that a run killed anywhere between the write and the record of
    the swap leaves recorded directories, never an orphan.  A record whose location a table
    references is kept and never acted on: retention protects the new directory once the swap
    makes it live, and the old one until the swap moves the table away from it.  The fresh record
    `location_swapped` adds after the swap gives readers their grace period.
-#}
{% macro lakehouse__location_swap_planned(database, table, old_location, new_location, reason) %}
    {% do compliance.record_stale_locations([
        {'database': database, 'table': table, 'partition_spec': none, 'location': new_location,
         'reason': reason ~ ': new version, recorded before it is written (deleted only if no swap makes it live)'},
        {'database': database, 'table': table, 'partition_spec': none, 'location': old_location,
         'reason': reason ~ ': the version it replaces, recorded before the swap (kept while the table points at it)'},
    ]) %}
{% endmacro %}
