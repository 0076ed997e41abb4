-- noqa: disable=LT02
{#
    The SQL of the purge of a Delta Lake table (python_hooks/purge/delta.py runs exactly what
    these return; a project overrides a dispatched one, `lakehouse__purge_delta_delete_sql`, as
    it does a clause of the Hive purge).  The ids reach Delta only through a join with the id
    table: no id is ever a literal of a statement, so none reaches the log's commitInfo.
#}

{#-
    The delete: a MERGE with the NULL-free id table, whose matched rows are deleted (an Iceberg table named with its `catalog`).  `partitions`
    (the scan's touched partitions, [[[column, value], ...], ...]) narrows the MERGE to them, so
    Delta joins only their files; none (or empty) joins the whole table.  Partition values reach
    the log's commitInfo as the MERGE's predicate: the render passes none when the identifier is
    a partition column.  `id_bounds` ({min, max}: the smallest and largest listed id) adds the id
    range, which an Iceberg table's file statistics use to skip the files that cannot hold a
    listed id (every listed id is in it: the rows matched are the same).  The render passes it for
    Iceberg tables only: Delta's log would keep it, two ids, as the MERGE's predicate; Iceberg's
    metadata keeps no predicate, and the purge's log line shows the range masked.
-#}
{% macro purge_delta_delete_sql(database, table, identifier_path, id_database, id_table, id_column, partitions=none, catalog=none, id_bounds=none) -%}
    {{ return(adapter.dispatch('purge_delta_delete_sql', 'compliance')(database, table, identifier_path, id_database, id_table, id_column, partitions, catalog, id_bounds)) }}
{%- endmacro %}

{% macro default__purge_delta_delete_sql(database, table, identifier_path, id_database, id_table, id_column, partitions=none, catalog=none, id_bounds=none) -%}
merge into {{ compliance.table_ref(database, table, catalog) }} as a
using (
    select distinct {{ compliance.quote_ident(id_column) }}
    from {{ compliance.purge_ids_relation(id_database, id_table, id_column) }}
) as b
on {{ compliance.purge_identifier_expr('a', identifier_path) }} = b.{{ compliance.quote_ident(id_column) }}
{%- if id_bounds %}
    and {{ compliance.purge_identifier_expr('a', identifier_path) }} between {{ id_bounds.min }} and {{ id_bounds.max }}
{%- endif %}
{%- if partitions | select | list %}
    and ({% for pairs in partitions %}({{ compliance.partition_predicate(pairs, 'a') }}){{ " or " if not loop.last }}{% endfor %})
{%- endif %}
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
            bounds if table.identifier.type == plan.ids.type else none,
            compliance.table_ref(table.database, table.table, table.catalog) if table.catalog else none)}) -%}
    {%- endfor -%}
    {{ return(scans) }}
{%- endmacro %}

{#- {db.table: {delete, reorg}} of every Delta table the purge runs on, {delete, rewrite_data, rewrite_data_dangling, rewrite_deletes, rewrite_manifests} of every Iceberg one. -#}
{% macro purge_render_delta(plan) -%}
    {%- set rendered = {} -%}
    {%- set bounds = compliance.purge_scan_bounds(plan) -%}
    {%- for table in plan.delta if table.error is none -%}
        {%- set partitions = [] -%}
        {%- for part in table.todo -%}{%- do partitions.append(part.values) -%}{%- endfor -%}
        {#- partition values, which the log keeps as the statements' predicates, are no ids unless
            the identifier is a partition column: then both statements cover the whole table -#}
        {%- set narrowed = [] if table.identifier.path[0] | lower in table.partition_columns | map('lower') | list else partitions -%}
        {#- the id range, where the identifier has the id column's own type, for Iceberg only (see purge_delta_delete_sql) -#}
        {%- set id_bounds = bounds if table.table_format == 'iceberg' and table.identifier.type == plan.ids.type else none -%}
        {%- set delete = compliance.purge_delta_delete_sql(table.database, table.table, table.identifier.path,
            plan.ids.database, plan.ids.table, plan.ids.column, narrowed, table.catalog, id_bounds) -%}
        {%- if table.table_format == 'iceberg' -%}
        {#- delete files outside the touched partitions (a run stopped before its rewrites): the rewrites cover the whole table -#}
        {%- set rewritten = [] if table.rewrite_whole_table else narrowed -%}
        {%- do rendered.update({table.name: {
            'delete': delete,
            'rewrite_data': compliance.purge_iceberg_rewrite_data_sql(table.catalog, table.database, table.table, rewritten),
            'rewrite_data_dangling': compliance.purge_iceberg_rewrite_data_sql(table.catalog, table.database, table.table, rewritten, true),
            'rewrite_deletes': compliance.purge_iceberg_rewrite_deletes_sql(table.catalog, table.database, table.table, rewritten),
            'rewrite_manifests': compliance.purge_iceberg_rewrite_manifests_sql(table.catalog, table.database, table.table),
        }}) -%}
        {%- else -%}
        {%- do rendered.update({table.name: {
            'delete': delete,
            'reorg': compliance.purge_delta_reorg_sql(table.database, table.table, narrowed),
        }}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(rendered) }}
{%- endmacro %}
