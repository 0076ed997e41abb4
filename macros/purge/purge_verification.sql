-- noqa: disable=LT02
{#
    The verification node's SQL: tables to check come from the purge node's rows of this run
    (no FAILED or DRY_RUN row: those are expected to still hold ids; `include_unfinished` keeps
    them, for the erasure models' live check).  Each target says what must be read again:
    `specs`, the partitions the purge rewrote (with `include_unfinished`, also those it failed or
    would rewrite), and `whole` when that is the table itself (unpartitioned, or a table-level
    failure).  A partition the purge's scan found clean is not read again: that scan is its
    evidence, and it ran moments before in the same run.
#}
{% macro purge_verification_targets(results_relation, include_unfinished=false) -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set existing = adapter.get_relation(database=results_relation.database, schema=results_relation.schema, identifier=results_relation.identifier) -%}
    {%- if existing is none -%}{{ return([]) }}{%- endif -%}
    {%- set states = "'COMMITTED', 'FAILED', 'DRY_RUN'" if include_unfinished else "'COMMITTED'" -%}
    {%- set query -%}
        select
            database_name,
            table_name,
            max(identifier_field) as identifier_field,
            concat_ws('\n', collect_set(case when state in ({{ states }}) then partition_spec end)) as specs,
            max(case when state in ({{ states }}) and partition_spec is null then 1 else 0 end) as whole_table,
            max(invocation_id) as invocation_id,
            -- an Iceberg table's rows say so (python_hooks/purge/iceberg.py, LABEL): read through
            -- Iceberg's catalog, which the session catalog cannot read it without
            max(case when reason like 'Apache Iceberg:%' then 1 else 0 end) as iceberg
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
        {%- do targets.append({'database': row[0], 'table': row[1], 'identifier': row[2],
            'specs': (row[3] or '').split('\n') | reject('equalto', '') | sort | list, 'whole': row[4] == 1, 'invocation_id': row[5],
            'catalog': 'iceberg' if row[6] == 1 else none}) -%}
    {%- endfor -%}
    {{ return(targets) }}
{%- endmacro %}

{#-
    The `where` of what a target's check reads: '' (the whole table), `(k = 'v') or (...)` (its
    listed partitions), or none when there is nothing to read.
-#}
{% macro purge_checked_rows_predicate(target, alias='a') -%}
    {%- if target.whole -%}{{ return('') }}{%- endif -%}
    {%- if not target.specs -%}{{ return(none) }}{%- endif -%}
    {%- set terms = [] -%}
    {%- for spec in target.specs -%}
        {%- do terms.append('(' ~ compliance.partition_predicate(adapter.partition_values(spec), alias) ~ ')') -%}
    {%- endfor -%}
    {{ return(terms | join(' or ')) }}
{%- endmacro %}

{#-
    Per target: the rows still holding a listed id in what the purge rewrote, one query for all.
    `checked` says what was read: `rewritten partitions`, `rewritten table` or, for a table the
    purge found clean, `purge scan` (nothing read again; remaining_rows 0 from that scan).
-#}
{% macro purge_remaining_ids_sql(targets) -%}
    {%- set scans = [] -%}
    {%- set clean = [] -%}
    {%- for target in targets -%}
        {%- set predicate = compliance.purge_checked_rows_predicate(target) -%}
        {%- if predicate is none -%}{%- do clean.append(target) -%}{%- else -%}{%- do scans.append([target, predicate]) -%}{%- endif -%}
    {%- endfor -%}
    {%- if scans -%}
        {%- set ids = compliance.id_table_name() -%}
        {%- set id_column = var('compliance_id_column', '') | string | trim -%}
    {%- endif -%}
    {%- for target, predicate in scans %}
    select
        {{ compliance.sql_string(target.database) }} as database_name,
        {{ compliance.sql_string(target.table) }} as table_name,
        {{ compliance.sql_string(target.identifier) }} as identifier_field,
        count(*) as remaining_rows,
        {{ "'rewritten table'" if target.whole else "'rewritten partitions'" }} as checked,
        {{ target.specs | length if not target.whole else 'cast(null as int)' }} as partitions_checked
    from {{ compliance.table_ref(target.database, target.table, target.catalog) }} as a
    left semi join {{ compliance.purge_ids_relation(ids[0], ids[1], id_column) }} as b
        on {{ compliance.purge_identifier_expr('a', target.identifier.split('.')) }} = b.{{ compliance.quote_ident(id_column) }}
        {%- if predicate %}
    where {{ predicate }}
        {%- endif %}
    {{ "\n    union all\n" if not loop.last or clean }}
    {%- endfor %}
    {%- if clean %}
    {#- the tables the purge's scan found clean: one row each, nothing read -#}
    select
        database_name,
        table_name,
        identifier_field,
        cast(0 as bigint) as remaining_rows,
        'purge scan' as checked,
        0 as partitions_checked
    from ({{ compliance.purge_targets_sql(clean) }}) as clean
    {%- elif not scans %}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['identifier_field', 'string'],
        ['remaining_rows', 'bigint'], ['checked', 'string'], ['partitions_checked', 'int']]) }}
    {%- endif %}
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

{#- Verification targets as rows (database_name, table_name, identifier_field), for the verification and the erasure live check. -#}
{% macro purge_targets_sql(targets) -%}
    {%- if targets -%}
    select * from values
        {%- for target in targets %}
        ({{ compliance.sql_string(target.database) }}, {{ compliance.sql_string(target.table) }}, {{ compliance.sql_string(target.identifier) }}){{ "," if not loop.last }}
        {%- endfor %}
        as checked (database_name, table_name, identifier_field)
    {%- else -%}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['identifier_field', 'string']]) }}
    {%- endif -%}
{%- endmacro %}
