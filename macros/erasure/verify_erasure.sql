-- noqa: disable=LT02
{#
    Verification of bytes (docs/erasure.md): for one erasure request, every data file under the
    tables its purge runs rewrote (live, backups, staging, trash, stale locations, reaped backups)
    is read, or skipped where its footer proves it holds none of the ids, and the rows still
    holding the request's ids are counted per location.  The ids are never written anywhere:
    only counts and locations reach the result table and the log.

    The request contract (shared with the request ledger, docs/erasure.md):
    - the ids of request X: `select <id column> from <id table> where request_id = X` when the
      id table has a `request_id` column, else every id of the id table (a request is then a purge
      run, named by its dbt invocation_id);
    - the purge runs that served X: the `invocation_id`s of `erasure_request_log` rows with
      `request_id = X` when that model exists, else every purge run of `purge_log` that was not a
      dry run.
#}

{#- The relations verification reads and writes, all in the target schema (none of them a ref:
    the verification is not downstream of the purge, so `dbt run --select purge+` never runs it). -#}
{% macro erasure_relation(name) -%}
    {{ return(adapter.get_relation(database=none, schema=target.schema, identifier=name)) }}
{%- endmacro %}

{#-
    The select of request X's ids, distinct, under the id column's own name (what the Python side
    reads): the request ledger's compliance.erasure_request_ids_sql, the one definition of a
    request's ids.  `ids` is compliance.purge_id_source().
-#}
{% macro erasure_verify_ids_sql(request_id, ids) -%}
    select distinct requested.id as {{ compliance.quote_ident(ids.column) }}
    from ({{ compliance.erasure_request_ids_sql(request_id) }}) as requested
{%- endmacro %}

{#-
    The COMMITTED partitions of the purge runs that served the request: from `erasure_request_log`
    when `request_log` is a relation, else from every purge run that was not a dry run.
-#}
{% macro erasure_verify_targets_sql(request_id, purge_log, request_log=none) -%}
    select
        database_name,
        table_name,
        partition_spec,
        identifier_field,
        old_location,
        new_location
    from {{ purge_log }}
    where state = 'COMMITTED'
        and not coalesce(dry_run, false)
    {%- if request_log is not none %}
        and invocation_id in (
            select served.invocation_id
            from {{ request_log }} as served
            where served.request_id = {{ compliance.sql_string(request_id) }}
        )
    {%- endif %}
    order by database_name, table_name, partition_spec
{%- endmacro %}

{#-
    The identifier field of a table as the purge reads it now (purge_resolve_identifier: its
    dataset.descriptor, resolved and type-checked against the id column), else the one the purge
    logged.  {field, path, type}
-#}
{% macro erasure_verify_identifier(database, table, logged_field, ids) -%}
    {%- set info = adapter.describe_table(database, table) -%}
    {%- set current = compliance.purge_resolve_identifier(info, ids) if info.exists and 'dataset.descriptor' in info.properties else {'error': true} -%}
    {%- if current.error -%}
        {%- set resolved = adapter.resolve_field(database, table, logged_field) if info.exists else none -%}
        {{ return({'field': logged_field, 'path': resolved.path if resolved else logged_field.split('.'), 'type': resolved.type if resolved else none}) }}
    {%- endif -%}
    {%- if current.field != logged_field -%}
        {%- do log('verify_erasure: ' ~ database ~ '.' ~ table ~ ': its descriptor now names ' ~ current.field ~ ', the purge used '
            ~ logged_field ~ '; verifying ' ~ current.field, info=true) -%}
    {%- endif -%}
    {{ return(current) }}
{%- endmacro %}

{#- What Python needs to verify one request: {request_id, ids_sql, id_column, id_type, tables: [...]} (never the ids). -#}
{% macro erasure_verify_request(request_id) -%}
    {%- set ids = compliance.purge_id_source() -%}
    {%- set purge_log = compliance.erasure_relation('purge_log') -%}
    {%- set tables = [] -%}
    {%- if purge_log is not none -%}
        {%- set request_log = compliance.erasure_relation('erasure_request_log') -%}
        {%- set policy_rows = compliance.retention_policy_rows(compliance.erasure_relation('retention_policies')) -%}
        {%- set defaults = compliance.retention_defaults() -%}
        {%- set by_table = {} -%}
        {%- for row in run_query(compliance.erasure_verify_targets_sql(request_id, purge_log, request_log)).rows -%}
            {%- set key = row['database_name'] ~ '.' ~ row['table_name'] -%}
            {%- if key not in by_table -%}
                {%- set identifier = compliance.erasure_verify_identifier(row['database_name'], row['table_name'], row['identifier_field'], ids) -%}
                {%- set policy = compliance.retention_policy(row['database_name'], row['table_name'], policy_rows, defaults) -%}
                {%- do by_table.update({key: {
                    'database': row['database_name'], 'table': row['table_name'],
                    'identifier_path': identifier.path, 'identifier_type': identifier.type,
                    'partitions': [], 'logged_locations': [],
                    'backup_dir': (policy.get('backup_dir') | string | trim) if policy.get('backup_dir') else none,
                }}) -%}
                {%- do tables.append(by_table[key]) -%}
            {%- endif -%}
            {%- do by_table[key].partitions.append(row['partition_spec'] or '') -%}
            {%- do by_table[key].logged_locations.extend([row['old_location'], row['new_location']]) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return({
        'request_id': request_id | string,
        'ids_sql': compliance.erasure_verify_ids_sql(request_id, ids),
        'id_column': ids.column,
        'id_type': ids.type,
        'tables': tables,
    }) }}
{%- endmacro %}

{#- The summary a user reads: one line per location, the totals, and what the state means. -#}
{% macro erasure_verify_report(result) -%}
    {%- do log('verify_erasure: ' ~ result.id_counts | length ~ ' request(s) verified in ' ~ result.seconds ~ ' s', info=true) -%}
    {%- for request_id, id_count in result.id_counts.items() -%}
        {%- set rows = result.rows | selectattr('request_id', 'equalto', request_id) | list -%}
        {%- set ns = namespace(total=0, live=0, files=0, read=0, skipped=0, errors=0, left=0) -%}
        {%- do log('verify_erasure: request ' ~ request_id ~ ': ' ~ id_count ~ ' id(s), ' ~ rows | length ~ ' location(s)', info=true) -%}
        {%- for row in rows -%}
            {%- do log('  ' ~ '%-10s' | format(row.location_kind) ~ ' ' ~ row.database_name ~ '.' ~ row.table_name ~ '  ' ~ row.location
                ~ ('' if row.location_exists else ' (gone)') ~ ': files ' ~ row.files_total ~ ' (read ' ~ row.files_read ~ ', skipped '
                ~ row.files_skipped ~ '), rows holding ids: ' ~ (row.rows_holding_ids if row.error is none else 'unknown (' ~ row.error ~ ')'), info=true) -%}
            {%- set ns.total = ns.total + (row.rows_holding_ids or 0) -%}
            {%- set ns.live = ns.live + ((row.rows_holding_ids or 0) if row.location_kind == 'live' else 0) -%}
            {%- set ns.files = ns.files + row.files_total -%}
            {%- set ns.read = ns.read + row.files_read -%}
            {%- set ns.skipped = ns.skipped + row.files_skipped -%}
            {%- set ns.errors = ns.errors + (1 if row.error is not none else 0) -%}
            {%- set ns.left = ns.left + (1 if row.location_kind != 'live' and row.files_total > 0 else 0) -%}
        {%- endfor -%}
        {%- do log('  total: ' ~ ns.total ~ ' row(s) holding ids; files ' ~ ns.files ~ ' (read ' ~ ns.read ~ ', skipped by footer statistics ' ~ ns.skipped ~ ')', info=true) -%}
        {%- if not rows -%}
            {%- set status = 'NOTHING TO VERIFY: no purge run that served this request committed a partition (see purge_log)' -%}
        {%- elif ns.errors -%}
            {%- set status = 'INCOMPLETE: ' ~ ns.errors ~ ' location(s) could not be read (see the lines above)' -%}
        {%- elif ns.live -%}
            {%- set status = 'NOT ERASED: live data still holds ' ~ ns.live ~ ' row(s); run `dbt run --select purge+`' -%}
        {%- elif ns.total -%}
            {%- set status = 'PENDING RETENTION: live data holds none; ' ~ ns.total ~ ' row(s) remain in backups or old copies until retention deletes them' -%}
        {%- elif ns.left -%}
            {%- set status = 'ERASED: no row holds an id; ' ~ ns.left ~ ' non-live location(s) still hold files until retention deletes them' -%}
        {%- else -%}
            {%- set status = 'ERASED: no row holds an id, and nothing but live data is left' -%}
        {%- endif -%}
        {%- do log('  status: ' ~ status, info=true) -%}
    {%- endfor -%}
{%- endmacro %}

{#- The name of the temporary view a verification leaves its rows in (python_hooks/erasure/verification.py RESULT_COLUMNS). -#}
{% macro erasure_verification_view() -%}
    {{ return('erasure_verification_rows') }}
{%- endmacro %}

{#- Verifies `request_ids` and leaves the rows in the temporary view; returns the Python result. -#}
{% macro erasure_verify_requests(request_ids) -%}
    {%- set requests = [] -%}
    {%- for request_id in request_ids -%}
        {%- do requests.append(compliance.erasure_verify_request(request_id)) -%}
    {%- endfor -%}
    {%- set result = adapter.erasure_verify_requests(invocation_id, requests, [target.schema, 'stale_data_records'],
        compliance.erasure_verification_view()) -%}
    {%- do compliance.erasure_verify_report(result) -%}
    {{ return(result) }}
{%- endmacro %}

{#-
    `dbt run-operation verify_erasure --args '{request_id: ...}'`: verifies one request, prints the
    summary and appends the rows to `<target schema>.erasure_verification` (the table the model
    `erasure_verification` also appends to).  Never fails because rows remain: a backup holds the
    ids legitimately until retention; the status line says which case it is.
-#}
{% macro verify_erasure(request_id=none) -%}
    {%- if request_id is none or (request_id | string | trim) == '' -%}
        {%- do exceptions.raise_compiler_error("verify_erasure needs a request: dbt run-operation verify_erasure --args '{request_id: <request id>}'"
            ~ " (a request_id of the id table or of erasure_request_log, or, when the id table has no request_id column, the invocation_id of a purge run).") -%}
    {%- endif -%}
    {%- do compliance.erasure_verify_requests([request_id | string | trim]) -%}
    {%- set existing = compliance.erasure_relation('erasure_verification') -%}
    {%- set relation = api.Relation.create(schema=target.schema, identifier='erasure_verification', type='table') -%}
    {%- if existing is none -%}
        {%- call statement('erasure_verification_create') -%}
            create table {{ relation }} using parquet as select * from {{ compliance.erasure_verification_view() }}
        {%- endcall -%}
    {%- else -%}
        {%- call statement('erasure_verification_append') -%}
            insert into {{ relation }} select * from {{ compliance.erasure_verification_view() }}
        {%- endcall -%}
    {%- endif -%}
    {%- do log('verify_erasure: rows appended to ' ~ relation, info=true) -%}
{%- endmacro %}

{#-
    The requests the scheduled model verifies: var `erasure_request_id` when set, else every known
    request (erasure_request_log, else the id table's request_ids, else the latest purge run) whose
    latest verification in `existing` (the model's own table) did not find it fully erased.
-#}
{% macro erasure_verify_pending_requests(existing) -%}
    {%- set chosen = var('erasure_request_id', '') | string | trim -%}
    {%- if chosen -%}{{ return([chosen]) }}{%- endif -%}
    {#- a schedule (or `dbt build`) may run before the id table exists: then there is nothing to verify -#}
    {%- if not compliance.erasure_id_table_columns() -%}
        {%- do log("erasure_verification: the id table " ~ var('compliance_id_table', '') ~ " does not exist yet: no request to verify", info=true) -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set request_log = compliance.erasure_relation('erasure_request_log') -%}
    {%- set purge_log = compliance.erasure_relation('purge_log') -%}
    {%- if request_log is not none -%}
        {%- set known = 'select distinct cast(request_id as string) as request_id from ' ~ request_log ~ ' where request_id is not null' -%}
    {%- elif compliance.erasure_has_request_ids() -%}
        {%- set known = 'select distinct listed.request_id from (' ~ compliance.erasure_listed_ids_sql() ~ ') as listed where listed.request_id is not null' -%}
    {%- elif purge_log is not none -%}
        {%- set known = 'select invocation_id as request_id from ' ~ purge_log ~ " where state = 'COMMITTED' and not coalesce(dry_run, false)"
            ~ ' order by ended_at desc limit 1' -%}
    {%- else -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set query -%}
        with known as ({{ known }})
        {%- if existing is not none %},
        latest as (
            select request_id, max(verified_at) as verified_at from {{ existing }} group by request_id
        ),
        done as (
            select v.request_id
            from {{ existing }} as v
            inner join latest as l on v.request_id = l.request_id and v.verified_at = l.verified_at
            group by v.request_id
            having sum(coalesce(v.rows_holding_ids, 1)) = 0
                and sum(case when v.error is not null then 1 else 0 end) = 0
                and sum(case when v.location_kind != 'live' and v.files_total > 0 then 1 else 0 end) = 0
        )
        select known.request_id from known left anti join done on known.request_id = done.request_id
        {%- else %}
        select request_id from known
        {%- endif %}
    {%- endset -%}
    {{ return(run_query(query).columns[0].values() | list) }}
{%- endmacro %}

{#- The model's pre-hook: verify the pending requests into the temporary view the model selects. -#}
{% macro erasure_verification_prepare() -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- do compliance.erasure_verify_requests(compliance.erasure_verify_pending_requests(compliance.erasure_relation(this.identifier))) -%}
    {{ return('') }}
{%- endmacro %}
