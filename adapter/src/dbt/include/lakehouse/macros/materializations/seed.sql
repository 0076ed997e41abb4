{#
    A seed's rows, inserted in batches with their values bound as parameters: dbt-spark's
    `spark__load_csv_rows`, with each column's type worked out once.  dbt-spark asks
    `adapter.convert_type` for every cell, and for a number column that aggregates the whole
    column (its largest precision): the cost grows with the square of the rows, and a seed of
    20,000 numbers took 18 minutes to load instead of seconds.  The cast is the column's type
    (`column_types` first, then dbt's inference), as dbt-spark's `create_csv_table` makes it.
#}
{% macro lakehouse__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set casts = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- set type = column_override.get(col_name) or adapter.convert_type(agate_table, loop.index0) -%}
        {%- do casts.append('cast(' ~ get_binding_char() ~ ' as ' ~ type ~ ')') -%}
    {%- endfor -%}
    {%- set row_values = '(' ~ (casts | join(', ')) ~ ')' -%}

    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set bindings = [] -%}
        {%- set rows_sql = [] -%}
        {%- for row in chunk -%}
            {%- do bindings.extend(row) -%}
            {%- do rows_sql.append(row_values) -%}
        {%- endfor -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {{ rows_sql | join(',\n') }}
        {%- endset -%}
        {%- do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) -%}
        {%- if loop.first -%}
            {%- do statements.append(sql) -%}
        {%- endif -%}
    {%- endfor -%}

    {#- the first statement, for the compiled files -#}
    {{ return(statements[0]) }}
{% endmacro %}
