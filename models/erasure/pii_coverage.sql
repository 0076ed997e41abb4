{#-
    Coverage (macros/erasure/coverage.sql): the tables that may hold identifiers but are not
    onboarded for the purge, each `onboarded_needed` or `excepted` by the seed
    pii_coverage_exceptions.  Built from the catalog and the audit's lineage tables; it holds
    table and field names, never an id value.
-#}
{{ config(enabled=compliance.purge_configured()) }}
{#- the exceptions seed: this package's, or the installing project's named by var pii_coverage_exceptions -#}
{%- set exceptions_relation = ref(var('pii_coverage_exceptions', 'pii_coverage_exceptions')) -%}
{%- set edges_relation = ref('dbt_lineage_edges') -%}
{%- set nodes_relation = ref('dbt_nodes') -%}
{%- set rows = compliance.pii_coverage_findings(exceptions_relation, edges_relation, nodes_relation) if execute else [] -%}
with

findings as (
    {{ compliance.pii_coverage_rows_sql(rows) }}
),

final as (
    select
        finding_id,
        table_id,
        database_name,
        table_name,
        finding,
        matched_columns,
        upstream_tables,
        exception_pattern,
        exception_reason,
        case when exception_reason is null then 'onboarded_needed' else 'excepted' end as status,
        action,
        current_timestamp() as checked_at
    from findings
)

select * from final
