-- noqa: disable=LT02
{#
    The purge node's result rows: one per table and partition per run.  The purge node writes
    them to its own relation (`purge`); `purge_log` appends them.  Never the ids themselves.
    Their columns are defined once, in python_hooks/purge/results.py.
#}
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

{#-
    Replace the purge node's relation with this run's rows; {ok, error}.  It is a small `using json` table
    whose one file python_hooks/purge/results.py replaces through the Hadoop FileSystem: no Spark
    job, about 40 ms instead of 150-400 ms for a create-as-select of a few rows.  A relation
    left by an older version (parquet, other columns) is recreated.
-#}
{% macro purge_write_results(relation, rows) %}
    {%- do log('purge step write results: ' ~ rows | length ~ ' row(s) into ' ~ relation, info=false) -%}
    {%- set written = compliance.purge_replace_results(relation.schema, relation.identifier, rows) -%}
    {{ return(written) }}
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
