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
{% macro tblproperties_sql(properties) -%}
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
alter table {{ compliance.table_ref(database, side_table) }} set {{ compliance.tblproperties_sql(properties) }}
{%- endmacro %}

{#-
    `dbt run-operation adopt_side_tables [--args '{apply: true, scope: "db*"}']`: side tables that
    purge and restore made before side tables were registered are left alone by retention and
    restore.  Without `apply` this only lists them (a dry listing, the default); with `apply:
    true` it registers the adoptable ones (named `<table>_<kind>_<ts>`, beside an existing
    `<table>` with the same columns and partition columns).  The others are named with the reason.
-#}
{% macro adopt_side_tables(apply=false, scope='') %}
    {%- set do_apply = compliance.parse_bool(apply, 'adopt_side_tables argument apply') -%}
    {%- set patterns = compliance.parse_table_patterns(scope, 'adopt_side_tables argument scope') -%}
    {%- set databases = [] -%}
    {%- for database in adapter.catalog_databases() if not patterns or compliance.database_selected(database, patterns) -%}
        {%- do databases.append(database) -%}
    {%- endfor -%}
    {%- set candidates = [] -%}
    {%- for row in adapter.side_table_adoption_candidates(databases) -%}
        {%- if not patterns or compliance.table_selected(row.database, row.table, patterns, []) -%}
            {%- do candidates.append(row) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set adoptable = candidates | selectattr('adoptable') | list -%}
    {%- do log("adopt_side_tables: " ~ candidates | length ~ " unregistered table(s) named like side tables; " ~ adoptable | length ~ " adoptable"
        ~ ("" if do_apply else " (a listing only: run again with --args '{apply: true}' to adopt them)"), info=true) -%}
    {%- for row in candidates -%}
        {%- if row.adoptable -%}
            {%- if do_apply -%}
                {% call statement('adopt_side_table') %}
                    {{ compliance.register_side_table_sql(row.database, row.table, compliance.side_table_properties(row.kind, row.database, row.of.split('.')[1], row.ts)) }}
                {% endcall %}
            {%- endif -%}
            {%- do log("  " ~ row.database ~ "." ~ row.table ~ ": " ~ row.kind ~ " of " ~ row.of ~ ", made at " ~ row.ts ~ (": adopted" if do_apply else ": would be adopted"), info=true) -%}
        {%- else -%}
            {%- do log("  " ~ row.database ~ "." ~ row.table ~ ": not adopted (" ~ row.reason ~ "); left as a table of its own", info=true) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(candidates) }}
{% endmacro %}
