-- noqa: disable=LT02
{#
    `materialized='purge'`: the purge node.  It purges every onboarded, whitelisted table, then
    replaces its own relation with this run's result rows (one per table and partition), which
    purge_log appends.  Any FAILED row fails the node, after every other table was done.
#}
{% materialization purge, default %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set dry_run = compliance.bool_var('purge_dry_run') -%}
    {#- file-level rewrite (docs/purge.md); read here, so a bad value stops the run before any table -#}
    {%- set file_level = compliance.bool_var('purge_file_level', true) -%}
    {%- set ctx = {'ts': compliance.purge_epoch_ms(), 'dry_run': dry_run, 'file_level': file_level, 'onboarded': [], 'committed': [], 'forgetting': []} -%}

    {{ run_hooks(pre_hooks) }}
    {#- records that a node which failed earlier in this process left in the background -#}
    {%- set unrecorded = compliance.purge_wait_for_stale_records() -%}

    {#- bad vars and a missing id table stop the run before any table is touched -#}
    {%- set whitelist = compliance.parse_table_patterns(var('purge_whitelist', ''), 'purge_whitelist') -%}
    {%- set blacklist = compliance.parse_table_patterns(var('purge_blacklist', ''), 'purge_blacklist') -%}
    {%- set results = [] -%}
    {%- if whitelist -%}
        {%- set ids = compliance.purge_id_source() -%}
        {#- read once per run: the scans' id range (data skipping on clustered ids) -#}
        {%- do ids.update({'bounds': compliance.purge_id_bounds(ids.database, ids.table, ids.column, ids.type)}) -%}
        {%- set candidates = compliance.purge_candidates(whitelist, blacklist) -%}
        {%- do compliance.purge_say("run " ~ ctx.ts ~ (" (dry run: no DDL, no writes)" if dry_run else "") ~ ": " ~ candidates | length
            ~ " whitelisted table(s), ids from " ~ ids.name ~ "." ~ ids.column) -%}
        {%- set plans = compliance.purge_read_ahead(candidates, ids) -%}
        {%- for candidate in candidates -%}
            {#- anything a table raises becomes its FAILED row, after the partitions it committed; the others go on -#}
            {%- do ctx.update({'committed': []}) -%}
            {%- set done = adapter.guarded(compliance.purge_table, candidate[0], candidate[1], ids, ctx, plans.get(candidate[0] ~ '.' ~ candidate[1])) -%}
            {%- if done.ok -%}
                {%- do results.extend(done.value) -%}
            {%- else -%}
                {%- do results.extend(ctx.committed) -%}
                {%- set reason = "Table " ~ candidate[0] ~ "." ~ candidate[1] ~ ": the purge stopped with an error: " ~ done.error
                    ~ ("; its partitions listed COMMITTED were swapped before it" if ctx.committed else "; it was left as it was") -%}
                {%- do compliance.purge_say(reason) -%}
                {%- do results.append(compliance.purge_result(ctx, candidate[0], candidate[1], {'state': 'FAILED', 'reason': reason,
                    'started_at': compliance.purge_now()})) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {#- a selection with no onboarded table is a typo until said otherwise: fail before writing anything -#}
    {%- if not ctx.onboarded -%}
        {%- do compliance.purge_empty_selection(whitelist, blacklist) -%}
    {%- endif -%}

    {%- call noop_statement('main', 'PURGE ' ~ results | length ~ ' partition(s)', 'PURGE', results | length) -%}{%- endcall -%}
    {%- set written = compliance.purge_write_results(target_relation, results) -%}
    {#- the staging tables forgotten in the background, then anything else still running ahead -#}
    {%- do compliance.purge_forgotten_side_tables(ctx) -%}
    {%- do compliance.catalog_forget_read_ahead() -%}
    {%- do unrecorded.extend(compliance.purge_wait_for_stale_records()) -%}
    {%- set failed = results | selectattr('state', 'equalto', 'FAILED') | list -%}
    {%- do compliance.purge_summary(results, dry_run) -%}
    {%- if dry_run -%}
        {%- do compliance.purge_dry_run_schedule(results) -%}
    {%- endif -%}

    {{ run_hooks(post_hooks) }}

    {%- if not written.ok -%}
        {%- do exceptions.raise_compiler_error("The purge's " ~ results | length ~ " result row(s) could not be written to " ~ target_relation ~ ": "
            ~ written.error ~ ". The purge itself is done (its lines above say what was committed)." ~ ("\n" ~ unrecorded | join("\n") if unrecorded else "")) -%}
    {%- endif -%}
    {%- if failed or unrecorded -%}
        {%- do compliance.purge_append_to_log(target_relation) -%}
        {%- set lines = [] -%}
        {%- for row in failed -%}
            {%- do lines.append('  ' ~ row.database_name ~ '.' ~ row.table_name ~ (' ' ~ row.partition_spec if row.partition_spec else '') ~ ': ' ~ row.reason) -%}
        {%- endfor -%}
        {%- do exceptions.raise_compiler_error(("The purge failed for " ~ failed | length ~ " table(s)/partition(s); every other one was done:\n"
            ~ lines | join('\n') ~ "\nFix the cause and run `dbt run --select purge+` again: committed partitions hold no ids and are skipped." if failed else "")
            ~ ("\n" if failed and unrecorded else "") ~ unrecorded | join("\n")) -%}
    {%- endif -%}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#-
    Plans every candidate table (metastore only) and starts their id scans on
    `purge_scan_parallelism` threads, in the order the tables will be purged: Spark runs the
    scans of the tables ahead while the node rewrites the current one, several small scan jobs
    at once.  Returns {db.table: plan}; a table whose planning raised is planned again (and
    fails) in its turn.  `purge_scan_parallelism: 1` scans each table in its turn instead.
-#}
{% macro purge_read_ahead(candidates, ids) -%}
    {%- set workers = compliance.positive_int_var('purge_scan_parallelism', 4) -%}
    {#- nothing a node of this process left behind (it stopped early) may pass for this run's scan -#}
    {%- do compliance.catalog_forget_read_ahead() -%}
    {%- set plans = {} -%}
    {%- if workers < 2 or candidates | length < 2 -%}{{ return(plans) }}{%- endif -%}
    {%- set scans = {} -%}
    {%- for candidate in candidates -%}
        {%- set planned = adapter.guarded(compliance.purge_table_plan, candidate[0], candidate[1], ids) -%}
        {%- if planned.ok -%}
            {%- set key = candidate[0] ~ '.' ~ candidate[1] -%}
            {%- do plans.update({key: planned.value}) -%}
            {%- if planned.value.scan_sql -%}
                {%- do log('purge step scan (read ahead): ' ~ key ~ ':\n' ~ planned.value.scan_sql, info=false) -%}
                {%- do scans.update({key: planned.value.scan}) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do compliance.purge_scan_read_ahead(scans, workers) -%}
    {{ return(plans) }}
{%- endmacro %}

{#-
    Waits for the stale-location records the purge wrote in the background (one per table with
    swapped partitions); a message per table whose records could not be written.
-#}
{% macro purge_wait_for_stale_records() -%}
    {%- set messages = [] -%}
    {%- for key, outcome in compliance.catalog_background_wait_all().items() if not outcome.ok -%}
        {%- do messages.append("Could not record the old locations of " ~ key.split(' ')[-1] ~ " in " ~ compliance.stale_data_relation() ~ ": "
            ~ outcome.error ~ ". Its partitions were purged, but retention will not delete their old directories (the old_location of"
            ~ " its COMMITTED rows in purge_log) until they are recorded: fix the cause, then record them with"
            ~ " `dbt run-operation record_stale_location`.") -%}
    {%- endfor -%}
    {{ return(messages) }}
{%- endmacro %}

{% macro purge_epoch_ms() -%}
    {%- set delta = modules.datetime.datetime.utcnow() - modules.datetime.datetime(1970, 1, 1) -%}
    {{ return(delta.days * 86400000 + delta.seconds * 1000 + (delta.microseconds // 1000)) }}
{%- endmacro %}

{% macro purge_summary(results, dry_run) -%}
    {%- set ns = namespace(rows=0, tables=[]) -%}
    {%- for row in results -%}
        {%- if row.state in ['COMMITTED', 'DRY_RUN'] -%}{%- set ns.rows = ns.rows + row.rows_purged -%}{%- endif -%}
        {%- if (row.database_name ~ '.' ~ row.table_name) not in ns.tables -%}{%- do ns.tables.append(row.database_name ~ '.' ~ row.table_name) -%}{%- endif -%}
    {%- endfor -%}
    {%- set by_state = {} -%}
    {%- for state in ['COMMITTED', 'DRY_RUN', 'SKIPPED', 'FAILED'] -%}
        {%- do by_state.update({state: results | selectattr('state', 'equalto', state) | list | length}) -%}
    {%- endfor -%}
    {%- do compliance.purge_say("summary: " ~ ns.tables | length ~ " table(s); partitions " ~ by_state.COMMITTED ~ " committed, "
        ~ by_state.DRY_RUN ~ " dry-run, " ~ by_state.SKIPPED ~ " skipped, " ~ by_state.FAILED ~ " failed; "
        ~ ns.rows ~ " row(s) " ~ ("would be " if dry_run else "") ~ "removed") -%}
{%- endmacro %}

{#-
    A dry run's answer to "and then?": for each partition it would rewrite, the backup that would
    keep its pre-purge copy and the date from which a retention pass would delete that copy under
    the policies in force (the larger of backup_retention_days and stale_retention_days).  The
    dry retention pass that `purge+` runs next lists what it would delete now.
-#}
{% macro purge_dry_run_schedule(results) -%}
    {%- set pending = results | selectattr('state', 'equalto', 'DRY_RUN') | list -%}
    {%- if not pending -%}{{ return(none) }}{%- endif -%}
    {%- set defaults = compliance.retention_defaults() -%}
    {%- set rows = compliance.retention_policy_rows(adapter.get_relation(database=none, schema=target.schema, identifier='retention_policies')) -%}
    {%- set now = modules.datetime.datetime.utcnow() -%}
    {%- for row in pending -%}
        {%- set policy = compliance.retention_policy(row.database_name, row.table_name, rows, defaults) -%}
        {%- set days = compliance.retention_copy_days(policy) -%}
        {%- if days is none -%}
            {%- set when = "when newer backups exceed backup_retention_versions " ~ policy.backup_retention_versions ~ " (no backup_retention_days)" -%}
        {%- else -%}
            {%- set when = "from " ~ (now + modules.datetime.timedelta(days=days)).strftime('%Y-%m-%d %H:%M') ~ " UTC (backup_retention_days "
                ~ (policy.backup_retention_days | string | trim) ~ ", stale_retention_days " ~ (policy.stale_retention_days | string | trim) ~ ")" -%}
        {%- endif -%}
        {%- do compliance.purge_say("dry run: " ~ row.database_name ~ "." ~ row.table_name ~ " " ~ (row.partition_spec or '(unpartitioned)')
            ~ ": would remove " ~ row.rows_purged ~ " of " ~ row.rows_before ~ " rows; its pre-purge copy would be kept by "
            ~ row.database_name ~ "." ~ row.table_name ~ "_backup_<ts> and deleted by retention " ~ when) -%}
    {%- endfor -%}
{%- endmacro %}

{#-
    No onboarded table matched: an error naming the patterns and the databases the catalog
    holds, or (purge_allow_empty: true) a warning.
-#}
{% macro purge_empty_selection(whitelist, blacklist) -%}
    {%- set databases = compliance.catalog_list_databases() | list -%}
    {%- set message = "purge: purge_whitelist " ~ tojson(var('purge_whitelist', '') | string)
        ~ (" minus purge_blacklist " ~ tojson(var('purge_blacklist') | string) if blacklist else "")
        ~ " matches no onboarded table (a table with a dataset.descriptor), so nothing would be purged. The databases in the catalog are: "
        ~ (databases | sort | join(', ') or '(none)') ~ ". Fix the patterns (db, db.table, db*, db.table*) or onboard the tables"
        ~ " (`dbt run-operation onboard`); set purge_allow_empty: true if an empty run is expected." -%}
    {%- if compliance.bool_var('purge_allow_empty') -%}
        {%- do exceptions.warn(message ~ " (purge_allow_empty is set: a warning only)") -%}
    {%- else -%}
        {%- do exceptions.raise_compiler_error(message) -%}
    {%- endif -%}
{%- endmacro %}
