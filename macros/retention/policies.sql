{#
    Retention policies: the defaults come from vars; a row of the `retention_policies` seed whose
    `table_pattern` matches a table (whitelist grammar, most specific row wins) overrides any
    setting it fills in.  Blank cells keep the default.
#}
{% macro retention_setting_names() -%}
    {{ return([
        'backup_retention_days', 'backup_retention_versions', 'trash_retention_days',
        'staging_retention_hours', 'backup_reap_days', 'backup_dir', 'partition_column',
        'partition_date_format', 'partition_age', 'partition_retention_days', 'snapshot_column',
        'snapshot_retention_count', 'stale_retention_days',
    ]) }}
{%- endmacro %}

{#- The policy vars; run_retention checks them with the seed rows (retention_validate_policies). -#}
{% macro retention_defaults() -%}
    {%- set defaults = {
        'backup_retention_days': var('backup_retention_days', 7),
        'backup_retention_versions': var('backup_retention_versions', 3),
        'trash_retention_days': var('trash_retention_days', 7),
        'staging_retention_hours': var('staging_retention_hours', 24),
        'backup_reap_days': var('backup_reap_days', none),
        'backup_dir': var('backup_dir', ''),
        'partition_column': var('partition_column', ''),
        'partition_date_format': var('partition_date_format', 'yyyy-MM-dd'),
        'partition_age': var('partition_age', 'value'),
        'partition_retention_days': var('partition_retention_days', none),
        'snapshot_column': var('snapshot_column', ''),
        'snapshot_retention_count': var('snapshot_retention_count', none),
        'stale_retention_days': var('stale_retention_days', 7),
    } -%}
    {{ return(defaults) }}
{%- endmacro %}

{#-
    The policy of one table: the defaults, overridden by the most specific matching seed row
    (`db.table` beats `db.table*` beats `db` beats `db*`; the pattern grammar and its parser are
    the purge whitelist's, macros/common/table_patterns.sql).
-#}
{% macro retention_policy(database, table, rows, defaults) -%}
    {%- set policy = {} -%}
    {%- do policy.update(defaults) -%}
    {%- set best = compliance.most_specific_match(database, table, rows, 'retention_policies.table_pattern') -%}
    {%- if best is not none -%}
        {%- for name in compliance.retention_setting_names() -%}
            {%- set value = best.row.get(name) -%}
            {#- a blank cell is null; a cell of spaces is blank too -#}
            {%- if value is not none and (value | string | trim) != '' -%}
                {%- do policy.update({name: value | string | trim}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do policy.update({'matched_pattern': best.row['table_pattern']}) -%}
    {%- endif -%}
    {{ return(policy) }}
{%- endmacro %}

{#- The seed's rows as dicts (none when the seed was not built yet). -#}
{% macro retention_policy_rows(relation) -%}
    {%- if execute and relation is not none and load_relation(relation) is not none -%}
        {{ return(compliance.query_rows('select * from ' ~ relation)) }}
    {%- endif -%}
    {{ return([]) }}
{%- endmacro %}

{#- Whether retention cleans a table: it matches `scope` (the parsed `retention_scope`; blank = every table). -#}
{% macro retention_in_scope(database, table, scope) -%}
    {{ return(scope | length == 0 or compliance.table_selected(database, table, scope, [])) }}
{%- endmacro %}

{#-
    After how many days from a purge's swap a retention pass deletes the pre-purge copy, under
    `policy` (retention_policy): the larger of backup_retention_days (the backup expires) and
    stale_retention_days (its stale record is due).  None when backup_retention_days is blank:
    then only backup_retention_versions expires the copy, when newer purges push it out.
-#}
{% macro retention_copy_days(policy) -%}
    {%- set backup_days = '' if policy.backup_retention_days is none else policy.backup_retention_days | string | trim -%}
    {%- set stale_days = '' if policy.stale_retention_days is none else policy.stale_retention_days | string | trim -%}
    {%- if backup_days == '' -%}{{ return(none) }}{%- endif -%}
    {{ return([backup_days | float, (stale_days | float) if stale_days != '' else 0] | max) }}
{%- endmacro %}
