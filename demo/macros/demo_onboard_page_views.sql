{#-
    `dbt run-operation demo_onboard_page_views`: onboards the hourly staging input
    (`kafka.page_view_hourly_staging`) and the tables compaction makes of it, by `member_id`.
    The input must be onboarded with its outputs: purging only the outputs, the next compaction
    of an hour (late records, recompaction) would copy the ids back from the input.  The demo does
    it after its compaction steps because a purge of the input before compaction leaves its hours
    short of the producers' expected counts (docs/erasure.md, Coverage).
-#}
{% macro demo_onboard_page_views() %}
    {%- set tables = {'kafka.page_view_hourly_staging': 'member_id'} -%}
    {%- for table in ['page_view_hourly', 'page_view_hourly_late', 'page_view_daily'] -%}
        {%- do tables.update({target.schema ~ '.' ~ table: 'member_id'}) -%}
    {%- endfor -%}
    {%- do compliance.onboard_tables(tables=tables) -%}
{% endmacro %}
