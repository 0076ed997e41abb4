{#
    SQL-building macros of the compaction: they return text and run nothing, so they are
    rendering-tested.  `columns` are plain column names, in output order.
#}

{#- One row per distinct record (Gobblin's dedup on all fields). -#}
{% macro dedup_all_sql(input_sql, columns) -%}
    select distinct
    {%- for column in columns %}
        {{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
    from ({{ input_sql }}) as dedup_input
{%- endmacro %}

{#-
    One row per key within each group of `group_columns` (the output partition): the latest by
    `order_by`, then by `tie_breakers` (`column` or `column desc`), then by every other column,
    so that the survivor never depends on file order.
-#}
{% macro dedup_key_sql(input_sql, columns, key, order_by, group_columns=[], tie_breakers=[]) -%}
    {%- if key | length == 0 -%}
        {{ exceptions.raise_compiler_error("dedup_key_sql: no key columns given; name at least one") }}
    {%- endif -%}
    {%- set ordering = [compliance.quote_ident(order_by) ~ ' desc'] -%}
    {%- set used = [order_by] + key + group_columns -%}
    {%- for breaker in tie_breakers -%}
        {%- set parts = breaker.split() -%}
        {%- do ordering.append(compliance.quote_ident(parts[0]) ~ (' ' ~ parts[1] if parts | length > 1 else '')) -%}
        {%- do used.append(parts[0]) -%}
    {%- endfor -%}
    {%- for column in columns if column not in used -%}
        {%- do ordering.append(compliance.quote_ident(column)) -%}
    {%- endfor -%}
    select
    {%- for column in columns %}
        {{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
    from (
        select
            dedup_input.*,
            row_number() over (
                partition by {% for column in group_columns + key -%}
        {{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}
    {%- endfor %}
                order by {{ ordering | join(', ') }}
            ) as dbt_compaction_rank
        from ({{ input_sql }}) as dedup_input
    ) as ranked
    where dbt_compaction_rank = 1
{%- endmacro %}

{% macro dedup_sql(input_sql, columns, settings, group_columns=[]) -%}
    {%- if settings.dedup == 'key' -%}
        {{ return(compliance.dedup_key_sql(
            input_sql, columns, settings.key, settings.order_by, group_columns, settings.tie_breakers)) }}
    {%- else -%}
        {{ return(compliance.dedup_all_sql(input_sql, columns)) }}
    {%- endif -%}
{%- endmacro %}

{#- The start of an hourly partition (ds 'yyyy-MM-dd', hr 0-23 as number or text) as a timestamp. -#}
{% macro hour_start_sql(alias=none) -%}
    {%- set prefix = (alias ~ '.') if alias else '' -%}
    to_timestamp(
        concat(cast({{ prefix }}`ds` as string), ' ', lpad(cast({{ prefix }}`hr` as string), 2, '0')),
        'yyyy-MM-dd HH'
    )
{%- endmacro %}

{#- True for hours that started at least min_seconds and less than max_seconds before `now`. -#}
{% macro hour_window_predicate(now, min_seconds, max_seconds, alias=none) -%}
    unix_timestamp({{ compliance.hour_start_sql(alias) }})
        <= unix_timestamp(to_timestamp({{ compliance.sql_string(now) }})) - {{ min_seconds | int }}
    and unix_timestamp({{ compliance.hour_start_sql(alias) }})
        > unix_timestamp(to_timestamp({{ compliance.sql_string(now) }})) - {{ max_seconds | int }}
{%- endmacro %}

{#- No rows, shaped like a per-hour count (ds, hr, `count_column`): the branch for an absent input. -#}
{% macro no_hours_sql(count_column) -%}
    select
        cast(null as string) as ds,
        cast(null as string) as hr,
        cast(null as bigint) as {{ compliance.quote_ident(count_column) }}
    where false
{%- endmacro %}
