-- noqa: disable=LT02
{#
    Partition DDL, written once for every capability: the purge's backups and swaps, the
    restore's trash and swap.  `pairs` is [[column, value], ...] with unescaped values (empty for
    an unpartitioned table, where that makes sense); locations are fully qualified.
#}

{#- One ALTER TABLE ... ADD for many partitions: `partitions` is [[pairs, location], ...]. -#}
{% macro add_partitions_sql(database, table, partitions) -%}
alter table {{ compliance.table_ref(database, table) }}
add if not exists
{%- for part in partitions %}
    partition {{ compliance.partition_clause(part[0]) }} location {{ compliance.sql_string(part[1]) }}
{%- endfor %}
{%- endmacro %}

{% macro add_partition_sql(database, table, pairs, location) -%}
    {{ return(compliance.add_partitions_sql(database, table, [[pairs, location]])) }}
{%- endmacro %}

{#- Point a partition (or, with no pairs, the whole table) at another directory. -#}
{% macro set_location_sql(database, table, pairs, location) -%}
alter table {{ compliance.table_ref(database, table) }}
{%- if pairs %}
partition {{ compliance.partition_clause(pairs) }}
{%- endif %}
set location {{ compliance.sql_string(location) }}
{%- endmacro %}

{% macro drop_partition_sql(database, table, pairs) -%}
alter table {{ compliance.table_ref(database, table) }}
drop if exists partition {{ compliance.partition_clause(pairs) }}
{%- endmacro %}
