-- noqa: disable=LT02
{#
    Rendering a purge plan (python_hooks/purge/plan.py) into its statements, with the
    dispatchable clause macros of purge_sql.sql: what the engine runs is exactly what these
    return, so a project that overrides a clause macro changes what runs.  Pure: nothing here
    reads the warehouse or calls into Python.
#}

{#- The id range of the scans (`identifier between min and max`), for integral ids. -#}
{% macro purge_scan_bounds(plan) -%}
    {%- if plan.ids.bounds is none -%}{{ return(none) }}{%- endif -%}
    {{ return({'min': plan.ids.bounds[0] | string, 'max': plan.ids.bounds[1] | string}) }}
{%- endmacro %}

{#-
    {db.table: {table, files}}: each scanned table's scan, over the table and over its view of the
    files the footers left; each Delta Lake table's, {db.table: scan} (purge_delta.sql).  The id range goes where the identifier has the id column's own type
    (no cast between them).
-#}
{% macro purge_render_scans(plan) -%}
    {%- set scans = {} -%}
    {%- set bounds = compliance.purge_scan_bounds(plan) -%}
    {%- for table in plan.scanned -%}
        {%- set args = [table.database, table.table, table.partition_columns, table.identifier.path,
            plan.ids.database, plan.ids.table, plan.ids.column, bounds if table.identifier.type == plan.ids.type else none] -%}
        {%- do scans.update({table.name: {
            'table': compliance.purge_scan_sql(*args),
            'files': compliance.purge_scan_sql(*args, source=compliance.quote_ident(table.scan_view)) if table.scan == 'files' else '',
        }}) -%}
    {%- endfor -%}
    {%- do scans.update(compliance.purge_render_delta_scans(plan)) -%}
    {{ return(scans) }}
{%- endmacro %}

{#- {db.table: statements} of every table with partitions to rewrite (python_hooks/purge/statements.py TableStatements, which refuses a missing or extra key). -#}
{% macro purge_render_statements(plan) -%}
    {%- set rendered = {} -%}
    {%- for table in plan.rewriting -%}
        {%- do rendered.update({table.name: compliance.purge_render_table(plan, table)}) -%}
    {%- endfor -%}
    {{ return(rendered) }}
{%- endmacro %}

{% macro purge_render_table(plan, table) -%}
    {%- set ids = plan.ids -%}
    {%- set db = table.database -%}
    {%- set ts = plan.config.run_ts -%}
    {%- set join = [table.identifier.path, ids.database, ids.table, ids.column] -%}
    {%- set values = [] -%}
    {%- set backups = [] -%}
    {%- for part in table.todo -%}
        {%- do values.append(part['values']) -%}
        {%- do backups.append([part['values'], part.location]) -%}
    {%- endfor -%}
    {%- set partitions = {} -%}
    {#- partitions whose swap is not the package's ALTER (none: one metastore call for all) -#}
    {%- set overridden = [] -%}
    {#- partitions whose backup partition is not the package's ALTER (none: one metastore call for all) -#}
    {%- set backup_overridden = [] -%}
    {%- for part in table.todo -%}
        {%- set swap = compliance.purge_swap_location_sql(db, table.table, part['values'], part.new_location) -%}
        {%- if swap != compliance.default__purge_swap_location_sql(db, table.table, part['values'], part.new_location) -%}
            {%- do overridden.append(part.path) -%}
        {%- endif -%}
        {%- set add_backup = compliance.purge_backup_partition_sql(db, table.backup, part['values'], part.location) if table.partitioned else '' -%}
        {%- if add_backup != (compliance.default__purge_backup_partition_sql(db, table.backup, part['values'], part.location) if table.partitioned else '') -%}
            {%- do backup_overridden.append(part.path) -%}
        {%- endif -%}
        {%- do partitions.update({part.path: {
            'rewrite': compliance.purge_rewrite_sql(db, table.staging, table.table, table.data_columns, part['values'], *join),
            'add_backup': add_backup,
            'drop_backup': compliance.purge_drop_backup_partition_sql(db, table.backup, part['values']) if table.partitioned else '',
            'swap': swap,
            'before_swap': compliance.purge_before_swap_sql(db, table.table, part['values'], part.location),
        }}) -%}
    {%- endfor -%}
    {#- the two side tables; each made as one catalog call while its statement is the package's own -#}
    {%- set staging_properties = dict(table.write_properties, **compliance.side_table_properties('staging', db, table.table, ts)) -%}
    {%- set create_staging = compliance.purge_staging_table_sql(db, table.staging, table.table, table.staging_location, staging_properties) -%}
    {%- set backup_properties = compliance.side_table_properties('backup', db, table.table, ts) -%}
    {%- set create_backup = compliance.purge_backup_table_sql(db, table.backup, table.table, table.backup_location, backup_properties) -%}
    {{ return({
        'create_staging': create_staging,
        'create_staging_properties': staging_properties
            if create_staging == compliance.default__purge_staging_table_sql(db, table.staging, table.table, table.staging_location, staging_properties) else none,
        'create_backup': create_backup,
        'create_backup_properties': backup_properties
            if create_backup == compliance.default__purge_backup_table_sql(db, table.backup, table.table, table.backup_location, backup_properties) else none,
        'add_backup_partitions': compliance.purge_backup_partitions_sql(db, table.backup, backups) if table.partitioned and not backup_overridden else '',
        'rewrite': compliance.purge_rewrite_many_sql(db, table.staging, table.table, table.data_columns, table.partition_columns, values, *join)
            if table.partitioned else compliance.purge_rewrite_sql(db, table.staging, table.table, table.data_columns, [], *join),
        'rewrite_files': compliance.purge_rewrite_many_sql(db, table.staging, table.table, table.data_columns, table.partition_columns, values, *join,
            source=compliance.quote_ident(table.candidate_view)) if table.partitioned else '',
        'drop_staging': compliance.purge_drop_table_sql(db, table.staging),
        'drop_backup': compliance.purge_drop_table_sql(db, table.backup),
        'partitions': partitions,
        'swap_in_one_call': table.partitioned and table.todo | length > 1 and not overridden,
    }) }}
{%- endmacro %}

{#-
    The node's script (target/run/): every statement in the order the engine runs it, per table;
    alternatives (one partition at a time, or a file-level rewrite) are commented as such.
-#}
{#- `sql` with every id range masked: no file of target/ holds an id (as python_hooks/purge/scanning.py `as_logged` masks the log's; this render calls no Python). -#}
{% macro purge_masked_bounds(sql) -%}
    {{ return(modules.re.sub('(?i)\\bbetween\\s+-?[0-9]+\\s+and\\s+-?[0-9]+', 'between <smallest listed id> and <largest listed id>', sql)) }}
{%- endmacro %}

{% macro purge_script(plan, statements, delta_statements={}) -%}
    {%- set lines = ['-- purge run ' ~ plan.config.run_ts ~ (' (dry run: none of this ran)' if plan.config.dry_run else '')
        ~ ': ' ~ (plan.tables | length + plan.delta | length) ~ ' onboarded table(s), ' ~ plan.rewriting | length ~ ' with partitions to rewrite'
        ~ (', ' ~ plan.delta | length ~ ' Delta Lake or Iceberg' if plan.delta else '')] -%}
    {%- for table in plan.rewriting -%}
        {%- set sql = statements[table.name] -%}
        {%- do lines.append('\n-- ' ~ table.name ~ ': ' ~ table.todo | length ~ ' partition(s) to rewrite') -%}
        {%- do lines.append(sql.create_staging ~ ';') -%}
        {%- do lines.append(sql.create_backup ~ ';') -%}
        {%- if sql.add_backup_partitions -%}{%- do lines.append(sql.add_backup_partitions ~ ';') -%}{%- endif -%}
        {%- do lines.append(sql.rewrite ~ ';') -%}
        {%- if sql.rewrite_files -%}
            {%- do lines.append('-- or, when footers rule files out (the others copied unchanged):\n-- '
                ~ (sql.rewrite_files | replace('\n', '\n-- '))) -%}
        {%- endif -%}
        {%- for spec, part in sql.partitions.items() -%}
            {%- for statement in part.before_swap -%}{%- do lines.append(statement ~ ';') -%}{%- endfor -%}
        {%- endfor -%}
        {%- if sql.swap_in_one_call -%}
            {%- do lines.append('-- the swaps below, as one metastore call (one transaction):') -%}
        {%- endif -%}
        {%- for spec, part in sql.partitions.items() -%}
            {%- do lines.append(part.swap ~ ';') -%}
        {%- endfor -%}
        {%- do lines.append(sql.drop_staging ~ ';') -%}
    {%- endfor -%}
    {%- for table in plan.delta if table.name in delta_statements -%}
        {%- set sql = delta_statements[table.name] -%}
        {%- if table.table_format == 'iceberg' -%}
        {%- do lines.append('\n-- ' ~ table.name ~ ' (Apache Iceberg): ' ~ table.todo | length ~ ' partition(s) holding listed ids;'
            ~ ' the rewrites run when those partitions have delete files') -%}
        {%- if table.todo -%}{%- do lines.append(sql.delete ~ ';') -%}{%- endif -%}
        {%- do lines.append(sql.rewrite_data ~ ';') -%}
        {%- do lines.append(sql.rewrite_deletes ~ ';') -%}
        {%- if table.todo -%}{%- do lines.append(sql.rewrite_manifests ~ ';') -%}{%- endif -%}
        {%- else -%}
        {%- do lines.append('\n-- ' ~ table.name ~ ' (Delta Lake): ' ~ table.todo | length ~ ' partition(s) holding listed ids') -%}
        {%- if table.todo -%}{%- do lines.append(sql.delete ~ ';') -%}{%- endif -%}
        {%- if table.deletion_vectors -%}{%- do lines.append(sql.reorg ~ ';') -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {#- any statement's id range (an Iceberg delete's) masked, as the log shows the statements -#}
    {{ return(compliance.purge_masked_bounds(lines | join('\n'))) }}
{%- endmacro %}
