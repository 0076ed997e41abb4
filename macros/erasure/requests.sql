-- noqa: disable=LT02
{#
    Erasure requests: what links a request to the purge runs that served it, and where its ids
    may still be.  No macro here copies an id anywhere: ids are read from the id table (the
    source `compliance.id_table`) inside the queries that need them, and only counts,
    locations and dates are written.

    The id table may carry `request_id` (string) and `requested_at` (timestamp).  Without
    `request_id`, a request is a purge run: its id is the run's dbt invocation_id and its ids are
    every id of the id table.
#}

{#- The id table's column names, lower-cased ([] at parse time or when it does not exist). -#}
{% macro erasure_id_table_columns() -%}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set source_relation = source('compliance', 'id_table') -%}
    {%- set relation = adapter.get_relation(database=source_relation.database, schema=source_relation.schema, identifier=source_relation.identifier) -%}
    {%- if relation is none -%}{{ return([]) }}{%- endif -%}
    {%- set names = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do names.append(column.name | lower) -%}
    {%- endfor -%}
    {{ return(names) }}
{%- endmacro %}

{#- True when the id table carries `request_id`: requests are then the user's, not purge runs. -#}
{% macro erasure_has_request_ids() -%}
    {{ return('request_id' in compliance.erasure_id_table_columns()) }}
{%- endmacro %}

{#-
    The ids of the id table with the request each belongs to: columns `id`, `request_id`
    (null when the id table has no `request_id`: every request then holds every id) and
    `requested_at`.  NULL ids purge nothing and are left out.
-#}
{% macro erasure_listed_ids_sql() -%}
    {%- set columns = compliance.erasure_id_table_columns() -%}
    {%- set id_column = compliance.quote_ident(var('compliance_id_column', 'guestid') | string | trim) -%}
    select
        listed.{{ id_column }} as id,
        {{ 'cast(listed.request_id as string)' if 'request_id' in columns else 'cast(null as string)' }} as request_id,
        {{ 'cast(listed.requested_at as timestamp)' if 'requested_at' in columns else 'cast(null as timestamp)' }} as requested_at
    from {{ source('compliance', 'id_table') }} as listed
    where listed.{{ id_column }} is not null
{%- endmacro %}

{#-
    The select of one request's ids (column `id`): the rows of the id table with that
    `request_id`, or every id when the id table has no `request_id` (a request is then a run).
-#}
{% macro erasure_request_ids_sql(request_id) -%}
    select listed.id
    from ({{ compliance.erasure_listed_ids_sql() }}) as listed
    {%- if compliance.erasure_has_request_ids() %}
    where listed.request_id = {{ compliance.sql_string(request_id) }}
    {%- endif %}
{%- endmacro %}

{#- A location as a key: `file:///x`, `file:/x/` and `file:/x` compare equal. -#}
{% macro erasure_location_key(expression) -%}
    regexp_replace(regexp_replace({{ expression }}, '^file:/+', 'file:/'), '/+$', '')
{%- endmacro %}

{#-
    The tables the live check reads: every table the last purge run examined, FAILED and dry-run
    ones included (purge_verification_targets), that still exists.
    [{database, table, identifier}]
-#}
{% macro erasure_live_targets(results_relation) -%}
    {%- set targets = [] -%}
    {%- for target in compliance.purge_verification_targets(results_relation, include_unfinished=true) -%}
        {%- if adapter.get_relation(database=none, schema=target.database, identifier=target.table) is not none -%}
            {%- do targets.append(target) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(targets) }}
{%- endmacro %}

{#-
    Per live table and request: the rows whose identifier is one of the request's ids
    (columns database_name, table_name, identifier_field, request_id, remaining_rows; a table
    holding none gives no row).  One broadcast semi-join per table, all in one query.  Every
    row of every table is read, except right after a purge in the same dbt invocation: that
    purge's scan has just found its SKIPPED partitions clean, so only the others (rewritten,
    failed, dry-run) are read again.
-#}
{% macro erasure_live_findings_sql(targets) -%}
    {%- set scans = [] -%}
    {%- for target in targets -%}
        {%- set predicate = compliance.purge_checked_rows_predicate(target) if target.invocation_id == invocation_id else '' -%}
        {%- if predicate is not none -%}{%- do scans.append([target, predicate]) -%}{%- endif -%}
    {%- endfor -%}
    {%- for target, predicate in scans %}
    select
        {{ compliance.sql_string(target.database) }} as database_name,
        {{ compliance.sql_string(target.table) }} as table_name,
        {{ compliance.sql_string(target.identifier) }} as identifier_field,
        listed.request_id,
        count(*) as remaining_rows
    from {{ compliance.table_ref(target.database, target.table) }} as a
    inner join ({{ compliance.erasure_listed_ids_sql() }}) as listed
        on {{ compliance.purge_identifier_expr('a', target.identifier.split('.')) }} = listed.id
        {%- if predicate %}
    where {{ predicate }}
        {%- endif %}
    group by listed.request_id
    {{ "union all" if not loop.last }}
    {%- else %}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['identifier_field', 'string'],
        ['request_id', 'string'], ['remaining_rows', 'bigint']]) }}
    {%- endfor %}
{%- endmacro %}

{#-
    The retention schedule of every table the purge log names, as rows: database_name,
    table_name, in_scope (false: outside `retention_scope`, never cleaned) and copy_days (after
    how many days retention deletes a pre-purge copy, retention_copy_days; null: no age limit).
-#}
{% macro erasure_copy_policies_sql(purge_log_relation, policies_relation) -%}
    {%- set pairs = [] -%}
    {%- if execute and load_relation(purge_log_relation) is not none -%}
        {%- for row in run_query('select distinct database_name, table_name from ' ~ purge_log_relation ~ " where state = 'COMMITTED' order by 1, 2").rows -%}
            {%- do pairs.append([row[0], row[1]]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if not pairs -%}
    {{ compliance.empty_select_sql([['database_name', 'string'], ['table_name', 'string'], ['in_scope', 'boolean'], ['copy_days', 'double']]) }}
    {%- else -%}
        {%- set defaults = compliance.retention_defaults() -%}
        {%- set rows = compliance.retention_policy_rows(policies_relation) -%}
        {%- set scope = compliance.parse_table_patterns(var('retention_scope', ''), 'retention_scope') -%}
    select
        database_name,
        table_name,
        in_scope,
        cast(copy_days as double) as copy_days
    from values
        {%- for pair in pairs %}
            {%- set days = compliance.retention_copy_days(compliance.retention_policy(pair[0], pair[1], rows, defaults)) %}
        ({{ compliance.sql_string(pair[0]) }}, {{ compliance.sql_string(pair[1]) }},
            {{ 'true' if compliance.retention_in_scope(pair[0], pair[1], scope) else 'false' }},
            {{ 'cast(null as double)' if days is none else days }}){{ "," if not loop.last }}
        {%- endfor %}
        as policy (database_name, table_name, in_scope, copy_days)
    {%- endif -%}
{%- endmacro %}

{#- `erasure_deadline_days` (default 30) as a number of days; anything else is an error naming the var. -#}
{% macro erasure_deadline_days() -%}
    {%- set value = var('erasure_deadline_days', 30) | string | trim -%}
    {%- if not modules.re.fullmatch('[0-9]+(\.[0-9]+)?', value) -%}
        {%- do exceptions.raise_compiler_error("erasure_deadline_days: '" ~ value ~ "' is not a number of days (a non-negative number, e.g. 30)") -%}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}
