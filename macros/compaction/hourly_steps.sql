-- noqa: disable=LT02
{#
    The statement-running side of an hourly compaction model (materialized incremental,
    insert_overwrite by ds, hr).  pre-hook: compute this run's plan into `<model>__plan` (and, for
    a recompaction from output, the merged hours into `<model>__recompact`).  Model SQL: the
    deduplicated hours to publish.  post-hook, only after the overwrite succeeded: late rows into
    `<model>_late`, completion records into `compaction_watermarks`, every decision into
    `compaction_log`.  A run that dies before its post-hook leaves no completion record, so the
    next run compacts the same hours again (an overwrite: no duplicates).
#}
{% macro compaction_relation(identifier, schema=none) -%}
{{ return(api.Relation.create(schema=schema or this.schema, identifier=identifier, type='table')) }}
{%- endmacro %}

{% macro ensure_compaction_tables(schema) %}
{#- dbt's relation cache answers without a statement once the tables exist -#}
{% if adapter.get_relation(database=none, schema=schema, identifier='compaction_watermarks') is none %}
{% call statement('create_compaction_watermarks') %}
        create table if not exists {{ compliance.compaction_relation('compaction_watermarks', schema) }} (
            dataset string,
            `partition` string,
            ds string,
            hr string,
            compaction_started_at timestamp,
            rows_in bigint,
            rows_out bigint,
            action string,
            invocation_id string,
            recorded_at timestamp
        ) using parquet
    {% endcall %}
{% endif %}
{% if adapter.get_relation(database=none, schema=schema, identifier='compaction_log') is none %}
{% call statement('create_compaction_log') %}
        create table if not exists {{ compliance.compaction_relation('compaction_log', schema) }} (
            dataset string,
            ds string,
            hr string,
            hour_start timestamp,
            action string,
            reason string,
            rows_in bigint,
            expected_count bigint,
            late_rows bigint,
            last_compacted_at timestamp,
            compaction_started_at timestamp,
            invocation_id string,
            logged_at timestamp
        ) using parquet
    {% endcall %}
{% endif %}
{% endmacro %}

{% macro hourly_inputs() -%}
{%- set meta = config.get('meta') or {} -%}
{%- set settings = compliance.hourly_settings(meta, model.name) -%}
{%- set given = meta.get('compaction') or {} -%}
{%- if not given.get('source') -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model.name ~ " has no meta.compaction.source: name its hourly input (a model, or source_name.table_name)") }}
{%- endif -%}
{%- set source_relation = compliance.project_node(given.get('source')) -%}
{%- set counts_relation = compliance.project_node(given.get('expected_counts')) if settings.verify else none -%}
{#- from the catalog: three `describe extended` statements per run otherwise (compile, pre- and post-hook) -#}
{%- set described = adapter.describe_table(source_relation.schema, source_relation.identifier) -%}
{%- if not described.exists -%}
        {{ exceptions.raise_compiler_error(
            "Hourly input " ~ source_relation ~ " of model " ~ model.name ~ " does not exist; build or land it first,"
            ~ " or point meta.compaction.source (var page_view_hourly_input for page_view_hourly) at the table to compact") }}
{%- endif -%}
{%- set names = described.columns.keys() | list -%}
{%- for required in ['ds', 'hr', settings.ingested_at] + settings.key + ([settings.order_by] if settings.order_by else []) -%}
{%- if required not in names -%}
            {{ exceptions.raise_compiler_error(
                "Hourly input " ~ source_relation ~ " of model " ~ model.name ~ " has no column '" ~ required
                ~ "'; its columns: " ~ names | join(', ')) }}
{%- endif -%}
{%- endfor -%}
{#- partition columns last, as in the partitioned output table -#}
{%- set columns = names | reject('in', ['ds', 'hr']) | list + ['ds', 'hr'] -%}
    {{ return({
        'settings': settings,
        'source': source_relation,
        'counts': counts_relation,
        'columns': columns,
        'plan': compliance.compaction_relation(this.identifier ~ '__plan'),
        'recompact': compliance.compaction_relation(this.identifier ~ '__recompact'),
        'late': compliance.compaction_relation(this.identifier ~ '_late'),
        'watermarks': compliance.compaction_relation('compaction_watermarks'),
        'log': compliance.compaction_relation('compaction_log'),
    }) }}
{%- endmacro %}

{#- The model body: the hours this run publishes. -#}
{% macro hourly_compaction_sql() -%}
{%- if not execute -%}
{{ return('select 1 as placeholder') }}
{%- endif -%}
{%- set inputs = compliance.hourly_inputs() -%}
    {{ return(compliance.hourly_output_sql(
        inputs.source, inputs.plan, inputs.recompact, inputs.columns, inputs.settings)) }}
{%- endmacro %}

{% macro prepare_hourly_compaction() %}
{%- if execute -%}
    {%- set inputs = compliance.hourly_inputs() -%}
    {%- set settings = inputs.settings -%}
    {%- do compliance.ensure_compaction_tables(this.schema) -%}
    {%- set late_exists = adapter.get_relation(database=none, schema=this.schema, identifier=inputs.late.identifier) is not none -%}
    {#- the earliest completion record of an hour in the window: older rows cannot be late -#}
    {%- set late_after = run_query(
        "select cast(min(compaction_started_at) as string) from " ~ inputs.watermarks
        ~ " where dataset = " ~ compliance.sql_string(settings.dataset)
        ~ " and " ~ compliance.hour_window_predicate(settings.now, settings.min_seconds, settings.max_seconds)
    ).columns[0].values()[0] -%}
    {#- the plan's rows collected and written as one parquet file (no write job); the post-hook reuses them -#}
    {%- set plan_sql = compliance.hourly_plan_sql(inputs.source, inputs.counts, inputs.watermarks, inputs.log,
        inputs.late if late_exists else none, settings, late_after) -%}
    {%- do log("compaction " ~ settings.dataset ~ ": plan query into " ~ inputs.plan ~ ":\n" ~ plan_sql, info=false) -%}
    {%- set planned = adapter.compaction_write_plan(inputs.plan.schema, inputs.plan.identifier, plan_sql) -%}
    {%- do log("compaction " ~ settings.dataset ~ ": plan " ~ tojson(planned), info=false) -%}
    {% if settings.recompact_from_output %}
        {%- set target_exists = adapter.get_relation(database=none, schema=this.schema, identifier=this.identifier) is not none -%}
        {% if not (late_exists and target_exists) %}
            {{ exceptions.raise_compiler_error(
                "recompact_from_output: " ~ this ~ " or its late table " ~ inputs.late
                ~ " does not exist yet; run a regular compaction (late_data_policy copy_late) first") }}
        {% endif %}
        {% call statement('drop_recompact_staging') %}
            drop table if exists {{ inputs.recompact }}
        {% endcall %}
        {#- materialized first: the overwrite cannot read the partitions it replaces -#}
        {% call statement('create_recompact_staging') %}
            create table {{ inputs.recompact }} using parquet as
            {{ compliance.recompact_from_output_sql(this, inputs.late, inputs.plan, inputs.columns, settings) }}
        {% endcall %}
    {% endif %}
    {#- the model's session_conf, for its statement only (python_hooks/compaction/session_settings.py) -#}
    {%- do adapter.session_conf_apply(config.get('session_conf') or {}) -%}
    {%- endif -%}
{% endmacro %}

{% macro finish_hourly_compaction() %}
{%- if execute -%}
{%- set inputs = compliance.hourly_inputs() -%}
{%- set settings = inputs.settings -%}
{%- do adapter.session_conf_restore() -%}
{%- set column_list -%}
{%- for column in inputs.columns -%}{{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}{%- endfor -%}
{%- endset -%}
{#- the plan, read once: what each hour gets, for the statements below and the records -#}
{%- set plan_rows = adapter.compaction_read_plan(inputs.plan.schema, inputs.plan.identifier) -%}
{%- set actions = plan_rows | map(attribute='action') | unique | list -%}
{%- set late_counts_sql = none -%}
{% if not settings.recompact_from_output %}
{#- onboarded as the model is (its tblproperties' dataset.descriptor): the late rows hold the same ids -#}
{%- set descriptor = (config.get('tblproperties') or {}).get('dataset.descriptor') -%}
{% call statement('create_late_table') %}
            create table if not exists {{ inputs.late }} like {{ this }} using parquet
            {{ compliance.tblproperties_sql({'dataset.descriptor': descriptor} if descriptor else {}) }}
        {% endcall %}
        {#- late rows first: if the run dies before its completion records, the next run copies
            the same rows again and the anti-join keeps them single -#}
{#- each statement below scans the input: skipped when no hour needs it -#}
{% if 'copy_late' in actions %}
{% call statement('copy_late_rows') %}
            insert into {{ inputs.late }} partition (`ds`, `hr`)
            select {{ column_list }}
            from ({{ compliance.late_rows_sql(inputs.source, inputs.plan, inputs.columns, settings) }}) as arrived
            where not exists (
                select 1 from {{ inputs.late }} as copied
                where {% for column in inputs.columns -%}
                    copied.{{ compliance.quote_ident(column) }} <=> arrived.{{ compliance.quote_ident(column) }}
                    {{- " and " if not loop.last }}
                {% endfor %}
            )
        {% endcall %}
        {%- set late_counts_sql -%}
            select cast(`ds` as string) as ds, cast(`hr` as string) as hr, count(*) as rows_out
            from ({{ compliance.late_rows_sql(inputs.source, inputs.plan, inputs.columns, settings) }}) as arrived
            group by 1, 2
        {%- endset -%}
        {% endif %}
    {% endif %}
    {#- completion records (compact, recompact, copy_late; rows out from the published
        partitions' footers), then every hour of the plan into the log: one parquet file each,
        no Spark job (python_hooks/compaction/records.py) -#}
    {%- set recorded = adapter.compaction_record_completion(plan_rows, [this.schema, this.identifier],
        [inputs.watermarks.schema, inputs.watermarks.identifier], [inputs.log.schema, inputs.log.identifier], late_counts_sql) -%}
    {% do log("compaction " ~ settings.dataset ~ ": " ~ tojson(recorded), info=false) %}
    {% call statement('drop_recompact_staging') %}
        drop table if exists {{ inputs.recompact }}
    {% endcall %}
    {%- endif -%}
{% endmacro %}
