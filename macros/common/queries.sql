-- noqa: disable=LT02
{#- Small helpers for macros that read their own tables and build selects. -#}

{#- The rows of a query as dicts (column name -> value). -#}
{% macro query_rows(sql) -%}
    {%- set table = run_query(sql) -%}
    {%- set rows = [] -%}
    {%- for row in table.rows -%}
        {%- set item = {} -%}
        {%- for column in table.column_names -%}
            {%- do item.update({column: row[column]}) -%}
        {%- endfor -%}
        {%- do rows.append(item) -%}
    {%- endfor -%}
    {{ return(rows) }}
{%- endmacro %}

{#-
    A select of no rows with the given columns ([[name, type], ...]): what a model or macro reads
    in place of a relation that does not exist yet, or of a union of no parts.
-#}
{% macro empty_select_sql(columns) -%}
    select
    {%- for column in columns %}
        cast(null as {{ column[1] }}) as {{ column[0] }}{{ "," if not loop.last }}
    {%- endfor %}
    where 1 = 0
{%- endmacro %}

{#-
    The statements that append `rows` to a log table (create it if needed, then one insert; none
    for no rows).  The table's columns are `recorded_at` (timestamp) and `invocation_id`, stamped
    here, then `columns`, all strings; each row is a list of values in that order.  The stale-data
    records and the erasure events are such tables.
-#}
{% macro log_rows_sql(relation, columns, rows) -%}
    {%- if not rows -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set tuples = [] -%}
    {%- for row in rows -%}
        {%- set values = [] -%}
        {%- for value in row -%}{%- do values.append(compliance.sql_string(value)) -%}{%- endfor -%}
        {%- do tuples.append('(' ~ values | join(', ') ~ ')') -%}
    {%- endfor -%}
    {%- set create -%}
        create table if not exists {{ relation }} (
            recorded_at timestamp,
            invocation_id string,
            {%- for column in columns %}
            {{ column }} string{{ "," if not loop.last }}
            {%- endfor %}
        ) using parquet
    {%- endset -%}
    {%- set insert -%}
        insert into {{ relation }}
        select
            current_timestamp(),
            {{ compliance.sql_string(invocation_id) }},
            {%- for column in columns %}
            cast(logged.{{ column }} as string){{ "," if not loop.last }}
            {%- endfor %}
        from values {{ tuples | join(', ') }} as logged ({{ columns | join(', ') }})
    {%- endset -%}
    {{ return([create, insert]) }}
{%- endmacro %}

{#- A log table of log_rows_sql with no rows (before its first row is logged). -#}
{% macro empty_log_sql(columns) -%}
    {%- set typed = [['recorded_at', 'timestamp'], ['invocation_id', 'string']] -%}
    {%- for column in columns -%}{%- do typed.append([column, 'string']) -%}{%- endfor -%}
    {{ return(compliance.empty_select_sql(typed)) }}
{%- endmacro %}

{#-
    `dbt run-operation warehouse_databases`: the databases of the warehouse's metastore, one line
    each (a quick check that the profile reaches the warehouse; it starts the Spark session).
-#}
{% macro warehouse_databases() -%}
    {%- set found = adapter.catalog_databases() -%}
    {%- do log(found | length ~ " database(s): " ~ (found | join(', ')), info=true) -%}
    {{ return(found) }}
{%- endmacro %}
