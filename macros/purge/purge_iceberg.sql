-- noqa: disable=LT02
{#
    The rewrites that follow the delete of an Apache Iceberg table (python_hooks/purge/iceberg.py
    runs exactly what these return, when the partitions they cover have delete files).  A
    merge-on-read delete writes delete files and leaves the rows in the data files' bytes: these
    rewrite every data file a delete file applies to, then the position delete files, so that no
    live file keeps a deleted row.  `partitions`: the touched partitions ([[[column, value], ...],
    ...]), or none (or empty) for the whole table.
#}

{#- The `where` argument of Iceberg's procedures over the touched partitions, or '' for the whole table. -#}
{% macro purge_iceberg_where(partitions) -%}
    {%- set alternatives = [] -%}
    {%- for pairs in partitions or [] if pairs -%}
        {%- do alternatives.append('(' ~ compliance.partition_predicate(pairs) ~ ')') -%}
    {%- endfor -%}
    {%- if alternatives -%}, where => {{ compliance.sql_string(alternatives | join(' or ')) }}{%- endif -%}
{%- endmacro %}

{#-
    rewrite_data_files with a delete-file threshold of 1: a data file any delete file applies to is
    rewritten without its deleted rows, whatever its size (no file is too small to leave alone:
    min-file-size-bytes 0).  With `dangling` (the partitions have equality delete files, which
    the rewrite of the position deletes does not touch), `remove-dangling-deletes` too: an equality
    delete file applies to files of older sequence numbers only, so once the files it applied to
    are rewritten it is dangling, and it goes (it holds the ids it deletes).
-#}
{% macro purge_iceberg_rewrite_data_sql(catalog, database, table, partitions, dangling=false) -%}
    {{ return(adapter.dispatch('purge_iceberg_rewrite_data_sql', 'compliance')(catalog, database, table, partitions, dangling)) }}
{%- endmacro %}

{% macro default__purge_iceberg_rewrite_data_sql(catalog, database, table, partitions, dangling=false) -%}
call {{ compliance.quote_ident(catalog) }}.system.rewrite_data_files(
    table => {{ compliance.sql_string(database ~ '.' ~ table) }}{{ compliance.purge_iceberg_where(partitions) }},
    options => map('delete-file-threshold', '1', 'min-file-size-bytes', '0'{{ ", 'remove-dangling-deletes', 'true'" if dangling else "" }})
)
{%- endmacro %}

{#- rewrite_position_delete_files over the same partitions: the position deletes left are rewritten, the dangling dropped. -#}
{% macro purge_iceberg_rewrite_deletes_sql(catalog, database, table, partitions) -%}
    {{ return(adapter.dispatch('purge_iceberg_rewrite_deletes_sql', 'compliance')(catalog, database, table, partitions)) }}
{%- endmacro %}

{% macro default__purge_iceberg_rewrite_deletes_sql(catalog, database, table, partitions) -%}
call {{ compliance.quote_ident(catalog) }}.system.rewrite_position_delete_files(
    table => {{ compliance.sql_string(database ~ '.' ~ table) }}{{ compliance.purge_iceberg_where(partitions) }},
    options => map('rewrite-all', 'true')
)
{%- endmacro %}

{#-
    rewrite_manifests: the manifests of the current snapshot written anew with its live entries
    only.  A manifest keeps an entry for each file a commit removed (its status DELETED), with that
    file's statistics, which may be a purged id: without this the current snapshot's metadata would
    keep the ids after every older snapshot expired.
-#}
{% macro purge_iceberg_rewrite_manifests_sql(catalog, database, table) -%}
    {{ return(adapter.dispatch('purge_iceberg_rewrite_manifests_sql', 'compliance')(catalog, database, table)) }}
{%- endmacro %}

{% macro default__purge_iceberg_rewrite_manifests_sql(catalog, database, table) -%}
call {{ compliance.quote_ident(catalog) }}.system.rewrite_manifests(table => {{ compliance.sql_string(database ~ '.' ~ table) }})
{%- endmacro %}
