{#-
    The purge node: removes the rows whose identifier is in var compliance_id_table from every
    whitelisted, onboarded table (macros/purge/).  Its relation holds this run's result rows.
    It reads the id table as the source `compliance.id_table`.  A project that builds the id
    table or the onboarded tables itself lists those nodes in var `purge_depends_on`, so that
    `dbt build` builds them first.
-#}
{{ config(materialized='purge') }}
-- depends_on: {{ source('compliance', 'id_table') }}
{%- for node in var('purge_depends_on', []) %}
-- depends_on: {{ ref(node) }}
{%- endfor %}
select 1 as purge
