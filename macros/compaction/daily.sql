{#
    Daily compaction: the hourly partitions of each closed day in the window into one `ds`
    partition.  Type 1 concatenates (no dedup); type 2 (input deduplicated, output must be)
    deduplicates across the day's hours with the model's dedup settings.  Every run rewrites
    the closed days of the window, so an hour published late (held for completeness, or
    recompacted) reaches its day on the next run.
#}
{% macro daily_settings(meta, model_name) -%}
    {%- set given = (meta or {}).get('compaction') or {} -%}
    {%- set daily_type = given.get('daily_type', 1) | string -%}
    {%- if daily_type not in ['1', '2'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ ": invalid compaction daily_type '" ~ daily_type ~ "'; accepted values: 1 (concatenate), 2 (deduplicate)") }}
    {%- endif -%}
    {%- set settings = compliance.hourly_settings(
        {'compaction': dict(given, dataset=given.get('dataset', model_name))}, model_name) -%}
    {%- do settings.update({'daily_type': daily_type | int}) -%}
    {{ return(settings) }}
{%- endmacro %}

{#- True for days that ended at least min_seconds and started less than max_seconds before `now`. -#}
{% macro day_window_predicate(now, min_seconds, max_seconds) -%}
    unix_timestamp(to_timestamp(cast(`ds` as string), 'yyyy-MM-dd')) + 86400
        <= unix_timestamp(to_timestamp({{ compliance.sql_string(now) }})) - {{ min_seconds | int }}
    and unix_timestamp(to_timestamp(cast(`ds` as string), 'yyyy-MM-dd'))
        > unix_timestamp(to_timestamp({{ compliance.sql_string(now) }})) - {{ max_seconds | int }}
{%- endmacro %}

{% macro daily_output_sql(hourly_relation, columns, settings) -%}
    {%- set input_sql -%}
        select
        {%- for column in columns %}
            {{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
        {%- endfor %}
        from {{ hourly_relation }}
        where {{ compliance.day_window_predicate(settings.now, settings.min_seconds, settings.max_seconds) }}
    {%- endset -%}
    {%- if settings.daily_type == 2 -%}
        {{ return(compliance.dedup_sql(input_sql, columns, settings, ['ds'])) }}
    {%- else -%}
        {{ return(input_sql) }}
    {%- endif -%}
{%- endmacro %}

{% macro daily_compaction_sql(hourly_relation) -%}
    {%- if not execute -%}
        {{ return('select 1 as placeholder') }}
    {%- endif -%}
    {%- set settings = compliance.daily_settings(config.get('meta'), model.name) -%}
    {%- set names = adapter.get_columns_in_relation(hourly_relation) | map(attribute='name') | list -%}
    {%- set columns = names | reject('in', ['ds', 'hr']) | list + ['ds'] -%}
    {{ return(compliance.daily_output_sql(hourly_relation, columns, settings)) }}
{%- endmacro %}
