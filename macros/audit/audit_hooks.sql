{#-
    Run hooks of the audit capability (wired in dbt_project.yml):
    on-run-start loads what the previous commands could not (refused runs, commands without
    on-run-end); on-run-end loads this invocation from the in-memory results, since
    run_results.json is only written after on-run-end.  Both render no SQL: the work happens
    in python_hooks.audit through adapter.audit_load_pending / audit_load_run, and a failure is logged as a
    warning without failing the run.
-#}

{% macro audit_on_run_start() -%}
    {{ return(adapter.dispatch('audit_on_run_start', 'compliance')()) }}
{%- endmacro %}

{% macro default__audit_on_run_start() -%}
    {%- if execute and compliance.bool_var('audit_enabled', true) -%}
        {%- set report = adapter.audit_load_pending(
            invocation_id=invocation_id,
            target_schema=target.schema,
            target_path=flags.TARGET_PATH,
            project_dir=flags.PROJECT_DIR,
            invocation_args=invocation_args_dict,
            target_name=target.name,
        ) -%}
        {{- compliance.audit_report('pending runs', report) -}}
    {%- endif -%}
{%- endmacro %}

{% macro audit_on_run_end(results) -%}
    {{ return(adapter.dispatch('audit_on_run_end', 'compliance')(results)) }}
{%- endmacro %}

{% macro default__audit_on_run_end(results) -%}
    {%- if execute and compliance.bool_var('audit_enabled', true) -%}
        {%- set report = adapter.audit_load_run(
            results=results,
            invocation_id=invocation_id,
            invocation_args=invocation_args_dict,
            target_name=target.name,
            target_schema=target.schema,
            dbt_version=dbt_version,
            project_name=project_name,
            run_started_at=run_started_at,
            target_path=flags.TARGET_PATH,
            project_dir=flags.PROJECT_DIR,
            write_graph=compliance.bool_var('audit_workflow_graph', true),
            write_openlineage=compliance.bool_var('audit_openlineage', true),
            graph_tests=compliance.bool_var('audit_workflow_graph_tests', false),
        ) -%}
        {{- compliance.audit_report('this run', report) -}}
    {%- endif -%}
{%- endmacro %}

{% macro audit_report(what, report) -%}
    {#- Auditing must never fail a run: problems are warnings in the log. -#}
    {%- if report is none -%}
        {%- do log('WARNING audit: loading ' ~ what ~ ' returned nothing', info=true) -%}
    {%- elif not report.get('ok') -%}
        {%- do log('WARNING audit: could not load ' ~ what ~ ' into the audit tables: ' ~ report.get('error')
            ~ ' (the run itself is unaffected; the next run retries pending commands)', info=true) -%}
    {%- else -%}
        {%- for warning in report.get('warnings', []) -%}
            {%- do log('WARNING audit: ' ~ warning, info=true) -%}
        {%- endfor -%}
        {%- if report.get('counts') -%}
            {%- do log('audit: loaded ' ~ what ~ ' in ' ~ report.get('seconds') ~ 's ' ~ tojson(report.get('counts')), info=true) -%}
        {%- endif -%}
        {%- do log('audit: ' ~ what ~ ' took ' ~ report.get('seconds') ~ 's ' ~ tojson(report.get('steps', {})), info=false) -%}
        {%- if report.get('loaded') -%}
            {%- do log('audit: loaded earlier commands ' ~ report.get('loaded') | join(', '), info=true) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{% macro audit_table_definition() -%}
    {{ return(adapter.dispatch('audit_table_definition', 'compliance')()) }}
{%- endmacro %}

{% macro default__audit_table_definition() -%}
    {#-
        An audit model's table is defined by the columns (and data_type) in its yml; the model
        selects no rows, and the hooks append rows.  So the yml is what `dbt docs` shows and
        what the table holds.
    -#}
    {%- if execute and model.columns | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            'Audit model ' ~ model.name ~ ' has no columns in its yml: declare each column with its data_type '
            ~ '(the table is defined from them).') }}
    {%- endif -%}
    select
    {%- for name, column in model.columns.items() %}
        cast(null as {{ column.data_type or 'string' }}) as {{ compliance.quote_ident(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    where false
{%- endmacro %}
