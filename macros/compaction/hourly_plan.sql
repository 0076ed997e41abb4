{#
    The plan of one hourly compaction run: one row per hour in the time window and what happens
    to it.  Actions that publish into the hourly table: compact, recompact,
    recompact_from_output.  Actions that write a completion record (Gobblin's
    _COMPACTION_COMPLETE): compact, recompact, copy_late.  Held and skipped hours are only logged.
#}
{% macro hourly_plan_sql(source_relation, counts_relation, watermarks_relation, log_relation, late_relation, settings, late_after=none) -%}
{%- set now = compliance.sql_string(settings.now) -%}
{%- set dataset = compliance.sql_string(settings.dataset) -%}
with

last_watermarks as (
    select
        ds,
        hr,
        max(compaction_started_at) as last_compacted_at
    from {{ watermarks_relation }}
    where dataset = {{ dataset }}
    group by ds, hr
),

skipped_for_good as (
    select distinct
        ds,
        hr
    from {{ log_relation }}
    where dataset = {{ dataset }} and action = 'skip'
),

expected_counts as ({{ compliance.hourly_plan_expected_counts_sql(counts_relation) }}),

hours as ({{ compliance.hourly_plan_hours_sql(source_relation, settings, late_after) }}),

{% if settings.recompact_from_output -%}
decided as ({{ compliance.hourly_plan_recompact_decisions_sql(late_relation, settings) }}),
{%- else -%}
decided as ({{ compliance.hourly_plan_decisions_sql(settings) }}),
{%- endif %}

final as (
    select
        {{ dataset }} as dataset,
        ds,
        hr,
        hour_start,
        action,
        reason,
        rows_in,
        expected_count,
        late_rows,
        last_compacted_at,
        to_timestamp({{ now }}) as compaction_started_at,
        {{ compliance.sql_string(invocation_id) }} as invocation_id
    from decided
)

select * from final
{%- endmacro %}

{#- The expected row count of each hour (the counts relation), or no hours without one. -#}
{% macro hourly_plan_expected_counts_sql(counts_relation) -%}
{% if counts_relation is not none -%}
select
    cast(`ds` as string) as ds,
    cast(`hr` as string) as hr,
    sum(expected_count) as expected_count
from {{ counts_relation }}
group by 1, 2
{%- else %}
{{ compliance.no_hours_sql('expected_count') }}
{%- endif %}
{%- endmacro %}

{#-
    Per hour: rows ready (ingested by `now`) and late rows (ingested after the hour's last
    completion record).  The ready count is one aggregate over ds, hr and ingested_at, the window
    pruning the partitions.  Only hours with a completion record can have late rows, and only rows
    ingested after the earliest of those records (`late_after`, a literal, so that parquet and ORC
    skip the row groups written before it) are joined to their hour's record.
-#}
{% macro hourly_plan_hours_sql(source_relation, settings, late_after=none) -%}
{%- set now = compliance.sql_string(settings.now) -%}
{%- set ingested_at = compliance.quote_ident(settings.ingested_at) -%}
select
    ready.ds,
    ready.hr,
    {{ compliance.hour_start_sql('ready') }} as hour_start,
    ready.rows_ready,
    coalesce(late.late_rows, 0) as late_rows,
    last_watermarks.last_compacted_at
from (
    select
        cast(source.`ds` as string) as ds,
        cast(source.`hr` as string) as hr,
        count(*) as rows_ready
    from {{ source_relation }} as source
    where {{ compliance.hour_window_predicate(settings.now, settings.min_seconds, settings.max_seconds, 'source') }}
        and source.{{ ingested_at }} <= to_timestamp({{ now }})
    group by 1, 2
) as ready
left join last_watermarks
    on ready.ds = last_watermarks.ds and ready.hr = last_watermarks.hr
left join (
{{ compliance.hourly_plan_late_counts_sql(source_relation, settings, late_after) }}
) as late
    on ready.ds = late.ds and ready.hr = late.hr
{%- endmacro %}

{#- Per hour with a completion record: the rows ingested after it (and after `late_after`), up to `now`. -#}
{% macro hourly_plan_late_counts_sql(source_relation, settings, late_after) -%}
{%- set now = compliance.sql_string(settings.now) -%}
{%- set ingested_at = compliance.quote_ident(settings.ingested_at) -%}
{%- if late_after is not none %}
select /*+ BROADCAST(last_watermarks) */
    cast(source.`ds` as string) as ds,
    cast(source.`hr` as string) as hr,
    count(*) as late_rows
from {{ source_relation }} as source
inner join last_watermarks
    on cast(source.`ds` as string) = last_watermarks.ds
        and cast(source.`hr` as string) = last_watermarks.hr
where {{ compliance.hour_window_predicate(settings.now, settings.min_seconds, settings.max_seconds, 'source') }}
    and source.{{ ingested_at }} <= to_timestamp({{ now }})
    and source.{{ ingested_at }} > cast({{ compliance.sql_string(late_after) }} as timestamp)
    and source.{{ ingested_at }} > last_watermarks.last_compacted_at
group by 1, 2
{%- else %}
{{ compliance.no_hours_sql('late_rows') }}
{%- endif %}
{%- endmacro %}

{#- Recompaction from output: every hour in the window with late rows, merged with its published rows. -#}
{% macro hourly_plan_recompact_decisions_sql(late_relation, settings) -%}
select
    late.ds,
    late.hr,
    min({{ compliance.hour_start_sql('late') }}) as hour_start,
    count(*) as rows_in,
    cast(null as bigint) as expected_count,
    cast(0 as bigint) as late_rows,
    cast(null as timestamp) as last_compacted_at,
    'recompact_from_output' as action,
    'merging the published hour with its late rows; the watermark stays' as reason
from (
    select
        cast(`ds` as string) as ds,
        cast(`hr` as string) as hr
    {% if late_relation is not none -%}
    from {{ late_relation }}
    {%- else %}
    from (select cast(null as string) as ds, cast(null as string) as hr) where false
    {% endif %}
) as late
where {{ compliance.hour_window_predicate(settings.now, settings.min_seconds, settings.max_seconds, 'late') }}
group by late.ds, late.hr
{%- endmacro %}

{#- Each hour's action (compact, hold, skip, up_to_date or the late-data policy) and the reason for it. -#}
{% macro hourly_plan_decisions_sql(settings) -%}
{%- set now = compliance.sql_string(settings.now) -%}
select
    hours.ds,
    hours.hr,
    hours.hour_start,
    case when hours.last_compacted_at is not null and {{ compliance.sql_string(settings.late_data_policy) }} = 'copy_late'
        then hours.late_rows else hours.rows_ready end as rows_in,
    expected_counts.expected_count,
    hours.late_rows,
    hours.last_compacted_at,
    case
        when skipped_for_good.ds is not null then 'skip'
        when hours.last_compacted_at is not null and hours.late_rows = 0 then 'up_to_date'
        when hours.last_compacted_at is not null then {{ compliance.sql_string(settings.late_data_policy) }}
{% if settings.verify -%}
        when coalesce(hours.rows_ready >= expected_counts.expected_count, false) then 'compact'
        when unix_timestamp(hours.hour_start) + 3600 * ({{ settings.timeout_hours }} + 1)
            > unix_timestamp(to_timestamp({{ now }})) then 'hold'
        when {{ compliance.sql_string(settings.timeout_action) }} = 'skip' then 'skip'
        {% endif -%}
        else 'compact'
    end as action,
    case
        when skipped_for_good.ds is not null then 'skipped for good by an earlier run'
        when hours.last_compacted_at is not null and hours.late_rows = 0 then 'compacted before, no late rows'
        when hours.last_compacted_at is not null then concat(hours.late_rows, ' late rows since ', hours.last_compacted_at)
        {% if settings.verify -%}
        when coalesce(hours.rows_ready >= expected_counts.expected_count, false) then 'verified complete'
        when expected_counts.expected_count is null then 'no expected count to verify against'
        else concat('incomplete: ', hours.rows_ready, ' of ', expected_counts.expected_count, ' expected rows')
        {%- else %}
        else 'completeness not verified for this dataset'
{%- endif %}
    end
{%- if settings.verify %}
    || case
        when hours.last_compacted_at is null and skipped_for_good.ds is null
            and not coalesce(hours.rows_ready >= expected_counts.expected_count, false)
            and unix_timestamp(hours.hour_start) + 3600 * ({{ settings.timeout_hours }} + 1)
            <= unix_timestamp(to_timestamp({{ now }}))
            then {{ compliance.sql_string('; verification timed out after ' ~ settings.timeout_hours ~ 'h, ' ~ ('published anyway' if settings.timeout_action == 'publish' else 'skipped for good')) }}
        else ''
    end
{%- endif %} as reason
from hours
left join expected_counts
    on hours.ds = expected_counts.ds and hours.hr = expected_counts.hr
left join skipped_for_good
    on hours.ds = skipped_for_good.ds and hours.hr = skipped_for_good.hr
{%- endmacro %}

{#- The rows one run publishes into the hourly table, deduplicated per hour. -#}
{% macro hourly_output_sql(source_relation, plan_relation, recompact_relation, columns, settings) -%}
{%- if settings.recompact_from_output -%}
select
{%- for column in columns %}
    {{ compliance.quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
from {{ recompact_relation }}
    {%- else -%}
    {#-
        The hours to publish, as a filter on the partition columns alone: Spark reads the plan's
        hours once (a scalar subquery) and prunes the input's partitions with them, where a join
        to the plan probed it for every row.  The plan
        never holds a NULL hour (the window predicate drops them), so a row of one matches none.
    -#}
    {%- set input_sql -%}
        select source.*
        from {{ source_relation }} as source
        where array_contains(
                (
                    select collect_list(named_struct('ds', plan.ds, 'hr', plan.hr))
                    from {{ plan_relation }} as plan
                    where plan.action in ('compact', 'recompact')
                ),
                named_struct('ds', cast(source.`ds` as string), 'hr', cast(source.`hr` as string))
            )
            and source.{{ compliance.quote_ident(settings.ingested_at) }} <= to_timestamp({{ compliance.sql_string(settings.now) }})
    {%- endset -%}
{{ compliance.dedup_sql(input_sql, columns, settings, ['ds', 'hr']) }}
    {%- endif -%}
{%- endmacro %}

{#- The late rows of copy_late hours (arrived after the hour's last completion record), deduplicated. -#}
{% macro late_rows_sql(source_relation, plan_relation, columns, settings) -%}
{%- set input_sql -%}
        select source.*
        from {{ source_relation }} as source
        inner join {{ plan_relation }} as plan
            on cast(source.`ds` as string) = plan.ds and cast(source.`hr` as string) = plan.hr
        where plan.action = 'copy_late'
            and source.{{ compliance.quote_ident(settings.ingested_at) }} > plan.last_compacted_at
            and source.{{ compliance.quote_ident(settings.ingested_at) }} <= plan.compaction_started_at
{%- endset -%}
{{ compliance.dedup_sql(input_sql, columns, settings, ['ds', 'hr']) }}
{%- endmacro %}

{#- A published hour merged with its late rows, deduplicated (recompaction from output). -#}
{% macro recompact_from_output_sql(target_relation, late_relation, plan_relation, columns, settings) -%}
{%- set column_list -%}
{%- for column in columns -%}{{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}{%- endfor -%}
{%- endset -%}
{%- set input_sql -%}
select {{ column_list }} from {{ target_relation }} as published
        where exists (
            select 1 from {{ plan_relation }} as plan
            where plan.action = 'recompact_from_output'
                and plan.ds = cast(published.`ds` as string) and plan.hr = cast(published.`hr` as string)
        )
        union all
        select {{ column_list }} from {{ late_relation }} as late
        where exists (
            select 1 from {{ plan_relation }} as plan
            where plan.action = 'recompact_from_output'
                and plan.ds = cast(late.`ds` as string) and plan.hr = cast(late.`hr` as string)
        )
{%- endset -%}
{{ compliance.dedup_sql(input_sql, columns, settings, ['ds', 'hr']) }}
{%- endmacro %}
