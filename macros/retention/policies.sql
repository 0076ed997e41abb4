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
    the purge whitelist's, macros/purge/purge_patterns.sql).
-#}
{% macro retention_policy(database, table, rows, defaults) -%}
    {%- set policy = {} -%}
    {%- do policy.update(defaults) -%}
    {%- set ns = namespace(best=none, rank=-1) -%}
    {%- for row in rows -%}
        {%- for pattern in compliance.parse_table_patterns(row['table_pattern'], 'retention_policies.table_pattern') -%}
            {%- if compliance.table_pattern_matches(pattern, database, table) -%}
                {%- set rank = ((2 if pattern.table is not none else 0) + (0 if pattern.prefix else 1)) * 1000
                    + (pattern.text | length) -%}
                {%- if rank > ns.rank -%}
                    {%- set ns.best = row -%}
                    {%- set ns.rank = rank -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if ns.best is not none -%}
        {%- for name in compliance.retention_setting_names() -%}
            {%- set value = ns.best.get(name) -%}
            {#- a blank cell arrives as null, or as 'None' through the session cursor -#}
            {%- if value is not none and (value | string | trim) not in ('', 'None') -%}
                {%- do policy.update({name: value | string | trim}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do policy.update({'matched_pattern': ns.best['table_pattern']}) -%}
    {%- endif -%}
    {{ return(policy) }}
{%- endmacro %}

{#- The seed's rows as dicts (none when the seed was not built yet). -#}
{% macro retention_policy_rows(relation) -%}
    {%- set rows = [] -%}
    {%- if execute and relation is not none and load_relation(relation) is not none -%}
        {%- set table = run_query('select * from ' ~ relation) -%}
        {%- for row in table.rows -%}
            {%- set item = {} -%}
            {%- for column in table.column_names -%}
                {%- do item.update({column: row[column]}) -%}
            {%- endfor -%}
            {%- do rows.append(item) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(rows) }}
{%- endmacro %}
