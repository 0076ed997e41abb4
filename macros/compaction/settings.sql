{#
    Settings of an hourly compaction, read from the model's `meta.compaction` with project vars as
    defaults, and checked once so that every later macro can trust them.
#}
{% macro compaction_duration_seconds(value, name) -%}
    {%- set text = value | string | trim | lower -%}
    {%- set match = modules.re.match('^([0-9]+)\\s*(s|m|h|d)$', text) -%}
    {%- if not match -%}
        {{ exceptions.raise_compiler_error(
            "Invalid " ~ name ~ " '" ~ value ~ "': expected a number and a unit s, m, h or d, such as '1h' or '3d'") }}
    {%- endif -%}
    {%- set unit = {'s': 1, 'm': 60, 'h': 3600, 'd': 86400}[match.group(2)] -%}
    {{ return(match.group(1) | int * unit) }}
{%- endmacro %}

{#- The compaction's reference time: var `compaction_now` ('yyyy-MM-dd HH:mm:ss'), or the run's start. -#}
{% macro compaction_now() -%}
    {%- set value = var('compaction_now', '') -%}
    {%- if value is none or value | string | trim == '' -%}
        {{ return(run_started_at.strftime('%Y-%m-%d %H:%M:%S')) }}
    {%- endif -%}
    {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}(:[0-9]{2})?)?$', value | string | trim) -%}
        {{ exceptions.raise_compiler_error(
            "Invalid compaction_now '" ~ value ~ "': expected 'yyyy-MM-dd HH:mm:ss' (UTC) or empty for the run's start") }}
    {%- endif -%}
    {{ return(value | string | trim) }}
{%- endmacro %}

{#- Gobblin-style list matching: comma-separated names, `*` matches any run of characters. -#}
{% macro compaction_name_matches(name, patterns) -%}
    {%- set entries = (patterns | join(',') if patterns is not string else patterns).split(',') -%}
    {%- for entry in entries if entry | trim != '' -%}
        {%- set regex = '^' ~ (modules.re.escape(entry | trim) | replace('\\*', '.*')) ~ '$' -%}
        {%- if modules.re.match(regex, name) -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}

{% macro hourly_settings(meta, model_name) -%}
    {%- set given = (meta or {}).get('compaction') or {} -%}
    {%- if not given.get('dataset') -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ " has no meta.compaction.dataset: name the dataset, e.g. "
            ~ "config(meta={'compaction': {'dataset': 'page_view', ...}})") }}
    {%- endif -%}
    {%- set dedup = given.get('dedup', 'all') -%}
    {%- if dedup not in ['all', 'key'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ ": invalid compaction dedup '" ~ dedup ~ "'; accepted values: 'all', 'key'") }}
    {%- endif -%}
    {%- set key = given.get('key') or [] -%}
    {%- set key = [key] if key is string else key -%}
    {%- if dedup == 'key' and (key | length == 0 or not given.get('order_by')) -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ ": dedup 'key' needs compaction.key (the key columns) and "
            ~ "compaction.order_by (the column whose latest value wins)") }}
    {%- endif -%}
    {%- set policy = given.get('late_data_policy') or var('late_data_policy', 'copy_late') -%}
    {%- if policy not in ['copy_late', 'recompact'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ ": invalid late_data_policy '" ~ policy ~ "'; accepted values: 'copy_late', 'recompact'") }}
    {%- endif -%}
    {%- set timeout_action = given.get('completeness_timeout_action') or var('completeness_timeout_action', 'publish') -%}
    {%- if timeout_action not in ['publish', 'skip'] -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ model_name ~ ": invalid completeness_timeout_action '" ~ timeout_action
            ~ "'; accepted values: 'publish', 'skip'") }}
    {%- endif -%}
    {%- set dataset = given.get('dataset') -%}
    {%- set verify = compliance.compaction_name_matches(dataset, var('compaction_verify_whitelist', '*'))
        and not compliance.compaction_name_matches(dataset, var('compaction_verify_blacklist', '')) -%}
    {{ return({
        'dataset': dataset,
        'dedup': dedup,
        'key': key,
        'order_by': given.get('order_by'),
        'tie_breakers': given.get('tie_breakers') or [],
        'ingested_at': given.get('ingested_at', 'ingested_at'),
        'late_data_policy': policy,
        'recompact_from_output': compliance.bool_var('recompact_from_output'),
        'now': compliance.compaction_now(),
        'min_seconds': compliance.compaction_duration_seconds(given.get('min_time_ago') or var('compaction_min_time_ago', '1h'), 'compaction_min_time_ago'),
        'max_seconds': compliance.compaction_duration_seconds(given.get('max_time_ago') or var('compaction_max_time_ago', '3d'), 'compaction_max_time_ago'),
        'verify': verify and given.get('verify_completeness', true),
        'timeout_hours': (given.get('completeness_timeout_hours') or var('completeness_timeout_hours', 24)) | int,
        'timeout_action': timeout_action,
    }) }}
{%- endmacro %}
