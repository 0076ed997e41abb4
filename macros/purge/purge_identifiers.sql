-- noqa: disable=LT02
{#
    The id table and a table's identifier as the purge reads them, for the erasure verification:
    the same checks and messages as the purge engine's (python_hooks/purge/planning.py).
#}

{#- {database, table, column, type, name} of vars compliance_id_table / compliance_id_column; a run-time error naming the var otherwise. -#}
{% macro purge_id_source() -%}
    {{ return(adapter.purge_id_source(var('compliance_id_table', '') | string, var('compliance_id_column', '') | string)) }}
{%- endmacro %}

{#- {field, path, type} of a table's dataset.descriptor, resolved and checked against the ids; {error} when it cannot be honoured. -#}
{% macro purge_resolve_identifier(info, ids) -%}
    {{ return(adapter.purge_resolve_identifier(info.database, info.table, ids)) }}
{%- endmacro %}
