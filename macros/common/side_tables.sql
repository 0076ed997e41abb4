-- noqa: disable=LT02
{#
    Side tables (the staging, backup and trash tables that purge and restore create next to a
    live table) are registered, not guessed from their names: each carries these table
    properties, and retention, restore and verification act only on tables that do.  A user's
    table that merely looks like one (`orders_backup_202401151200`) is never touched.
#}

{#- The properties of a side table of `database.table`, made by this run at `ts` (epoch ms). -#}
{% macro side_table_properties(kind, database, table, ts) -%}
    {%- if kind not in ['staging', 'backup', 'trash'] -%}
        {%- do exceptions.raise_compiler_error("side_table_properties: kind " ~ tojson(kind) ~ " is not one of staging, backup, trash.") -%}
    {%- endif -%}
    {{ return({
        'lakehouse.side_table': kind,
        'lakehouse.side_table.of': (database ~ '.' ~ table) | lower,
        'lakehouse.side_table.created_at': ts | string,
        'lakehouse.side_table.invocation_id': invocation_id | string,
    }) }}
{%- endmacro %}

{#- `tblproperties ('k' = 'v', ...)` of a dict, keys in order; '' for none. -#}
{% macro tblproperties_clause(properties) -%}
    {%- if properties -%}
        {%- set pairs = [] -%}
        {%- for key in properties | sort -%}
            {%- do pairs.append(compliance.sql_string(key) ~ ' = ' ~ compliance.sql_string(properties[key])) -%}
        {%- endfor -%}
tblproperties ({{ pairs | join(', ') }})
    {%- endif -%}
{%- endmacro %}

{#- `alter table ... set tblproperties (...)` registering an existing table as a side table. -#}
{% macro register_side_table_sql(database, side_table, properties) -%}
alter table {{ compliance.table_ref(database, side_table) }} set {{ compliance.tblproperties_clause(properties) }}
{%- endmacro %}
