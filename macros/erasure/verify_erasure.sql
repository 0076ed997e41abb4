-- noqa: disable=LT02
{#
    The erasure verifier (docs/erasure.md, "The verifier"): python_hooks/erasure/verification.py
    decides what to read from the metastore and the filesystem alone (every onboarded table with
    all its partitions, every registered side table, stale locations, reaped backups, the purge
    journal's locations), reads it with Spark and records the run.  These macros only say which
    requests and which ids: nothing here reads purge_log or the purge's plan.
#}

{#- The relations the erasure macros read and write, all in the target schema. -#}
{% macro erasure_relation(name) -%}
    {{ return(adapter.get_relation(database=none, schema=target.schema, identifier=name)) }}
{%- endmacro %}

{#- Var `erasure_verification_scope` parsed (the whitelist grammar); [] reads every database. -#}
{% macro erasure_verification_scope() -%}
    {{ return(compliance.parse_table_patterns(var('erasure_verification_scope', ''), 'erasure_verification_scope')) }}
{%- endmacro %}

{#-
    Every `backup_dir` a retention policy names, the var's and each row's of the policy seed: the
    directories retention reaps backups into (`<backup_dir>/<db>/<table>`), read whatever policy
    is in force now.
-#}
{% macro erasure_backup_dirs() -%}
    {%- set found = [] -%}
    {%- set value = var('backup_dir', '') | string | trim -%}
    {%- if value and value != 'None' -%}{%- do found.append(value) -%}{%- endif -%}
    {%- for row in compliance.retention_policy_rows(compliance.erasure_relation('retention_policies')) -%}
        {%- set value = (row.get('backup_dir') or '') | string | trim -%}
        {%- if value and value != 'None' and value not in found -%}{%- do found.append(value) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}

{#-
    The id table as the verifier reads it: {name, column, type}.  Checked here, with messages that
    name the var, so that a verification never runs on a wrong table.
-#}
{% macro erasure_id_source() -%}
    {%- set name = var('compliance_id_table', '') | string | trim -%}
    {%- set column = var('compliance_id_column', '') | string | trim -%}
    {%- set parts = compliance.id_table_name() -%}
    {%- if parts is none or not column -%}
        {%- do exceptions.raise_compiler_error("erasure verification: vars compliance_id_table (" ~ tojson(name) ~ ", as db.table) and compliance_id_column ("
            ~ tojson(column) ~ ") must name the id table and its id column.") -%}
    {%- endif -%}
    {%- set info = adapter.describe_table(parts[0], parts[1]) -%}
    {%- if not info.exists -%}
        {%- do exceptions.raise_compiler_error("erasure verification: the id table " ~ name ~ " (var compliance_id_table) does not exist.") -%}
    {%- endif -%}
    {%- set ns = namespace(column=none) -%}
    {%- for existing in info.columns if existing | lower == column | lower -%}{%- set ns.column = existing -%}{%- endfor -%}
    {%- if ns.column is none -%}
        {%- do exceptions.raise_compiler_error("erasure verification: the id table " ~ name ~ " has no column " ~ tojson(column)
            ~ " (var compliance_id_column); its columns are: " ~ (info.columns.keys() | list | join(', ')) ~ ".") -%}
    {%- endif -%}
    {{ return({'name': name, 'column': ns.column, 'type': info.columns[ns.column]}) }}
{%- endmacro %}

{#-
    The select the verifier joins with: `erasure_id`, `request_id` (null when the id table has no
    request_id column: every request then holds every id).
-#}
{% macro erasure_verify_ids_sql() -%}
    select
        listed.id as erasure_id,
        listed.request_id
    from ({{ compliance.erasure_listed_ids_sql() }}) as listed
{%- endmacro %}

{#-
    The requests a verification covers: `only` when given; else every request the id table lists
    (its request_ids), or, when it has no request_id column, every purge run that served its ids
    (erasure_request_log) -- a request is then a run.
-#}
{% macro erasure_requests_to_verify(only=none) -%}
    {%- set chosen = (only or '') | string | trim -%}
    {%- if chosen -%}{{ return([chosen]) }}{%- endif -%}
    {%- if not compliance.erasure_id_table_columns() -%}{{ return([]) }}{%- endif -%}
    {%- if compliance.erasure_has_request_ids() -%}
        {%- set query = 'select distinct listed.request_id from (' ~ compliance.erasure_listed_ids_sql() ~ ') as listed where listed.request_id is not null order by 1' -%}
    {%- else -%}
        {%- set request_log = compliance.erasure_relation('erasure_request_log') -%}
        {%- if request_log is none -%}{{ return([]) }}{%- endif -%}
        {%- set query = 'select distinct request_id from ' ~ request_log ~ ' where request_id is not null order by 1' -%}
    {%- endif -%}
    {{ return(run_query(query).columns[0].values() | map('string') | list) }}
{%- endmacro %}

{#- One line per request and the run's totals: what a user reads after a verification. -#}
{% macro erasure_verify_report(result) -%}
    {%- set run = result.run -%}
    {%- do log('verify_erasure: verification ' ~ result.verification_id ~ ' in ' ~ result.seconds ~ ' s (scope: ' ~ run.scope ~ '): '
        ~ run.tables_read ~ ' onboarded table(s), ' ~ run.partitions_read ~ ' partition(s), ' ~ run.side_tables_read ~ ' side table(s), '
        ~ run.locations_total ~ ' location(s), ' ~ run.files_total ~ ' file(s) (' ~ run.files_read ~ ' read, ' ~ run.files_skipped
        ~ ' skipped by footer statistics), ' ~ run.bytes_total ~ ' bytes; ' ~ run.location_errors ~ ' location(s) not read', info=true) -%}
    {%- do log('verify_erasure: steps (seconds) ' ~ tojson(result.steps)) -%}
    {%- if run.out_of_scope_tables -%}
        {%- do log('verify_erasure: onboarded tables outside erasure_verification_scope, not read: ' ~ run.out_of_scope_tables, info=true) -%}
    {%- endif -%}
    {%- for row in result.requests -%}
        {%- set text = {
            'LIVE_ROWS': 'live tables still hold ' ~ row.live_rows ~ ' row(s): ' ~ row.live_holding ~ '; run `dbt run --select purge+`',
            'COPIES_HOLD_IDS': 'live tables hold none; copies hold ' ~ row.copy_rows ~ ' row(s) until retention deletes them: ' ~ row.copies_holding,
            'INCOMPLETE': 'some locations could not be read: ' ~ row.unread_locations,
            'NONE_FOUND': 'no row of any location read holds its ids',
        } -%}
        {%- do log('verify_erasure: request ' ~ row.request_id ~ ' (' ~ row.ids_listed ~ ' id(s)): ' ~ row.verdict ~ ': ' ~ text[row.verdict], info=true) -%}
    {%- endfor -%}
    {%- for row in result.locations if row.error -%}
        {%- do log('verify_erasure:   not read: ' ~ row.location_kind ~ ' ' ~ row.database_name ~ '.' ~ row.table_name ~ ' ' ~ row.location ~ ': ' ~ row.error, info=true) -%}
    {%- endfor -%}
{%- endmacro %}

{#- The temporary view the model erasure_verification appends from. -#}
{% macro erasure_verification_view() -%}
    {{ return('erasure_verification_rows') }}
{%- endmacro %}

{#-
    Verifies `request_ids` and records the run: the run, its locations and findings appended to
    their tables, the per-request rows to erasure_verification (the run-operation) or left in the
    model's temporary view (`view_name`).  The tables the verifier created are made known to dbt.
-#}
{% macro erasure_verify(request_ids, trigger, view_name=none) -%}
    {%- set ids = compliance.erasure_id_source() -%}
    {%- set result = adapter.erasure_verify(invocation_id, trigger, request_ids, compliance.erasure_verify_ids_sql(), ids.type,
        compliance.erasure_verification_scope(), compliance.erasure_backup_dirs(), [target.schema, 'stale_data_records'], target.schema,
        view_name) -%}
    {%- for name in ['erasure_verification_runs', 'erasure_verification_locations', 'erasure_verification_findings']
        + ([] if view_name else ['erasure_verification']) -%}
        {%- do adapter.cache_added(api.Relation.create(database=none, schema=target.schema, identifier=name, type='table')) -%}
    {%- endfor -%}
    {%- do compliance.erasure_verify_report(result) -%}
    {{ return(result) }}
{%- endmacro %}

{#-
    `dbt run-operation verify_erasure [--args '{request_id: ...}']`: one request, or every request
    the id table lists; prints the summary and appends the run's rows.  Never fails because rows
    remain (a backup holds them until retention); the verdict says which case it is.
-#}
{% macro verify_erasure(request_id=none) -%}
    {%- set requests = compliance.erasure_requests_to_verify(request_id) -%}
    {%- if not requests -%}
        {%- do log("verify_erasure: no request to verify: the id table " ~ var('compliance_id_table', '') ~ " lists none (or, without a request_id column, no purge run has served it yet)", info=true) -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(compliance.erasure_verify(requests, 'run-operation')) }}
{%- endmacro %}

{#-
    The pre-hook of the model `erasure_verification`: verifies var `erasure_request_id`, or every
    listed request, into the model's temporary view (empty when there is nothing to verify).
-#}
{% macro erasure_verification_prepare() -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set requests = compliance.erasure_requests_to_verify(var('erasure_request_id', '')) if compliance.erasure_id_table_columns() else [] -%}
    {%- if not requests -%}
        {%- do log("erasure_verification: the id table " ~ var('compliance_id_table', '') ~ " does not exist or lists no request yet: nothing to verify", info=true) -%}
        {%- call statement('erasure_verification_nothing') -%}
            create or replace temporary view {{ compliance.erasure_verification_view() }} as {{ compliance.erasure_table_sql() }}
        {%- endcall -%}
        {{ return('') }}
    {%- endif -%}
    {%- do compliance.erasure_verify(requests, 'model', compliance.erasure_verification_view()) -%}
    {{ return('') }}
{%- endmacro %}

{#-
    The select of a table whose columns and types its yml defines: from `source` (the rows the
    verifier left in a temporary view), or with no rows.  The verification tables are appended by
    the verifier (python_hooks/erasure/records.py defines the same columns); their models own the
    definitions and the docs.
-#}
{% macro erasure_table_sql(source=none) -%}
    {%- if execute and model.columns | length == 0 -%}
        {{ exceptions.raise_compiler_error('Model ' ~ model.name ~ ' has no columns in its yml: declare each column with its data_type.') }}
    {%- endif -%}
    select
    {%- for name, column in model.columns.items() %}
        cast({{ ('verified.' ~ compliance.quote_ident(name)) if source else 'null' }} as {{ column.data_type or 'string' }}) as {{ compliance.quote_ident(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    {%- if source %}
    from {{ source }} as verified
    {%- else %}
    where false
    {%- endif %}
{%- endmacro %}
