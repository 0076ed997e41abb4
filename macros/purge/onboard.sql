-- noqa: disable=LT02
{#
    Onboarding: the dataset descriptor on the tables the purge must clean.
      `dbt run-operation onboard --args '{table: db.t, identifier: metadata.guestid}'`
      `dbt run-operation onboard --args '{table: db.t, identifier: guestid, statistics: false}'`
        (a Delta Lake or Iceberg table: no file statistics of the identifier in its metadata)
      `dbt run-operation onboard_tables --args '{file: onboarding.yml, dry_run: true}'`
    Every entry is checked against the metastore (the table exists and is not a view, the
    identifier is a column or struct field, comparable with the id column when the id table
    exists) before anything is written: one bad entry and nothing changes.  A table whose
    descriptor already names the field is left alone, so a list can be run again at any time.
#}
{% macro onboard(table, identifier, dry_run=false, statistics=true) %}
    {%- do compliance.onboard_tables(tables=[{'table': table, 'identifier': identifier, 'statistics': statistics}], dry_run=dry_run) -%}
{% endmacro %}

{% macro onboard_tables(file=none, tables=none, dry_run=false) %}
    {%- set dry_run = compliance.parse_bool(dry_run, 'onboard: dry_run') -%}
    {%- if file -%}
        {%- set entries = adapter.onboard_read_list(file | string) -%}
    {%- elif tables is mapping -%}
        {%- set entries = [] -%}
        {%- for name, identifier in tables.items() -%}{%- do entries.append({'table': name, 'identifier': identifier}) -%}{%- endfor -%}
    {%- elif tables is iterable and tables is not string -%}
        {%- set entries = tables -%}
    {%- else -%}
        {%- do exceptions.raise_compiler_error("onboard_tables: give file: <a yml or csv list of table and identifier> or tables: [{table: db.t, identifier: field}]. Nothing was changed.") -%}
    {%- endif -%}
    {%- for entry in entries -%}
        {%- if entry is not mapping -%}
            {%- do exceptions.raise_compiler_error("onboard_tables: entry " ~ loop.index ~ " is " ~ tojson(entry | string) ~ ", not {table: db.t, identifier: field}. Nothing was changed.") -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set rows = adapter.onboard_plan(entries, var('compliance_id_table', '') | string, var('compliance_id_column', '') | string) -%}
    {%- set refused = rows | selectattr('status', 'equalto', 'refused') | list -%}
    {%- if refused and rows | length == 1 -%}
        {%- do exceptions.raise_compiler_error("onboard: " ~ refused[0].error) -%}
    {%- elif refused -%}
        {%- set lines = [] -%}
        {%- for row in refused -%}{%- do lines.append("  entry " ~ row.entry ~ ": " ~ row.error) -%}{%- endfor -%}
        {%- do exceptions.raise_compiler_error("onboard_tables: " ~ refused | length ~ " of " ~ rows | length ~ " entries refused; nothing was changed:\n"
            ~ lines | join('\n') ~ "\nFix them and run the command again.") -%}
    {%- endif -%}

    {%- set changes = rows | rejectattr('status', 'equalto', 'unchanged') | list -%}
    {%- set verb = "would now carry" if dry_run else "now carries" -%}
    {%- for row in changes -%}
        {%- set settings = [] -%}
        {%- for key, value in (row.properties or {}).items() | sort -%}{%- do settings.append(key ~ " = " ~ value) -%}{%- endfor -%}
        {%- do log("onboard: " ~ row.table ~ " " ~ verb ~ " dataset.descriptor " ~ row.descriptor
            ~ (" (it was " ~ row.before ~ ")" if row.before is not none else "")
            ~ (", and no file statistics of its identifier in its metadata (" ~ settings | join(', ') ~ ")" if settings else ""), info=true) -%}
    {%- endfor -%}
    {%- if changes and not dry_run -%}
        {%- set applied = adapter.onboard_apply(changes) -%}
        {%- if applied.failed -%}
            {%- set lines = [] -%}
            {%- for name, error in applied.failed.items() -%}{%- do lines.append("  " ~ name ~ ": " ~ error) -%}{%- endfor -%}
            {%- do exceptions.raise_compiler_error("onboard_tables: " ~ applied.failed | length ~ " table(s) could not be written (the other "
                ~ applied.written | length ~ " were):\n" ~ lines | join('\n') ~ "\nFix the cause and run the command again: tables already written are left alone.") -%}
        {%- endif -%}
    {%- endif -%}
    {%- set counts = {} -%}
    {%- for status in ['added', 'changed', 'unchanged'] -%}
        {%- do counts.update({status: rows | selectattr('status', 'equalto', status) | list | length}) -%}
    {%- endfor -%}
    {%- if rows | length != 1 or dry_run or not changes -%}
        {%- do log("onboard: " ~ rows | length ~ " table(s): " ~ counts.added ~ " added, " ~ counts.changed ~ " changed, "
            ~ counts.unchanged ~ " unchanged" ~ (" (dry run: nothing was written)" if dry_run else ""), info=true) -%}
    {%- endif -%}
    {%- do compliance.onboard_note_unselected(rows) -%}
{% endmacro %}

{% macro onboard_note_unselected(rows) %}
    {%- set whitelist = compliance.parse_table_patterns(var('purge_whitelist', ''), 'purge_whitelist') -%}
    {%- set blacklist = compliance.parse_table_patterns(var('purge_blacklist', ''), 'purge_blacklist') -%}
    {%- set unselected = [] -%}
    {%- for row in rows -%}
        {%- set parts = row.table.split('.') -%}
        {%- if not compliance.table_selected(parts[0], parts[1], whitelist, blacklist) -%}{%- do unselected.append(row.table) -%}{%- endif -%}
    {%- endfor -%}
    {%- if unselected -%}
        {%- do log("onboard: note: " ~ unselected | join(', ') ~ (" is" if unselected | length == 1 else " are") ~ " not selected by purge_whitelist/purge_blacklist;"
            ~ " add " ~ ("it" if unselected | length == 1 else "them") ~ " to purge_whitelist so the purge picks " ~ ("it" if unselected | length == 1 else "them") ~ " up.", info=true) -%}
    {%- endif -%}
{% endmacro %}
