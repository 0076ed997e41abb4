-- noqa: disable=LT02
{#
    The verification node's SQL: tables to check come from the purge node's rows of this run
    (no FAILED or DRY_RUN row: those are expected to still hold ids; `include_unfinished` keeps
    them, for the erasure models' live check).
#}
{% macro purge_verification_targets(results_relation, include_unfinished=false) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set existing = adapter.get_relation(database=results_relation.database, schema=results_relation.schema, identifier=results_relation.identifier) -%}
    {%- if existing is none -%}{{ return([]) }}{%- endif -%}
    {%- set query -%}
        select
            database_name,
            table_name,
            max(identifier_field) as identifier_field
        from {{ results_relation }}
        where identifier_field is not null
        group by database_name, table_name
        {%- if not include_unfinished %}
        having sum(case when state in ('FAILED', 'DRY_RUN') then 1 else 0 end) = 0
        {%- endif %}
        order by database_name, table_name
    {%- endset -%}
    {%- set targets = [] -%}
    {%- for row in run_query(query).rows -%}
        {%- do targets.append({'database': row[0], 'table': row[1], 'identifier': row[2]}) -%}
    {%- endfor -%}
    {{ return(targets) }}
{%- endmacro %}

{% macro purge_remaining_ids_sql(targets) -%}
    {%- if targets -%}
        {%- set ids = (var('compliance_id_table', '') | string | trim | lower).split('.') -%}
        {%- set id_column = var('compliance_id_column', '') | string | trim -%}
    {%- endif -%}
    {%- for target in targets %}
    select
        {{ compliance.sql_string(target.database) }} as database_name,
        {{ compliance.sql_string(target.table) }} as table_name,
        {{ compliance.sql_string(target.identifier) }} as identifier_field,
        count(*) as remaining_rows
    from {{ compliance.table_ref(target.database, target.table) }} as a
    left semi join {{ compliance.purge_ids_relation(ids[0], ids[1], id_column) }} as b
        on {{ compliance.purge_identifier_expr('a', target.identifier.split('.')) }} = b.{{ compliance.quote_ident(id_column) }}
    {{ "union all" if not loop.last }}
    {%- else %}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['identifier_field', 'string'],
        ['remaining_rows', 'bigint']]) }}
    {%- endfor %}
{%- endmacro %}

{% macro purge_assert_verified(relation) -%}
    {%- if execute -%}
        {%- set query -%}
            select table_id, identifier_field, remaining_rows from {{ relation }} where remaining_rows > 0 order by table_id
        {%- endset -%}
        {%- set rows = run_query(query).rows -%}
        {%- if rows | length > 0 -%}
            {%- set lines = [] -%}
            {%- for row in rows -%}
                {%- do lines.append('  ' ~ row[0] ~ ': ' ~ row[2] ~ ' row(s) whose ' ~ row[1] ~ ' is in ' ~ var('compliance_id_table')) -%}
            {%- endfor -%}
            {%- do exceptions.raise_compiler_error("Purge verification failed: purged tables still hold listed ids:\n" ~ lines | join('\n')
                ~ "\nRun `dbt run --select purge+` again; if the ids come back, find the job that writes them.") -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- The verification model's body: one check per table of the last purge run. -#}
{% macro purge_verification_checks_sql(results_relation) -%}
    {{ return(compliance.purge_remaining_ids_sql(compliance.purge_verification_targets(results_relation))) }}
{%- endmacro %}
