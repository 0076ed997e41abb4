{#-
    Every call from a macro into the project's Python, one macro each, each with its target
    written out (`package.module:function`) so that grep finds the callers of a function.  The
    function receives the SparkSession first and returns plain Python; see python_hooks/.
    Calls that must not stop a macro return {ok, error, ...} (python_hooks/errors.py).
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

{% macro onboard_read_list(file) -%}
    {{ return(adapter.python_hook('python_hooks.purge.onboarding:read_list', path=file | string)) }}
{%- endmacro %}

{% macro onboard_plan(entries) -%}
    {{ return(adapter.python_hook('python_hooks.purge.onboarding:plan', entries=entries)) }}
{%- endmacro %}

{% macro onboard_apply(rows) -%}
    {{ return(adapter.python_hook('python_hooks.purge.onboarding:apply', rows=rows)) }}
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

{#- ---- retention (python_hooks/retention/) ---- -#}

{% macro retention_base_tables(stale_relation) -%}
    {{ return(adapter.python_hook('python_hooks.retention.engine:base_tables', stale_relation=stale_relation)) }}
{%- endmacro %}

{% macro retention_validate_policies(rows, defaults, min_hours, allow_short) -%}
    {{ return(adapter.python_hook('python_hooks.retention.policy:validate_policies', rows=rows, defaults=defaults,
        min_hours=min_hours, allow_short=allow_short)) }}
{%- endmacro %}

{% macro retention_run(invocation_id, policies, defaults, dry_run, now, stale_relation, view_name) -%}
    {{ return(adapter.python_hook('python_hooks.retention.engine:run_retention', invocation_id=invocation_id,
        policies=policies, defaults=defaults, dry_run=dry_run, now=now, stale_relation=stale_relation,
        view_name=view_name)) }}
{%- endmacro %}

{#- ---- restore (python_hooks/restore/) ---- -#}

{% macro restore_plan(table, partition, backup, now) -%}
    {{ return(adapter.python_hook('python_hooks.restore.plan:plan_restore', table=table, partition=partition,
        backup=backup, now=now)) }}
{%- endmacro %}

{#- ---- audit (python_hooks/audit/) ---- -#}

{% macro audit_load_pending(invocation_id, target_schema, target_path, project_dir) -%}
    {{ return(adapter.python_hook('python_hooks.audit.artifacts:load_pending', invocation_id=invocation_id,
        target_schema=target_schema, target_path=target_path, project_dir=project_dir)) }}
{%- endmacro %}

{% macro audit_load_run(results, invocation_id, invocation_args, target_name, target_schema, dbt_version,
    project_name, run_started_at, target_path, project_dir, write_graph, write_openlineage) -%}
    {{ return(adapter.python_hook('python_hooks.audit.artifacts:load_run', results=results,
        invocation_id=invocation_id, invocation_args=invocation_args, target_name=target_name,
        target_schema=target_schema, dbt_version=dbt_version, project_name=project_name,
        run_started_at=run_started_at, target_path=target_path, project_dir=project_dir,
        write_graph=write_graph, write_openlineage=write_openlineage)) }}
{%- endmacro %}

{% macro catalog_side_table_adoption_candidates(databases=none) -%}
    {{ return(adapter.python_hook('python_hooks.catalog.side_tables:adoption_candidates', databases=databases)) }}
{%- endmacro %}

{#- ---- compaction (python_hooks/compaction/) ---- -#}

{% macro compaction_write_plan(plan, sql) -%}
    {{ return(adapter.python_hook('python_hooks.compaction.plan:write_plan', database=plan.schema, table=plan.identifier, sql=sql)) }}
{%- endmacro %}

{% macro compaction_apply_session_conf(settings) -%}
    {{ return(adapter.python_hook('python_hooks.compaction.session_settings:apply', settings=settings)) }}
{%- endmacro %}

{% macro compaction_restore_settings() -%}
    {{ return(adapter.python_hook('python_hooks.compaction.session_settings:restore')) }}
{%- endmacro %}

{% macro compaction_read_plan(plan) -%}
    {{ return(adapter.python_hook('python_hooks.compaction.records:read_plan', database=plan.schema, table=plan.identifier)) }}
{%- endmacro %}

{% macro compaction_record_completion(plan_rows, output, watermarks, log, late_counts_sql=none) -%}
    {{ return(adapter.python_hook('python_hooks.compaction.records:record_completion', plan=plan_rows,
        output=[output.schema, output.identifier], watermarks=[watermarks.schema, watermarks.identifier],
        log=[log.schema, log.identifier], late_counts_sql=late_counts_sql)) }}
{%- endmacro %}

{#- ---- erasure evidence (python_hooks/erasure/) ---- -#}

{% macro erasure_write_certificate(request, runs, tables, copies, verification, target_path, project_dir) -%}
    {{ return(adapter.python_hook('python_hooks.erasure.certificate:write_certificate', request=request, runs=runs,
        tables=tables, copies=copies, verification=verification, target_path=target_path, project_dir=project_dir)) }}
{%- endmacro %}

{% macro erasure_verify_bytes(invocation_id, requests, stale_relation, view_name) -%}
    {{ return(adapter.python_hook('python_hooks.erasure.verification:verify_requests', invocation_id=invocation_id,
        requests=requests, stale_relation=stale_relation, view_name=view_name)) }}
{%- endmacro %}

{% macro erasure_describe_tables(tables) -%}
    {{ return(adapter.python_hook('python_hooks.erasure.coverage:describe_tables', tables=tables)) }}
{%- endmacro %}

{% macro erasure_match_columns(tables, names, patterns) -%}
    {{ return(adapter.python_hook('python_hooks.erasure.coverage:match_columns', tables=tables, names=names, patterns=patterns)) }}
{%- endmacro %}

{% macro erasure_downstream_tables(edges_relation, nodes_relation, onboarded, exempt_tags) -%}
    {{ return(adapter.python_hook('python_hooks.erasure.coverage:downstream_tables', edges_relation=edges_relation | string,
        nodes_relation=nodes_relation | string, onboarded=onboarded, exempt_tags=exempt_tags)) }}
{%- endmacro %}
