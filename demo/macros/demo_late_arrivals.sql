{#
    Demo only: land late records in `kafka.page_view_hourly_staging` for the most recent hour
    `page_view_hourly` has compacted: a re-sent copy (later event_ts) of every 20th event of the
    hour, twice byte for byte, with ingested_at = now, i.e. after the hour's compaction started.
    `dbt run-operation compaction_demo_late_arrivals`, then `dbt run --select compaction+`.
#}
{% macro compaction_demo_late_arrivals() %}
    {%- set staging = ref('demo_page_view_hourly_staging') -%}
    {%- set watermarks = compliance.compaction_relation('compaction_watermarks', target.schema) -%}
    {%- if adapter.get_relation(database=none, schema=target.schema, identifier='compaction_watermarks') is none -%}
        {{ exceptions.raise_compiler_error(
            "No " ~ watermarks ~ " yet: run `dbt run --select +compaction` before landing late records") }}
    {%- endif -%}
    {%- set latest = run_query(
        "select ds, hr from " ~ watermarks ~ " where dataset = 'page_view'"
        ~ " order by ds desc, cast(hr as int) desc limit 1") -%}
    {%- if latest.rows | length == 0 -%}
        {{ exceptions.raise_compiler_error("page_view_hourly has compacted no hour yet: nothing can be late") }}
    {%- endif -%}
    {%- set ds, hr = latest.rows[0][0], latest.rows[0][1] -%}
    {% call statement('land_late_records') %}
        insert into {{ staging }} partition (`ds` = {{ compliance.sql_string(ds) }}, `hr` = {{ hr | int }})
        select event_id, member_id, '/late' as page, event_ts + interval 1 minute as event_ts, current_timestamp() as ingested_at
        from {{ staging }}
        cross join (select explode(array(1, 2)) as copy)
        where `ds` = {{ compliance.sql_string(ds) }} and `hr` = {{ hr | int }} and event_id % 20 = 0
            and page != '/late'
    {% endcall %}
    {{ log("Landed late records in " ~ staging ~ " for ds=" ~ ds ~ "/hr=" ~ hr, info=true) }}
{% endmacro %}
