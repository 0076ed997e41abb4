{#-
    The purge node: removes the rows whose identifier is in var compliance_id_table from every
    whitelisted, onboarded table (macros/purge/).  Its relation holds this run's result rows.
    `depends_on` makes `dbt build` create the id table and the demo table first; tests and
    other warehouses set var purge_depends_on to their own nodes, or to [].
-#}
{{ config(materialized='purge') }}
{%- for node in var('purge_depends_on', ['demo_guest_ids', 'demo_tracking_event']) %}
-- depends_on: {{ ref(node) }}
{%- endfor %}
select 1 as purge
