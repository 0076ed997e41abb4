{#-
    Fails while pii_coverage lists a table that is neither onboarded nor excepted.  Each row (and
    a log line per table) names the table, what matched and what to do: onboard it
    (`dbt run-operation onboard`) or add it to the seed pii_coverage_exceptions with a reason.
-#}
{{ config(tags=['erasure']) }}
{% do compliance.pii_coverage_report(ref('pii_coverage')) %}
with

coverage as (
    select * from {{ ref('pii_coverage') }}
),

final as (
    select
        table_id,
        finding,
        matched_columns,
        upstream_tables,
        action
    from coverage
    where status = 'onboarded_needed'
)

select * from final
