{#
    Retention's hooks.  The `retention` model's pre-hook runs every retention operation (Python,
    through adapter.retention_run, so that one failing location is logged and the rest go on) and
    leaves the attempts in a temporary view that the model selects; `retention_log` appends them
    and its post-hook then fails the run when any attempt of this invocation failed.  A dry run
    of the purge (`purge_dry_run`) is a dry run of retention too: `dbt run --select purge+`
    deletes nothing when either var says so.  So is a pass that the command did not ask for by
    name (a plain `dbt build`: macros/common/capabilities.sql, command_selection): it lists what
    it would delete and prints `dbt run --select retention`.
#}
{#-
    The temporary view a retention pass leaves its attempts in, for the `retention` model to
    select: the pre-hook passes this name to Python and the model reads it through this macro,
    so the one dependency dbt cannot see (a view registered in the session, not a relation) is
    written in one place.
-#}
{% macro retention_attempts_view() -%}
    {{ return('retention_attempts') }}
{%- endmacro %}

{% macro run_retention(policies_relation, view_name=none) -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {#- a command that does not name the job (a plain `dbt build`) deletes nothing: a dry run -#}
    {%- set selection = compliance.command_selection('dbt run --select retention') -%}
    {%- if not selection.named -%}
        {%- do log("Retention: not selected by name (" ~ selection.reason ~ "): a dry run, nothing is deleted.", info=true) -%}
    {%- endif -%}
    {%- set defaults = compliance.retention_defaults() -%}
    {%- set rows = compliance.retention_policy_rows(policies_relation) -%}
    {#- `retention_scope` (whitelist grammar, blank = everything) limits what is cleaned, never what is protected. -#}
    {%- set scope = compliance.parse_table_patterns(var('retention_scope', ''), 'retention_scope') -%}
    {%- set stale_relation = [target.schema, 'stale_data_records'] -%}
    {%- set base_tables = adapter.retention_base_tables(stale_relation) -%}
    {#- every var and seed row checked before anything is deleted (python_hooks/retention/policy.py) -#}
    {%- set warnings = adapter.retention_validate_policies(rows, defaults, var('retention_min_hours', 24),
        compliance.bool_var('retention_allow_short'), var('retention_scope', ''), base_tables) -%}
    {%- for warning in warnings -%}
        {%- do log("Retention: note: " ~ warning, info=true) -%}
    {%- endfor -%}
    {%- set policies = {} -%}
    {%- for pair in base_tables -%}
        {%- if compliance.retention_in_scope(pair[0], pair[1], scope) -%}
            {%- do policies.update({pair[0] ~ '.' ~ pair[1]: compliance.retention_policy(pair[0], pair[1], rows, defaults)}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set result = adapter.retention_run(
        invocation_id=invocation_id,
        policies=policies,
        defaults=defaults,
        dry_run=compliance.bool_var('retention_dry_run') or compliance.bool_var('purge_dry_run') or not selection.named,
        now=var('retention_now', none),
        allow_future=compliance.bool_var('retention_allow_future_now'),
        allow_short=compliance.bool_var('retention_allow_short'),
        stale_relation=stale_relation,
        view_name=view_name or compliance.retention_attempts_view(),
        progress_seconds=var('retention_progress_seconds', 10),
    ) -%}
    {#- per kind; a dry run lists every location it would delete (python_hooks/retention/attempts.py) -#}
    {%- do log(result['report'] | join('\n'), info=true) -%}
    {%- do log(
        "Retention" ~ (" (dry run)" if result['dry_run'] else "") ~ ": " ~ result['attempts'] ~ " deletion attempt(s), "
        ~ result['failed'] ~ " failed, " ~ result['files'] ~ " file(s) / " ~ result['bytes'] ~ " byte(s) "
        ~ ("would be " if result['dry_run'] else "") ~ "deleted",
        info=true) -%}
    {%- if not selection.named -%}
        {%- do log("Retention: nothing was deleted (listed above). To delete, run `" ~ selection.command ~ "`.", info=true) -%}
    {%- endif -%}
    {%- do log("Retention: " ~ ("listed the metastore's " ~ result['protected_locations'] ~ " referenced location(s) to protect them"
        if result['protected_listed'] else "nothing was due, so the metastore's locations were not listed"), info=true) -%}
    {#- data whose metadata went but whose delete failed: recorded, so that a later pass deletes it -#}
    {%- if result['orphans'] -%}
        {%- do compliance.record_stale_locations(result['orphans']) -%}
        {%- do log("Retention: " ~ result['orphans'] | length ~ " location(s) lost their metadata but could not be deleted; recorded in "
            ~ compliance.stale_data_relation() ~ " for a later pass: " ~ (result['orphans'] | map(attribute='location') | join(', ')), info=true) -%}
    {%- endif -%}
    {%- if result['unregistered'] -%}
        {%- do log("Retention: " ~ result['unregistered'] | length ~ " table(s) are named like side tables but do not carry the side-table"
            ~ " properties, so they were left alone: " ~ result['unregistered'][:10] | join(', ') ~ (", ..." if result['unregistered'] | length > 10 else "")
            ~ ". If purge or restore made them before side tables were registered, list and adopt them with"
            ~ " `dbt run-operation adopt_side_tables` (then `--args '{apply: true}'`).", info=true) -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}

{% macro raise_on_retention_failures() -%}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set failed = compliance.query_rows(
        'select database_name, table_name, partition_spec, location, failure_reason from ' ~ this
        ~ ' where not succeeded and invocation_id = ' ~ compliance.sql_string(invocation_id)) -%}
    {%- do adapter.retention_raise_failures(invocation_id, failed) -%}
    {{ return('') }}
{%- endmacro %}
