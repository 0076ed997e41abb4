{#-
    The purge's remaining calls into Python by name (being replaced by the purge engine's typed
    adapter methods, adapter/src/dbt/adapters/lakehouse/compliance.py, as every other capability's).
-#}

{#- ---- catalog: metastore reads and guarded statements (python_hooks/catalog/) ---- -#}

{% macro catalog_list_databases() -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:list_databases')) }}
{%- endmacro %}

{% macro catalog_list_tables(database) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:list_tables', database=database)) }}
{%- endmacro %}

{% macro catalog_describe_table(database, table) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:describe_table', database=database, table=table)) }}
{%- endmacro %}

{% macro catalog_resolve_field(database, table, field) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:resolve_field', database=database, table=table, field=field)) }}
{%- endmacro %}

{% macro catalog_list_partitions(database, table) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:list_partitions', database=database, table=table)) }}
{%- endmacro %}

{% macro catalog_partition_location(database, table, values) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:partition_location', database=database, table=table, values=values)) }}
{%- endmacro %}

{% macro catalog_execute(sql) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:execute', sql=sql | string)) }}
{%- endmacro %}

{% macro catalog_refresh_table(database, table) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:refresh_table', database=database, table=table)) }}
{%- endmacro %}

{% macro catalog_set_partition_locations(database, table, partitions) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.tables:set_partition_locations', database=database, table=table, partitions=partitions)) }}
{%- endmacro %}

{% macro catalog_background_start(key, statements, append=none) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:start', key=key, statements=statements, append=append)) }}
{%- endmacro %}

{% macro catalog_read_ahead(queries, workers) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:read_ahead', queries=queries, workers=workers)) }}
{%- endmacro %}

{% macro catalog_statements_ahead(key, steps) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:statements_ahead', key=key, steps=steps)) }}
{%- endmacro %}

{% macro catalog_collect(key) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:collect', key=key)) }}
{%- endmacro %}

{% macro catalog_forget_read_ahead() -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:forget_read_ahead')) }}
{%- endmacro %}

{% macro catalog_background_wait_all() -%}
    {{ return(adapter.python_hook('python_hooks.catalog.background:wait_all')) }}
{%- endmacro %}

{#- ---- purge (python_hooks/purge/) ---- -#}

{% macro purge_run_scan(spec) -%}
    {{ return(adapter.python_hook('python_hooks.purge.scan:run', spec=spec)) }}
{%- endmacro %}

{% macro purge_read_id_bounds(ids) -%}
    {{ return(adapter.python_hook('python_hooks.purge.scan:id_bounds', ids=ids)) }}
{%- endmacro %}

{% macro purge_scan_read_ahead(scans, workers) -%}
    {{ return(adapter.python_hook('python_hooks.purge.scan:read_ahead', scans=scans, workers=workers)) }}
{%- endmacro %}







{% macro purge_location_snapshots(database, table, locations, exclude, count_rows=true, skip_by=none) -%}
    {{ return(adapter.python_hook('python_hooks.purge.commit_check:location_snapshots', database=database, table=table,
        locations=locations, exclude=exclude, count_rows=count_rows, skip_by=skip_by)) }}
{%- endmacro %}

{% macro purge_candidate_view(database, table, view, partitions) -%}
    {{ return(adapter.python_hook('python_hooks.purge.file_level:candidate_view', database=database, table=table,
        view=view, partitions=partitions)) }}
{%- endmacro %}

{% macro purge_drop_view(view) -%}
    {{ return(adapter.python_hook('python_hooks.purge.file_level:drop_view', view=view)) }}
{%- endmacro %}

{% macro purge_start_copy(key, copies) -%}
    {{ return(adapter.python_hook('python_hooks.purge.file_level:start_copy', key=key, copies=copies)) }}
{%- endmacro %}

{% macro purge_create_staging_table(database, staging, table, location, properties={}) -%}
    {{ return(adapter.python_hook('python_hooks.purge.staging:create_staging_table', database=database, staging=staging,
        table=table, location=location, properties=properties)) }}
{%- endmacro %}

{% macro purge_forget_external_table(database, table) -%}
    {{ return(adapter.python_hook('python_hooks.purge.staging:forget_external_table', database=database, table=table)) }}
{%- endmacro %}

{% macro purge_forget_external_table_later(key, database, table, fallback_sql) -%}
    {{ return(adapter.python_hook('python_hooks.purge.staging:forget_later', key=key, database=database, table=table, fallback_sql=fallback_sql)) }}
{%- endmacro %}

{% macro purge_replace_results(database, table, rows) -%}
    {{ return(adapter.python_hook('python_hooks.purge.results:replace_results', database=database, table=table, rows=rows)) }}
{%- endmacro %}

{% macro purge_partition_row_counts(database, table) -%}
    {{ return(adapter.python_hook('python_hooks.purge.staging:partition_row_counts', database=database, table=table)) }}
{%- endmacro %}

