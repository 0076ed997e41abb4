-- noqa: disable=LT02
{#
    The purge node's result rows: one per table and partition per run.  The purge node writes
    them to its own relation (`purge`); `purge_log` appends them.  Never the ids themselves.
#}
{% macro purge_result_columns() -%}
    {{ return([
        ('purge_log_id', 'string'),
        ('invocation_id', 'string'),
        ('purge_ts', 'bigint'),
        ('database_name', 'string'),
        ('table_name', 'string'),
        ('partition_spec', 'string'),
        ('identifier_field', 'string'),
        ('state', 'string'),
        ('reason', 'string'),
        ('old_location', 'string'),
        ('new_location', 'string'),
        ('backup_table', 'string'),
        ('rows_before', 'bigint'),
        ('rows_after', 'bigint'),
        ('rows_purged', 'bigint'),
        ('dry_run', 'boolean'),
        ('started_at', 'timestamp'),
        ('ended_at', 'timestamp'),
    ]) }}
{%- endmacro %}

{% macro purge_now() -%}
    {{ return(modules.datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M:%S.%f')) }}
{%- endmacro %}

{#- A result row with every column present; `fields` overrides the defaults. -#}
{% macro purge_result(ctx, database, table, fields) -%}
    {%- set row = {
        'invocation_id': invocation_id,
        'purge_ts': ctx.ts,
        'database_name': database,
        'table_name': table,
        'partition_spec': none,
        'identifier_field': none,
        'state': none,
        'reason': none,
        'old_location': none,
        'new_location': none,
        'backup_table': none,
        'rows_before': none,
        'rows_after': none,
        'rows_purged': none,
        'dry_run': ctx.dry_run,
        'started_at': compliance.purge_now(),
        'ended_at': none,
    } -%}
    {%- do row.update(fields) -%}
    {%- if row.ended_at is none -%}{%- do row.update({'ended_at': compliance.purge_now()}) -%}{%- endif -%}
    {%- do row.update({'purge_log_id': local_md5(invocation_id ~ '|' ~ database ~ '|' ~ table ~ '|' ~ (row.partition_spec or ''))}) -%}
    {{ return(row) }}
{%- endmacro %}

{% macro purge_result_literal(value, data_type) -%}
    {%- if value is none -%}
        cast(null as {{ data_type }})
    {%- elif data_type == 'boolean' -%}
        {{ 'true' if value else 'false' }}
    {%- elif data_type == 'bigint' -%}
        cast({{ value | int }} as bigint)
    {%- else -%}
        cast({{ compliance.sql_string(value) }} as {{ data_type }})
    {%- endif -%}
{%- endmacro %}

{% macro purge_results_create_sql(relation) -%}
create table {{ relation }} (
    {%- for column in compliance.purge_result_columns() %}
    {{ column[0] }} {{ column[1] }}{{ "," if not loop.last }}
    {%- endfor %}
) using parquet
{%- endmacro %}

{#- `(v1, v2, ...), (...)`: the rows as typed literals, in the relation's column order. -#}
{% macro purge_results_values_sql(rows) -%}
{%- for row in rows %}
    (
        {%- for column in compliance.purge_result_columns() -%}
            {{ compliance.purge_result_literal(row[column[0]], column[1]) }}{{ ", " if not loop.last }}
        {%- endfor -%}
    ){{ "," if not loop.last }}
{%- endfor %}
{%- endmacro %}

{% macro purge_results_insert_sql(relation, rows) -%}
insert into {{ relation }} values
{{- compliance.purge_results_values_sql(rows) }}
{%- endmacro %}

{#- The relation created from the first rows in one statement (create table ... as select). -#}
{% macro purge_results_ctas_sql(relation, rows) -%}
create table {{ relation }} using parquet as
select * from values
{{- compliance.purge_results_values_sql(rows) }}
as results (
    {%- for column in compliance.purge_result_columns() -%}
        {{ column[0] }}{{ ", " if not loop.last }}
    {%- endfor -%}
)
{%- endmacro %}

{#-
    Replace the purge node's relation with this run's rows: the first 500 in the statement that
    creates it, then in batches of 500 (a big table has many partitions).
-#}
{% macro purge_write_results(relation, rows) %}
    {% call statement('purge_results_drop') %}drop table if exists {{ relation }}{% endcall %}
    {% if not rows %}
        {% call statement('purge_results_create') %}{{ compliance.purge_results_create_sql(relation) }}{% endcall %}
    {% endif %}
    {% for batch in rows | batch(500) %}
        {% if loop.first %}
            {% call statement('purge_results_create') %}{{ compliance.purge_results_ctas_sql(relation, batch) }}{% endcall %}
        {% else %}
            {% call statement('purge_results_insert') %}{{ compliance.purge_results_insert_sql(relation, batch) }}{% endcall %}
        {% endif %}
    {% endfor %}
{% endmacro %}

{#-
    A failed purge node stops dbt from running purge_log, so the failed run's rows are appended
    here, now; purge_log skips invocation ids it already holds.
-#}
{% macro purge_append_to_log(results_relation) %}
    {% set log_relation = adapter.get_relation(database=results_relation.database, schema=results_relation.schema, identifier='purge_log') %}
    {% if log_relation is none %}
        {% set log_relation = api.Relation.create(schema=results_relation.schema, identifier='purge_log', type='table') %}
        {% call statement('purge_log_create') %}
            create table {{ log_relation }} using parquet as select * from {{ results_relation }}
        {% endcall %}
    {% else %}
        {% call statement('purge_log_append') %}
            insert into {{ log_relation }}
            select * from {{ results_relation }}
            where invocation_id = {{ compliance.sql_string(invocation_id) }}
        {% endcall %}
    {% endif %}
{% endmacro %}
