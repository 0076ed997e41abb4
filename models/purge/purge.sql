{#-
    The purge node: removes the rows whose identifier is in var compliance_id_table from every
    whitelisted, onboarded table (macros/purge/).  Its relation holds this run's result rows.
    It reads the id table as the source `compliance.id_table`, and exists only once that var
    names it (macros/common/capabilities.sql).  Var `purge_depends_on` lists the nodes of the
    installing project that build the id table or the onboarded tables, or declare them as
    sources (`sales.orders`): `dbt build` builds them first, and the lineage graph shows them as
    the purge's inputs, so what the purge covers is visible in the docs.
-#}
{{ config(materialized='purge', enabled=compliance.purge_configured()) }}
-- depends_on: {{ source('compliance', 'id_table') }}
{%- for name in compliance.purge_depends_on() %}
-- depends_on: {{ compliance.project_node(name) }}
{%- endfor %}
select 1 as purge
