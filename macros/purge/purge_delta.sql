-- noqa: disable=LT02
{#
    The SQL of the purge of a Delta Lake table (python_hooks/purge/delta.py runs exactly what
    these return; a project overrides a dispatched one, `lakehouse__purge_delta_delete_sql`, as
    it does a clause of the Hive purge).  The ids reach Delta only through a join with the id
    table: no id is ever a literal of a statement, so none reaches the log's commitInfo.
#}

{#- The delete: a MERGE with the NULL-free id table, whose matched rows are deleted. -#}
{% macro purge_delta_delete_sql(database, table, identifier_path, id_database, id_table, id_column) -%}
    {{ return(adapter.dispatch('purge_delta_delete_sql', 'compliance')(database, table, identifier_path, id_database, id_table, id_column)) }}
{%- endmacro %}

{% macro default__purge_delta_delete_sql(database, table, identifier_path, id_database, id_table, id_column) -%}
merge into {{ compliance.table_ref(database, table) }} as a
using (
    select distinct {{ compliance.quote_ident(id_column) }}
    from {{ compliance.purge_ids_relation(id_database, id_table, id_column) }}
) as b
on {{ compliance.purge_identifier_expr('a', identifier_path) }} = b.{{ compliance.quote_ident(id_column) }}
when matched then delete
{%- endmacro %}

{#-
    Deletion vectors only mark the deleted rows: REORG ... APPLY (PURGE) rewrites the files that
    hold them, in the touched partitions (`partitions`: [[[column, value], ...], ...]), or in the
    whole table when none is given (it rewrites only files that have deletion vectors).
-#}
{% macro purge_delta_reorg_sql(database, table, partitions) -%}
    {{ return(adapter.dispatch('purge_delta_reorg_sql', 'compliance')(database, table, partitions)) }}
{%- endmacro %}

{% macro default__purge_delta_reorg_sql(database, table, partitions) -%}
reorg table {{ compliance.table_ref(database, table) }}
{%- if partitions | select | list %}
where {% for pairs in partitions %}({{ compliance.partition_predicate(pairs) }}){{ " or " if not loop.last }}{% endfor %}
{%- endif %}
apply (purge)
{%- endmacro %}

{#-
    {db.table: scan} of every Delta table to scan: the Hive tables' scan, read through Delta, whose
    file statistics skip the files the id range rules out.
-#}
{% macro purge_render_delta_scans(plan) -%}
    {%- set scans = {} -%}
    {%- set bounds = compliance.purge_scan_bounds(plan) -%}
    {%- for table in plan.delta if table.error is none -%}
        {%- do scans.update({table.name: compliance.purge_scan_sql(table.database, table.table, table.partition_columns,
            table.identifier.path, plan.ids.database, plan.ids.table, plan.ids.column,
            bounds if table.identifier.type == plan.ids.type else none)}) -%}
    {%- endfor -%}
    {{ return(scans) }}
{%- endmacro %}

{#- {db.table: {delete, reorg}} of every Delta table the purge runs on. -#}
{% macro purge_render_delta(plan) -%}
    {%- set rendered = {} -%}
    {%- for table in plan.delta if table.error is none -%}
        {%- set partitions = [] -%}
        {%- for part in table.todo -%}{%- do partitions.append(part.values) -%}{%- endfor -%}
        {%- do rendered.update({table.name: {
            'delete': compliance.purge_delta_delete_sql(table.database, table.table, table.identifier.path,
                plan.ids.database, plan.ids.table, plan.ids.column),
            'reorg': compliance.purge_delta_reorg_sql(table.database, table.table, partitions),
        }}) -%}
    {%- endfor -%}
    {{ return(rendered) }}
{%- endmacro %}
