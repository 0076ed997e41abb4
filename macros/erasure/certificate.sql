-- noqa: disable=LT02
{#
    Certificates (docs/erasure.md, "The certificate").  `erasure_certificate` computes the
    request's ledger row afresh (erasure_ledger_sql, the SQL of `erasure_requests`), reads its
    latest verification and the evidence it rests on, and hands them to
    python_hooks/erasure/certificate.py, which checks the rule once more and writes a certificate
    only when it holds, a status report saying why otherwise.  `verify_certificate` recomputes a
    certificate's SHA-256 digest from the tables.  No id is read or written here.
#}

{#- The request's rows of a table, by request_id (none when the table does not exist). -#}
{% macro erasure_rows_of(name, where, order_by) -%}
    {%- set relation = compliance.erasure_relation(name) -%}
    {%- if relation is none -%}{{ return([]) }}{%- endif -%}
    {{ return(compliance.query_rows('select * from ' ~ relation ~ ' where ' ~ where ~ (' order by ' ~ order_by if order_by else ''))) }}
{%- endmacro %}

{#-
    The copies of a request the verifier found holding its ids in any verification (backups of an
    interrupted run, stale or reaped copies no log names), with the first deletion of each in
    retention_log: rows like erasure_copies', source `verification`.
-#}
{% macro erasure_found_copies_sql(request_id) -%}
    {%- set findings = compliance.erasure_relation('erasure_verification_findings') -%}
    {%- set retention_log = compliance.erasure_relation('retention_log') -%}
    {%- if findings is none -%}
    {{ return(none) }}
    {%- endif -%}
with

found as (
    select
        database_name,
        table_name,
        location,
        location_kind,
        {{ compliance.erasure_location_key('location') }} as location_key
    from {{ findings }}
    where request_id = {{ compliance.sql_string(request_id) }} and location_kind != 'live'
    group by database_name, table_name, location, location_kind
),

deletions as (
    {%- if retention_log is not none %}
    select attempt_id, attempted_at, {{ compliance.erasure_location_key('location') }} as location_key
    from {{ retention_log }}
    where action = 'delete' and succeeded and not coalesce(dry_run, false)
    {%- else %}
    {{ compliance.empty_select_sql([['attempt_id', 'string'], ['attempted_at', 'timestamp'], ['location_key', 'string']]) }}
    {%- endif %}
)

select
    found.database_name,
    found.table_name,
    found.location,
    found.location_kind,
    deletions.attempt_id,
    deletions.attempted_at
from found
left join deletions
    on found.location_key = deletions.location_key
{%- endmacro %}

{#-
    `dbt run-operation erasure_certificate --args '{request_id: REQ-1}'`: a certificate
    (`target/erasure/<request>.json`, `.md` and `.evidence.txt`) when the request is erased by the
    rule, else a status report (`<request>.status.json` / `.md`) saying why.  Both name the
    verification, the runs, the copies with their deletion dates and the product's revision.
-#}
{% macro erasure_certificate(request_id=none) %}
    {%- set request_key = request_id | string | trim if request_id is not none else '' -%}
    {%- if not request_key -%}
        {%- do exceptions.raise_compiler_error("erasure_certificate: give the request, e.g. --args '{request_id: REQ-1}'") -%}
    {%- endif -%}
    {%- set ledger = compliance.query_rows('select * from (' ~ compliance.erasure_ledger_sql(compliance.erasure_ledger_relations())
        ~ ') as ledger where request_id = ' ~ compliance.sql_string(request_key)) -%}
    {%- if not ledger -%}
        {%- set known = compliance.query_rows('select request_id from (' ~ compliance.erasure_ledger_sql(compliance.erasure_ledger_relations())
            ~ ') as ledger order by request_id limit 20') | map(attribute='request_id') | list -%}
        {%- do exceptions.raise_compiler_error("erasure_certificate: no request '" ~ request_key ~ "' (known: " ~ (known | join(', ') or 'none')
            ~ "). Requests come from the id table's request_id, or are purge runs' invocation ids.") -%}
    {%- endif -%}
    {%- set request = ledger[0] -%}
    {%- set where = 'request_id = ' ~ compliance.sql_string(request_key) -%}
    {%- set verified = compliance.erasure_rows_of('erasure_verification', where, 'started_at desc, verification_id desc limit 1') -%}
    {%- set verified = verified[0] if verified else none -%}
    {%- set run = none -%}
    {%- set locations = [] -%}
    {%- if verified is not none -%}
        {%- set by_run = 'verification_id = ' ~ compliance.sql_string(verified.verification_id) -%}
        {%- set runs_found = compliance.erasure_rows_of('erasure_verification_runs', by_run, none) -%}
        {%- set run = runs_found[0] if runs_found else none -%}
        {%- set locations = compliance.erasure_rows_of('erasure_verification_locations', by_run, 'database_name, table_name, location') -%}
        {#- the rows holding the request's ids, per location (a location without a finding held none) -#}
        {%- set held = {} -%}
        {%- for row in compliance.erasure_rows_of('erasure_verification_findings', by_run ~ ' and ' ~ where, none) -%}
            {%- do held.update({row.location: row.rows_holding_ids}) -%}
        {%- endfor -%}
        {%- for row in locations -%}{%- do row.update({'rows_holding_ids': held.get(row.location, 0)}) -%}{%- endfor -%}
    {%- endif -%}
    {%- set runs = compliance.erasure_rows_of('erasure_request_log', where, 'purged_at') -%}
    {%- set relations = compliance.erasure_ledger_relations() -%}
    {%- set deletions = compliance.query_rows('select * from (' ~ compliance.erasure_copy_deletions_sql(relations.request_log, relations.purge_log,
        relations.retention_log, compliance.erasure_relation('retention_policies')) ~ ') as copies where ' ~ where) -%}
    {%- set copies = compliance.query_rows('select *, \'purge_log\' as source from (' ~ relations.copies_sql ~ ') as copies where ' ~ where
        ~ ' order by purged_at, database_name, table_name, partition_spec') -%}
    {%- set attempts = [] -%}
    {%- for row in deletions if row.attempt_id and row.attempt_id not in attempts -%}{%- do attempts.append(row.attempt_id) -%}{%- endfor -%}
    {%- set found_sql = compliance.erasure_found_copies_sql(request_key) -%}
    {%- if found_sql -%}
        {%- set known_locations = copies | map(attribute='location') | list -%}
        {%- set found_rows = {} -%}
        {%- for row in compliance.query_rows(found_sql) -%}
            {%- if row.attempt_id and row.attempt_id not in attempts -%}{%- do attempts.append(row.attempt_id) -%}{%- endif -%}
            {%- set seen = found_rows.get(row.location) -%}
            {%- if row.location not in known_locations and (seen is none or (row.attempted_at is not none and (seen.deleted_at is none or row.attempted_at < seen.deleted_at))) -%}
                {%- do found_rows.update({row.location: {'database_name': row.database_name, 'table_name': row.table_name, 'location': row.location,
                    'partition_spec': none, 'copy_kind': row.location_kind, 'backup_table': none, 'source': 'verification (' ~ row.location_kind ~ ')', 'purged_at': none,
                    'will_delete_at': none, 'deleted_at': row.attempted_at}}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- for location in found_rows | sort -%}{%- do copies.append(found_rows[location]) -%}{%- endfor -%}
    {%- endif -%}
    {%- set selection = {'purge_invocation_ids': runs | map(attribute='invocation_id') | list, 'retention_attempt_ids': attempts} -%}
    {%- set generated_by = {'dbt_version': dbt_version, 'project_name': project_name, 'target_name': target.name,
        'target_schema': target.schema, 'invocation_id': invocation_id} -%}
    {%- set written = adapter.erasure_write_certificate(target.schema, request, verified, run, locations, runs, copies, selection,
        generated_by, flags.TARGET_PATH, flags.PROJECT_DIR) -%}
    {%- if written.document == 'certificate' -%}
        {%- do log("Erasure certificate for request " ~ request_key ~ " (status erased, evidence sha256 " ~ written.sha256 ~ "): "
            ~ written.markdown ~ " and " ~ written.json, info=true) -%}
    {%- else -%}
        {%- do log("No certificate for request " ~ request_key ~ " (status " ~ written.status ~ "); a status report says why: "
            ~ written.markdown ~ " and " ~ written.json, info=true) -%}
        {%- for reason in written.reasons -%}
            {%- do log("  not certified: " ~ reason, info=true) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(written) }}
{% endmacro %}

{#-
    `dbt run-operation verify_certificate --args '{file: target/erasure/REQ-1.json}'`: recomputes
    the certificate's evidence digest from the tables (and the purge journal) and says whether
    anything it rests on changed since it was written, part by part; fails when something did.
-#}
{% macro verify_certificate(file=none) %}
    {%- if not file or not (file | string | trim) -%}
        {%- do exceptions.raise_compiler_error("verify_certificate: give the certificate, e.g. --args '{file: target/erasure/REQ-1.json}'") -%}
    {%- endif -%}
    {%- set checked = adapter.erasure_check_certificate(target.schema, file | string | trim, flags.PROJECT_DIR) -%}
    {%- for part in checked.parts -%}
        {%- do log("verify_certificate:   " ~ '%-23s' | format(part.part) ~ (" unchanged" if part.matches else " CHANGED") ~ " ("
            ~ (part.detail if part.detail else part.rows ~ " row(s) then, " ~ part.rows_now ~ " now") ~ ")", info=true) -%}
    {%- endfor -%}
    {%- set later = compliance.erasure_rows_of('erasure_verification', 'request_id = ' ~ compliance.sql_string(checked.request_id)
        ~ ' and started_at > (select max(started_at) from ' ~ compliance.erasure_relation('erasure_verification') ~ ' where verification_id = '
        ~ compliance.sql_string(checked.verification_id) ~ ')', 'started_at') -%}
    {%- if later -%}
        {%- do log("verify_certificate: " ~ later | length ~ " verification(s) of request " ~ checked.request_id ~ " since; the latest ("
            ~ later[-1].verification_id ~ ") found " ~ later[-1].live_rows ~ " live row(s) and " ~ later[-1].copy_rows ~ " row(s) in copies", info=true) -%}
    {%- endif -%}
    {%- if not checked.matches -%}
        {%- set changed = checked.parts | rejectattr('matches') | list -%}
        {%- do exceptions.raise_compiler_error("verify_certificate: " ~ file ~ " does NOT verify: the evidence it rests on changed since "
            ~ checked.generated_at ~ " (sha256 " ~ checked.sha256 ~ " in the certificate, " ~ checked.recomputed ~ " from the tables now); changed: "
            ~ (changed | map(attribute='part') | join(', ')) ~ "."
            ~ ((" " ~ (changed | selectattr('detail') | map(attribute='detail') | join('; '))) if (changed | selectattr('detail') | list) else "")) -%}
    {%- endif -%}
    {%- do log("verify_certificate: " ~ file ~ " verifies: the evidence of request " ~ checked.request_id ~ " (verification "
        ~ checked.verification_id ~ ") is unchanged since " ~ checked.generated_at ~ " (sha256 " ~ checked.sha256 ~ ")", info=true) -%}
    {{ return(checked) }}
{% endmacro %}
