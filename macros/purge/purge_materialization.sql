-- noqa: disable=LT02
{#
    `materialized='purge'`: the purge node, as dbt-spark shapes a materialization: the config
    checked first, then the steps in order.  Four calls into Python (the engine,
    python_hooks/purge/), and between them the statements rendered by the clause macros of
    purge_sql.sql (macros/purge/purge_render.sql; rendering runs nothing):

      named  adapter.command_selection  whether the command named the purge (else a dry run)
      plan   adapter.purge_plan      the journal completed, the catalog's and the files' facts
      scan   adapter.purge_scan      the rendered scans run: which partitions hold listed ids
                                     (the Delta Lake tables' too: purge_delta.sql)
      run    adapter.purge_execute   the rendered statements run table by table; the records

    A dry run is the plan and the statements, printed, with nothing run but the scans.  A
    command whose own selection does not name the job (a plain `dbt build`, no --select) runs
    the purge as a dry run and prints the command that purges (compliance.command_selection).
    What ran (or would run) is the node's script in target/run/.  The node's relation holds
    this run's result rows (one per table and partition); the engine appends them to purge_log.
#}
{% materialization purge, default %}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set config = compliance.purge_config() -%}
    {#- a command that does not name the job (a plain `dbt build`) purges nothing: a dry run -#}
    {%- set selection = compliance.command_selection('dbt run --select purge+') -%}
    {%- if not selection.named -%}
        {%- do config.update({'dry_run': true}) -%}
        {%- do log("purge: not selected by name (" ~ selection.reason ~ "): a dry run, nothing is deleted.", info=true) -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {%- set plan = adapter.purge_plan(config) -%}
    {%- set plan = adapter.purge_scan(plan, compliance.purge_render_scans(plan)) -%}
    {%- set statements = compliance.purge_render_statements(plan) -%}
    {%- set delta_statements = compliance.purge_render_delta(plan) -%}
    {%- set script = compliance.purge_script(plan, statements, delta_statements) -%}
    {%- do write(script) -%}
    {%- if config.dry_run and (plan.rewriting or delta_statements) -%}
        {%- do log("purge (dry run): the statements a purge would run, none of them run:\n" ~ script, info=true) -%}
    {%- endif -%}
    {%- set summary = adapter.purge_execute(plan, statements, target_relation, delta_statements) -%}
    {#- the engine made purge_log if it was missing: dbt's relation cache must know it -#}
    {%- do adapter.cache_added(api.Relation.create(schema=this.schema, identifier='purge_log', type='table')) -%}
    {%- if config.dry_run -%}
        {%- do compliance.purge_dry_run_schedule(plan) -%}
    {%- endif -%}
    {%- if not selection.named -%}
        {%- do log("purge: nothing was deleted; it would rewrite " ~ summary.dry_run ~ " partition(s) (listed above)."
            ~ " To purge, run `" ~ selection.command ~ "`.", info=true) -%}
    {%- endif -%}

    {%- call noop_statement('main', compliance.purge_status(summary, config.dry_run), 'PURGE', summary.committed) -%}
        {{ script }}
    {%- endcall -%}

    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#-
    The node's settings, every var checked (the one boolean parser, the pattern grammar) before
    anything is read: a bad value stops the run before any table.
-#}
{% macro purge_config() -%}
    {{ return({
        'invocation_id': invocation_id,
        'run_ts': compliance.purge_epoch_ms(),
        'target_schema': target.schema,
        'log_schema': this.schema,
        'whitelist': compliance.parse_table_patterns(var('purge_whitelist', ''), 'purge_whitelist'),
        'blacklist': compliance.parse_table_patterns(var('purge_blacklist', ''), 'purge_blacklist'),
        'id_table': var('compliance_id_table', '') | string,
        'id_column': var('compliance_id_column', '') | string,
        'dry_run': compliance.bool_var('purge_dry_run'),
        'file_level': compliance.bool_var('purge_file_level', true),
        'allow_empty': compliance.bool_var('purge_allow_empty'),
        'scan_parallelism': compliance.positive_int_var('purge_scan_parallelism', 4),
    }) }}
{%- endmacro %}

{% macro purge_epoch_ms() -%}
    {%- set delta = modules.datetime.datetime.utcnow() - modules.datetime.datetime(1970, 1, 1) -%}
    {{ return(delta.days * 86400000 + delta.seconds * 1000 + (delta.microseconds // 1000)) }}
{%- endmacro %}

{#- The node's status line: what it did, counted (`PURGE 4 rewritten, 156 skipped`). -#}
{% macro purge_status(summary, dry_run) -%}
    {%- if dry_run -%}
        {{ return('DRY RUN ' ~ summary.dry_run ~ ' to rewrite, ' ~ summary.skipped ~ ' skipped') }}
    {%- endif -%}
    {{ return('PURGE ' ~ summary.committed ~ ' rewritten, ' ~ summary.skipped ~ ' skipped'
        ~ (', ' ~ summary.recovered ~ ' recovered' if summary.recovered else '')) }}
{%- endmacro %}

{#-
    A dry run's answer to "and then?": for each partition it would rewrite, the backup that would
    keep its pre-purge copy and the date from which a retention pass would delete that copy under
    the policies in force (the larger of backup_retention_days and stale_retention_days).  The
    dry retention pass that `purge+` runs next lists what it would delete now.
-#}
{% macro purge_dry_run_schedule(plan) -%}
    {%- if not plan.rewriting -%}{{ return(none) }}{%- endif -%}
    {%- set defaults = compliance.retention_defaults() -%}
    {%- set rows = compliance.retention_policy_rows(adapter.get_relation(database=none, schema=target.schema, identifier='retention_policies')) -%}
    {%- set now = modules.datetime.datetime.utcnow() -%}
    {%- for table in plan.rewriting -%}
        {%- set policy = compliance.retention_policy(table.database, table.table, rows, defaults) -%}
        {%- set days = compliance.retention_copy_days(policy) -%}
        {%- if days is none -%}
            {%- set when = "when newer backups exceed backup_retention_versions " ~ policy.backup_retention_versions ~ " (no backup_retention_days)" -%}
        {%- else -%}
            {%- set when = "from " ~ (now + modules.datetime.timedelta(days=days)).strftime('%Y-%m-%d %H:%M') ~ " UTC (backup_retention_days "
                ~ (policy.backup_retention_days | string | trim) ~ ", stale_retention_days " ~ (policy.stale_retention_days | string | trim) ~ ")" -%}
        {%- endif -%}
        {%- for part in table.todo -%}
            {%- do log("purge: dry run: " ~ table.name ~ " " ~ part.label ~ ": would remove " ~ part.rows_purged ~ " of " ~ part.rows_before
                ~ " rows; its pre-purge copy would be kept by " ~ table.database ~ "." ~ table.backup
                ~ " and deleted by retention " ~ when, info=true) -%}
        {%- endfor -%}
    {%- endfor -%}
{%- endmacro %}
