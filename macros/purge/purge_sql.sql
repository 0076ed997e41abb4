-- noqa: disable=LT02
{#
    The SQL of one purge, clause by clause (Gobblin's five Hive steps).  These macros only build
    text: purge_render.sql composes them into a plan's statements and the engine
    (python_hooks/purge/execution.py) runs exactly what they return, so overriding a dispatched
    one (`lakehouse__purge_rewrite_sql`, ... in the root project) changes what runs.  Names and literals go through compliance.quote_ident /
    compliance.sql_string, so partition values with spaces, colons or quotes are safe.
#}

{#- a.`metadata`.`guestid` from ['metadata', 'guestid'] -#}
{% macro purge_identifier_expr(alias, path) -%}
    {{ return(adapter.dispatch('purge_identifier_expr', 'compliance')(alias, path)) }}
{%- endmacro %}

{% macro default__purge_identifier_expr(alias, path) -%}
    {{ alias }}.{% for part in path %}{{ compliance.quote_ident(part) }}{{ "." if not loop.last }}{% endfor %}
{%- endmacro %}

{#-
    The id table as a NULL-free relation: a NULL id purges nothing.  Every use is a broadcast
    semi- or anti-join, whose result a repeated id does not change (Spark's hash relation for
    them keeps one row per key), so the ids are not de-duplicated first: that aggregation and its
    shuffle cost more than the scan of the ids.
-#}
{% macro purge_ids_relation(id_database, id_table, id_column) -%}
    {{ return(adapter.dispatch('purge_ids_relation', 'compliance')(id_database, id_table, id_column)) }}
{%- endmacro %}

{% macro default__purge_ids_relation(id_database, id_table, id_column) -%}
    (
        select {{ compliance.quote_ident(id_column) }}
        from {{ compliance.table_ref(id_database, id_table) }}
        where {{ compliance.quote_ident(id_column) }} is not null
    )
{%- endmacro %}

{#-
    The one scan per table: per partition, how many rows hold a listed id (a broadcast semi-join,
    so only those rows reach the aggregate).  Partitions without one do not appear: they are
    skipped.  Rows before the purge are read from the rewritten partitions' file footers.
-#}
{% macro purge_scan_sql(database, table, partition_columns, identifier_path, id_database, id_table, id_column, id_bounds=none, source=none) -%}
    {{ return(adapter.dispatch('purge_scan_sql', 'compliance')(database, table, partition_columns, identifier_path, id_database, id_table, id_column, id_bounds, source)) }}
{%- endmacro %}

{#- `source`: what to read instead of the table (a view over the files whose footers admit a listed id, python_hooks/purge/skipping.py). -#}
{% macro default__purge_scan_sql(database, table, partition_columns, identifier_path, id_database, id_table, id_column, id_bounds=none, source=none) -%}
select /*+ BROADCAST(b) */
    {%- for column in partition_columns %}
    cast(a.{{ compliance.quote_ident(column) }} as string) as {{ compliance.quote_ident(column) }},
    {%- endfor %}
    count(*) as rows_purged
from {{ source or compliance.table_ref(database, table) }} as a
left semi join {{ compliance.purge_ids_relation(id_database, id_table, id_column) }} as b
    on {{ compliance.purge_identifier_expr('a', identifier_path) }} = b.{{ compliance.quote_ident(id_column) }}
{%- if id_bounds %}
where {{ compliance.purge_identifier_expr('a', identifier_path) }} between {{ id_bounds.min }} and {{ id_bounds.max }}
{%- endif %}
{%- if partition_columns %}
group by
    {%- for column in partition_columns %}
    a.{{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
{%- endif %}
{%- endmacro %}

{#-
    Step 1: an external staging table like the source, at this run's staging directory, with the
    side-table properties that register it (macros/common/side_tables.sql).
-#}
{% macro purge_staging_table_sql(database, staging_table, table, location, properties={}) -%}
    {{ return(adapter.dispatch('purge_staging_table_sql', 'compliance')(database, staging_table, table, location, properties)) }}
{%- endmacro %}

{% macro default__purge_staging_table_sql(database, staging_table, table, location, properties={}) -%}
create table {{ compliance.table_ref(database, staging_table) }}
like {{ compliance.table_ref(database, table) }}
{{ compliance.purge_location_clause(location) }}
{{ compliance.tblproperties_sql(properties) }}
{%- endmacro %}

{% macro purge_location_clause(location) -%}
location {{ compliance.sql_string(location) }}
{%- endmacro %}

{#- Step 2: the partition without the listed ids, written into the staging table. -#}
{% macro purge_rewrite_sql(database, staging_table, table, data_columns, partition_pairs, identifier_path, id_database, id_table, id_column) -%}
    {{ return(adapter.dispatch('purge_rewrite_sql', 'compliance')(database, staging_table, table, data_columns, partition_pairs, identifier_path, id_database, id_table, id_column)) }}
{%- endmacro %}

{% macro default__purge_rewrite_sql(database, staging_table, table, data_columns, partition_pairs, identifier_path, id_database, id_table, id_column) -%}
insert overwrite table {{ compliance.table_ref(database, staging_table) }}
{%- if partition_pairs %}
partition {{ compliance.partition_clause(partition_pairs) }}
{%- endif %}
select /*+ BROADCAST(b) */
    {%- for column in data_columns %}
    a.{{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
from {{ compliance.table_ref(database, table) }} as a
left anti join {{ compliance.purge_ids_relation(id_database, id_table, id_column) }} as b
    on {{ compliance.purge_identifier_expr('a', identifier_path) }} = b.{{ compliance.quote_ident(id_column) }}
{%- if partition_pairs %}
where {{ compliance.partition_predicate(partition_pairs, 'a') }}
{%- endif %}
{%- endmacro %}

{#- Step 3: the backup table, like the source; external, so dropping it never deletes data. -#}
{% macro purge_backup_table_sql(database, backup_table, table, location, properties={}) -%}
    {{ return(adapter.dispatch('purge_backup_table_sql', 'compliance')(database, backup_table, table, location, properties)) }}
{%- endmacro %}

{% macro default__purge_backup_table_sql(database, backup_table, table, location, properties={}) -%}
create table if not exists {{ compliance.table_ref(database, backup_table) }}
like {{ compliance.table_ref(database, table) }}
{{ compliance.purge_location_clause(location) }}
{{ compliance.tblproperties_sql(properties) }}
{%- endmacro %}

{#- Step 3 (partitioned): the backup's partition points at the old data, which is not moved. -#}
{% macro purge_backup_partition_sql(database, backup_table, partition_pairs, location) -%}
    {{ return(adapter.dispatch('purge_backup_partition_sql', 'compliance')(database, backup_table, partition_pairs, location)) }}
{%- endmacro %}

{% macro default__purge_backup_partition_sql(database, backup_table, partition_pairs, location) -%}
    {{ return(compliance.add_partition_sql(database, backup_table, partition_pairs, location)) }}
{%- endmacro %}

{#- Step 4: point the partition (or the unpartitioned table) at the purged data. -#}
{% macro purge_swap_location_sql(database, table, partition_pairs, location) -%}
    {{ return(adapter.dispatch('purge_swap_location_sql', 'compliance')(database, table, partition_pairs, location)) }}
{%- endmacro %}

{% macro default__purge_swap_location_sql(database, table, partition_pairs, location) -%}
    {{ return(compliance.set_location_sql(database, table, partition_pairs, location)) }}
{%- endmacro %}

{#- Step 5: drop the staging table (external: metadata only). -#}
{% macro purge_drop_table_sql(database, table) -%}
drop table if exists {{ compliance.table_ref(database, table) }}
{%- endmacro %}

{% macro purge_drop_backup_partition_sql(database, backup_table, partition_pairs) -%}
    {{ return(compliance.drop_partition_sql(database, backup_table, partition_pairs)) }}
{%- endmacro %}

{#-
    Step 2 for several partitions at once: one dynamic-partition insert (one Spark job) instead
    of one per partition; the purge falls back to purge_rewrite_sql per partition if it fails.
-#}
{% macro purge_rewrite_many_sql(database, staging_table, table, data_columns, partition_columns, partitions, identifier_path, id_database, id_table, id_column, source=none) -%}
    {{ return(adapter.dispatch('purge_rewrite_many_sql', 'compliance')(database, staging_table, table, data_columns, partition_columns, partitions, identifier_path, id_database, id_table, id_column, source)) }}
{%- endmacro %}

{#- `source`: what to read instead of the table (the file-level rewrite's view over the files that may hold ids). -#}
{% macro default__purge_rewrite_many_sql(database, staging_table, table, data_columns, partition_columns, partitions, identifier_path, id_database, id_table, id_column, source=none) -%}
{#- the staging table is new and empty: a plain insert, without dynamic overwrite's extra renames -#}
insert into table {{ compliance.table_ref(database, staging_table) }}
partition (
    {%- for column in partition_columns -%}
        {{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}
    {%- endfor -%}
)
select /*+ BROADCAST(b) */
    {%- for column in data_columns + partition_columns %}
    a.{{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
from {{ source or compliance.table_ref(database, table) }} as a
left anti join {{ compliance.purge_ids_relation(id_database, id_table, id_column) }} as b
    on {{ compliance.purge_identifier_expr('a', identifier_path) }} = b.{{ compliance.quote_ident(id_column) }}
where
    {%- for pairs in partitions %}
    ({{ compliance.partition_predicate(pairs, 'a') }}){{ " or" if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{#- Step 3 for several partitions at once: one ALTER TABLE ... ADD with a location per partition. -#}
{% macro purge_backup_partitions_sql(database, backup_table, partitions) -%}
    {{ return(compliance.add_partitions_sql(database, backup_table, partitions)) }}
{%- endmacro %}

{#-
    Statements run just before a partition's commit check, between its rewrite and its swap:
    none by default.  An extension point for a step of the project's own there (a cache of another
    engine refreshed, an external log written); returns a list of statements.  A statement that
    fails stops that table alone: nothing of it is swapped, and the next run purges it.
-#}
{% macro purge_before_swap_sql(database, table, partition_pairs, old_location) -%}
    {{ return(adapter.dispatch('purge_before_swap_sql', 'compliance')(database, table, partition_pairs, old_location)) }}
{%- endmacro %}

{% macro default__purge_before_swap_sql(database, table, partition_pairs, old_location) -%}
    {{ return([]) }}
{%- endmacro %}
