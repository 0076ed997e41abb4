-- noqa: disable=LT02
{#
    Running a purge: one table at a time, one partition at a time.  Every step goes through
    compliance.purge_execute, which reports an error instead of raising it, so one failing
    partition or table is logged FAILED and the others go on.
#}
{% macro purge_execute(name, sql) -%}
    {%- do log('purge step ' ~ name ~ ':\n' ~ sql, info=false) -%}
    {{ return(compliance.catalog_execute(sql)) }}
{%- endmacro %}

{#-
    Extension point between the backup and the swap (tests use it to simulate a concurrent
    writer; production leaves it empty).
-#}
{% macro purge_before_swap(database, table, partition_pairs, old_location) -%}
    {{ return(adapter.dispatch('purge_before_swap', 'compliance')(database, table, partition_pairs, old_location)) }}
{%- endmacro %}

{% macro default__purge_before_swap(database, table, partition_pairs, old_location) -%}
{%- endmacro %}

{#-
    {location: {fingerprint, rows}} of partition (or table) locations: the data files' digest
    fingerprint (paths, sizes, modification times) for the commit check and their row count from
    the files' footers (none when they cannot be read).  `exclude` leaves out this run's staging
    directory, which for an unpartitioned table lies inside the table location.
-#}
{% macro purge_snapshots(info, locations, exclude, count_rows=true, skip_by=none) -%}
    {{ return(compliance.purge_location_snapshots(info.database, info.table, locations, exclude, count_rows, skip_by)) }}
{%- endmacro %}

{#-
    This run's staging directory.  Partitioned: `<table location>/<ts>` (Gobblin's layout; only
    registered partition directories are read, so nobody reads it before the swap).
    Unpartitioned: `<table location>/_purge_<ts>`: Spark, Hive and Trino read an unpartitioned
    table's directory recursively but skip names starting with `_`, so neither the live table
    before the swap nor the backup (which keeps `<table location>`) after it ever reads the
    rewritten copy, and a run killed between the rewrite and the swap leaves nothing readers see.
-#}
{% macro purge_staging_location(info, ctx) -%}
    {%- if info.partition_columns -%}
        {{ return(info.location ~ '/' ~ ctx.ts) }}
    {%- endif -%}
    {{ return(info.location ~ '/_purge_' ~ ctx.ts) }}
{%- endmacro %}

{#-
    Step 1.  A partitioned parquet or ORC table gets a staging table whose partitions are not
    registered in the metastore (python_hooks/purge/staging.py): the same files in the same
    directories, without a metastore call per partition on insert and on drop.  Any other table,
    or a catalog that refuses, gets `create table ... like` (purge_staging_table_sql).
-#}
{% macro purge_create_staging(info, staging, staging_location, properties) -%}
    {%- do log('purge step create staging: ' ~ info.database ~ '.' ~ staging ~ ' at ' ~ staging_location, info=false) -%}
    {%- set created = compliance.purge_create_staging_table(info.database, staging, info.table, staging_location, properties) -%}
    {%- if created.created -%}
        {{ return({'ok': true, 'error': none, 'rows': []}) }}
    {%- endif -%}
    {%- if created.error -%}
        {%- do log('purge: ' ~ info.database ~ '.' ~ staging ~ ': creating it with `like` (' ~ created.error ~ ')', info=false) -%}
    {%- endif -%}
    {{ return(compliance.purge_execute('create staging', compliance.purge_staging_table_sql(info.database, staging, info.table, staging_location, properties))) }}
{%- endmacro %}

{#-
    Forget an (external) side table the purge made: step 5 for the staging table, and the backup
    table of a failed unpartitioned purge.  Through the catalog (no query over the table first);
    `drop table` if that fails; never a managed table (its directory may hold live data).
-#}
{% macro purge_forget_side_table(database, table, step='drop staging') -%}
    {%- do log('purge step ' ~ step ~ ': ' ~ database ~ '.' ~ table, info=false) -%}
    {%- set dropped = compliance.purge_forget_external_table(database, table) -%}
    {%- if dropped.refused -%}
        {%- do exceptions.warn("purge: " ~ dropped.error ~ "; drop " ~ database ~ "." ~ table ~ " yourself once nothing uses its location (make it external first: `alter table ... set tblproperties ('EXTERNAL'='TRUE')`).") -%}
    {%- elif not dropped.ok -%}
        {%- do log('purge: ' ~ database ~ '.' ~ table ~ ': dropping it with SQL (' ~ dropped.error ~ ')', info=false) -%}
        {%- do compliance.purge_execute(step, compliance.purge_drop_table_sql(database, table)) -%}
    {%- endif -%}
{%- endmacro %}

{#-
    purge_forget_side_table on a background thread, for step 5 once the partitions are swapped:
    the node goes on (results, the next table) and `purge_forgotten_side_tables` waits for it.
-#}
{% macro purge_forget_side_table_later(database, table, ctx) -%}
    {%- do log('purge step drop staging: ' ~ database ~ '.' ~ table ~ ' (in the background)', info=false) -%}
    {%- set key = 'purge forget ' ~ database ~ '.' ~ table -%}
    {%- do compliance.purge_forget_external_table_later(key, database, table, compliance.purge_drop_table_sql(database, table)) -%}
    {%- do ctx.forgetting.append({'key': key, 'database': database, 'table': table}) -%}
{%- endmacro %}

{#- Waits for the side tables purge_forget_side_table_later forgets; says what could not be dropped. -#}
{% macro purge_forgotten_side_tables(ctx) -%}
    {%- for pending in ctx.forgetting -%}
        {%- set dropped = compliance.catalog_collect(pending.key) -%}
        {%- if dropped is not none and dropped.refused -%}
            {%- do exceptions.warn("purge: " ~ dropped.error ~ "; drop " ~ pending.database ~ "." ~ pending.table ~ " yourself once nothing uses its location (make it external first: `alter table ... set tblproperties ('EXTERNAL'='TRUE')`).") -%}
        {%- elif dropped is not none and not dropped.ok -%}
            {%- do log('purge: ' ~ pending.database ~ '.' ~ pending.table ~ ' could not be dropped: ' ~ dropped.error, info=false) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do ctx.forgetting.clear() -%}
{%- endmacro %}

{#-
    The partition path (`k=v/k2=v2`, escaped; '' for an unpartitioned table) of a result row
    whose first values are the partition columns as strings; NULL is Hive's default partition.
-#}
{% macro purge_row_spec(partition_columns, row) -%}
    {%- set pairs = [] -%}
    {%- for column in partition_columns -%}
        {%- do pairs.append([column, '__HIVE_DEFAULT_PARTITION__' if row[loop.index0] is none else row[loop.index0]]) -%}
    {%- endfor -%}
    {{ return(adapter.partition_path(pairs) if pairs else '') }}
{%- endmacro %}

{% macro purge_say(message) -%}
    {{ log('purge: ' ~ message, info=true) }}
{%- endmacro %}

{#- The validated id table: stops the run, before any table is touched, when it is unusable. -#}
{% macro purge_id_source() -%}
    {%- set name = var('compliance_id_table', '') | string | trim -%}
    {%- set column = var('compliance_id_column', '') | string | trim -%}
    {%- if not modules.re.match('^[A-Za-z0-9_]+\\.[A-Za-z0-9_]+$', name) -%}
        {%- do exceptions.raise_compiler_error("Var compliance_id_table is " ~ tojson(name) ~ ": it must name the id table as db.table (for example u_purger.guestids). Nothing was purged.") -%}
    {%- endif -%}
    {%- if not column -%}
        {%- do exceptions.raise_compiler_error("Var compliance_id_column is empty: name the column of " ~ name ~ " that holds the ids (for example guestid). Nothing was purged.") -%}
    {%- endif -%}
    {%- set parts = (name | lower).split('.') -%}
    {%- set info = compliance.catalog_describe_table(parts[0], parts[1]) -%}
    {%- if not info.exists -%}
        {%- do exceptions.raise_compiler_error("The id table " ~ name ~ " (var compliance_id_table) does not exist. Create it or point the var at the table of ids to purge. Nothing was purged.") -%}
    {%- endif -%}
    {%- set ns = namespace(column=none) -%}
    {%- for existing in info.columns -%}
        {%- if existing | lower == column | lower -%}{%- set ns.column = existing -%}{%- endif -%}
    {%- endfor -%}
    {%- if ns.column is none -%}
        {%- do exceptions.raise_compiler_error("The id table " ~ name ~ " has no column " ~ tojson(column) ~ " (var compliance_id_column); its columns are: " ~ (info.columns.keys() | list | join(', ')) ~ ". Nothing was purged.") -%}
    {%- endif -%}
    {{ return({'database': parts[0], 'table': parts[1], 'column': ns.column, 'type': info.columns[ns.column], 'name': name}) }}
{%- endmacro %}

{#-
    The smallest and largest listed id as SQL literals ({min, max}), for integral and string id
    columns; none otherwise or when no id is listed.  The scan adds `identifier between min and
    max`: implied by the semi-join (a matching row's identifier equals a listed id), so it never
    changes a result, and Spark pushes it down to the parquet/ORC readers, which skip the row
    groups and stripes whose min/max statistics lie outside it (data skipping on clustered ids).
-#}
{% macro purge_id_bounds(id_database, id_table, id_column, id_type) -%}
    {%- set integral = id_type in ('tinyint', 'smallint', 'int', 'bigint') -%}
    {%- if not (integral or id_type == 'string') -%}{{ return(none) }}{%- endif -%}
    {%- if integral -%}
        {#- read from the id table's own files by pyarrow when it can (python_hooks/purge/scan.py), kept for the scans -#}
        {%- set read = compliance.purge_read_id_bounds({'database': id_database, 'table': id_table, 'column': id_column}) -%}
        {%- if read.ok and read.read -%}
            {{ return({'type': id_type, 'min': read.bounds[0] | string, 'max': read.bounds[1] | string} if read.bounds else none) }}
        {%- endif -%}
    {%- endif -%}
    {%- set column = compliance.quote_ident(id_column) -%}
    {%- set row = run_query('select min(' ~ column ~ '), max(' ~ column ~ ') from ' ~ compliance.table_ref(id_database, id_table)
        ~ ' where ' ~ column ~ ' is not null').rows[0] -%}
    {%- if row[0] is none -%}{{ return(none) }}{%- endif -%}
    {%- if integral -%}
        {{ return({'type': id_type, 'min': (row[0] | int | string), 'max': (row[1] | int | string)}) }}
    {%- endif -%}
    {{ return({'type': id_type, 'min': compliance.sql_string(row[0]), 'max': compliance.sql_string(row[1])}) }}
{%- endmacro %}

{#-
    Whitelisted, not blacklisted tables: [(database, table)].  Only whitelisted databases are
    listed.  Side tables (their data is the backup) are never purged; a table merely named like
    one is not purged either, and if it is onboarded a notice says so and what to do.
-#}
{% macro purge_candidates(whitelist, blacklist) -%}
    {%- set found = [] -%}
    {%- for database in compliance.catalog_list_databases() -%}
        {%- if compliance.database_selected(database, whitelist) -%}
            {%- for table in compliance.catalog_list_tables(database) -%}
                {%- if compliance.table_selected(database, table, whitelist, blacklist) -%}
                    {%- if not compliance.purge_is_working_table(table) -%}
                        {%- do found.append([database, table]) -%}
                    {%- else -%}
                        {%- do compliance.purge_check_lookalike(database, table) -%}
                    {%- endif -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}

{% macro purge_check_lookalike(database, table) -%}
    {%- set info = compliance.catalog_describe_table(database, table) -%}
    {%- if info.exists and 'lakehouse.side_table' not in info.properties and 'dataset.descriptor' in info.properties -%}
        {%- do compliance.purge_say(database ~ "." ~ table ~ " is onboarded but named like a side table (<table>_staging|backup|trash_<ts>) without"
            ~ " being registered as one: not purged. If purge or restore made it, adopt it (`dbt run-operation adopt_side_tables`); if it is a"
            ~ " table of your own, rename it so that it is purged.") -%}
    {%- endif -%}
{%- endmacro %}

{#- Checks the descriptor against the table: {field, path} or {error}. -#}
{% macro purge_resolve_identifier(info, ids) -%}
    {%- set name = info.database ~ '.' ~ info.table -%}
    {%- set parsed = compliance.purge_identifier_from_descriptor(name, info.properties['dataset.descriptor']) -%}
    {%- if parsed.error -%}{{ return(parsed) }}{%- endif -%}
    {%- set resolved = compliance.catalog_resolve_field(info.database, info.table, parsed.field) -%}
    {%- if resolved is none -%}
        {{ return({'error': "Table " ~ name ~ ": the identifier " ~ tojson(parsed.field) ~ " of its dataset.descriptor is not a column or struct field (columns: "
            ~ (info.columns.keys() | list | join(', ')) ~ "). Fix the descriptor with `dbt run-operation onboard`. The table was left as it was."}) }}
    {%- endif -%}
    {%- set field_type = resolved.type -%}
    {%- if not compliance.purge_types_comparable(field_type, ids.type) -%}
        {{ return({'error': "Table " ~ name ~ ": the identifier " ~ parsed.field ~ " is " ~ field_type ~ " but the id column "
            ~ ids.name ~ "." ~ ids.column ~ " is " ~ ids.type ~ "; they cannot be compared safely. Point the descriptor at a "
            ~ ids.type ~ " field or use an id table of " ~ field_type ~ " ids. The table was left as it was."}) }}
    {%- endif -%}
    {{ return({'field': parsed.field, 'path': resolved.path, 'type': field_type}) }}
{%- endmacro %}

{#-
    What a table needs before its scan, from the metastore only: {info, identifier, scan_sql, scan
    (the spec python_hooks/purge/scan.py runs)};
    {skip, notice} for a table that is gone, a view, or not onboarded; {info, error} for a
    descriptor the table cannot honour.  The materialization plans every table first, so that
    their scans can be read ahead (purge_read_ahead).
-#}
{% macro purge_table_plan(database, table, ids) -%}
    {%- set name = database ~ '.' ~ table -%}
    {%- set info = compliance.catalog_describe_table(database, table) -%}
    {%- if not info.exists or info.is_view -%}{{ return({'skip': true, 'notice': none}) }}{%- endif -%}
    {%- if 'dataset.descriptor' not in info.properties -%}
        {{ return({'skip': true, 'notice': name ~ " is whitelisted but has no dataset.descriptor table property: skipped (onboard it with `dbt run-operation onboard`)"}) }}
    {%- endif -%}
    {%- set identifier = compliance.purge_resolve_identifier(info, ids) -%}
    {%- if identifier.error -%}{{ return({'skip': false, 'info': info, 'error': identifier.error}) }}{%- endif -%}
    {#- the id range, where the identifier has the id column's own type (no cast between them) -#}
    {%- set bounds = ids.bounds if ids.bounds and identifier.type == ids.bounds.type else none -%}
    {%- set scan_sql = compliance.purge_scan_sql(database, table, info.partition_columns, identifier.path, ids.database, ids.table, ids.column, bounds) -%}
    {#- the same scan over a view of the files whose footers admit a listed id (python_hooks/purge/scan.py) -#}
    {%- set view = '__purge_scan_' ~ database ~ '__' ~ table -%}
    {%- set narrow_sql = compliance.purge_scan_sql(database, table, info.partition_columns, identifier.path, ids.database, ids.table, ids.column, bounds,
        compliance.quote_ident(view)) if bounds and info.partition_columns else none -%}
    {#- pyarrow may count the files the footers leave only for the scan as shipped: the scan, the ids' relation and the identifier expression not overridden -#}
    {%- set as_shipped = narrow_sql is not none
        and (narrow_sql | trim) == (compliance.default__purge_scan_sql(database, table, info.partition_columns, identifier.path, ids.database, ids.table, ids.column, bounds,
            compliance.quote_ident(view)) | trim)
        and (compliance.purge_ids_relation(ids.database, ids.table, ids.column) | trim) == (compliance.default__purge_ids_relation(ids.database, ids.table, ids.column) | trim)
        and (compliance.purge_identifier_expr('a', identifier.path) | trim) == (compliance.default__purge_identifier_expr('a', identifier.path) | trim) -%}
    {{ return({'skip': false, 'info': info, 'error': none, 'identifier': identifier, 'bounds': bounds, 'scan_sql': scan_sql,
        'scan': {'database': database, 'table': table, 'location': info.location, 'partition_columns': info.partition_columns, 'sql': scan_sql, 'narrow_sql': narrow_sql, 'view': view,
            'path': identifier.path, 'bounds': bounds,
            'ids': {'database': ids.database, 'table': ids.table, 'column': ids.column} if as_shipped else none}}) }}
{%- endmacro %}

{#- Purge one table (planned by purge_table_plan, or planned here); returns its result rows. -#}
{% macro purge_table(database, table, ids, ctx, plan=none) -%}
    {%- set name = database ~ '.' ~ table -%}
    {%- set results = [] -%}
    {%- set started = compliance.purge_now() -%}
    {%- set plan = plan or compliance.purge_table_plan(database, table, ids) -%}
    {%- if plan.skip -%}
        {%- if plan.notice -%}{%- do compliance.purge_say(plan.notice) -%}{%- endif -%}
        {{ return(results) }}
    {%- endif -%}
    {%- do ctx.onboarded.append(name) -%}
    {%- if plan.error -%}
        {%- do compliance.purge_say(name ~ ": FAILED: " ~ plan.error) -%}
        {%- do results.append(compliance.purge_result(ctx, database, table, {'state': 'FAILED', 'reason': plan.error, 'started_at': started})) -%}
        {{ return(results) }}
    {%- endif -%}
    {%- set info = plan.info -%}
    {%- set identifier = plan.identifier -%}
    {%- set base = {'identifier_field': identifier.field, 'started_at': started} -%}
    {%- set partition_columns = info.partition_columns -%}

    {#- one scan: the rows with a listed id, per partition; the other partitions are not read -#}
    {%- set scan = compliance.catalog_collect(name) -%}
    {%- if scan is none -%}
        {%- do log('purge step scan:\n' ~ plan.scan_sql, info=false) -%}
        {%- set scan = compliance.purge_run_scan(plan.scan) -%}
    {%- endif -%}
    {%- if scan.narrowed -%}
        {%- do compliance.purge_say(name ~ ": the footers' min/max rule out " ~ (scan.narrowed.files - scan.narrowed.read) ~ " of "
            ~ scan.narrowed.files ~ " file(s): " ~ ("the scan read " ~ scan.narrowed.read ~ " file(s) in " ~ scan.narrowed.partitions
            ~ " partition(s)" ~ (" (" ~ scan.narrowed.by ~ ", in this process)" if scan.narrowed.by else "")
            if scan.narrowed.read else "no file can hold a listed id, nothing was scanned")) -%}
    {%- endif -%}
    {%- if not scan.ok -%}
        {%- set reason = "Table " ~ name ~ ": the scan for listed ids failed: " ~ scan.error -%}
        {%- do compliance.purge_say(reason) -%}
        {%- do results.append(compliance.purge_result(ctx, database, table, dict(base, state='FAILED', reason=reason))) -%}
        {{ return(results) }}
    {%- endif -%}
    {%- set purged = {} -%}
    {%- for row in scan.rows -%}
        {%- do purged.update({compliance.purge_row_spec(partition_columns, row): row[-1]}) -%}
    {%- endfor -%}

    {#- the units of work: every partition, or the table itself -#}
    {%- set units = [] -%}
    {%- if partition_columns -%}
        {#- a table whose footers ruled out every file comes with the listing they were read from (nothing to rewrite) -#}
        {%- set listing = scan.partitions if (scan.partitions is defined and scan.partitions is not none and not scan.rows)
            else compliance.catalog_list_partitions(database, table) -%}
        {%- for part in listing -%}
            {%- do units.append({'pairs': part['values'], 'spec': adapter.partition_path(part['values']), 'location': part.location}) -%}
        {%- endfor -%}
    {%- else -%}
        {%- do units.append({'pairs': [], 'spec': none, 'location': info.location}) -%}
    {%- endif -%}

    {#-
        The partitions with ids: their files' fingerprint (the commit check compares it again
        before the swap) and rows, taken before anything is written.
    -#}
    {%- set hit = [] -%}
    {%- for unit in units -%}
        {%- if purged.get(unit.spec or '', 0) > 0 -%}{%- do hit.append(unit.location) -%}{%- endif -%}
    {%- endfor -%}
    {%- if hit -%}
        {#- the rewrite must list the files fingerprinted now, not the ones the scan listed -#}
        {%- do log('purge step refresh before rewrite: ' ~ name, info=false) -%}
        {%- do compliance.catalog_refresh_table(database, table) -%}
    {%- endif -%}
    {#-
        File-level rewrite (python_hooks/purge/file_level.py): with an integral identifier and the
        id range known, the same footer read sorts each partition's files into those whose
        statistics rule out every listed id (copied unchanged) and the others (rewritten).
    -#}
    {%- set skip_by = {'path': identifier.path, 'bounds': plan.bounds} if plan.bounds and partition_columns and ctx.file_level else none -%}
    {%- set snapshots = compliance.purge_snapshots(info, hit, compliance.purge_staging_location(info, ctx), true, skip_by) if hit else {} -%}

    {%- set todo = [] -%}
    {%- for unit in units -%}
        {%- set rows_purged = purged.get(unit.spec or '', 0) -%}
        {%- if rows_purged == 0 -%}
            {%- do results.append(compliance.purge_result(ctx, database, table, dict(base, partition_spec=unit.spec, old_location=unit.location,
                state='SKIPPED', reason='no listed id in this partition', new_location=unit.location, rows_purged=0))) -%}
        {%- else -%}
            {%- set snapshot = snapshots[unit.location] -%}
            {%- set rows_before = snapshot.rows -%}
            {%- if rows_before is none -%}
                {%- set counted = compliance.purge_execute('count', compliance.purge_count_sql(database, table, unit.pairs)) -%}
                {%- set rows_before = counted.rows[0][0] if counted.ok else none -%}
            {%- endif -%}
            {%- set fields = dict(base, partition_spec=unit.spec, old_location=unit.location, rows_before=rows_before, rows_purged=rows_purged,
                rows_after=(rows_before - rows_purged) if rows_before is not none else none) -%}
            {%- if snapshot.fingerprint is none or rows_before is none -%}
                {%- set reason = ('could not list the files of ' ~ unit.location) if snapshot.fingerprint is none
                    else ('could not count its rows: ' ~ counted.error) -%}
                {%- set reason = reason ~ '; nothing was written, the next run tries again' -%}
                {%- do compliance.purge_say(name ~ " " ~ (unit.spec or '(unpartitioned)') ~ ": FAILED: " ~ reason) -%}
                {%- do results.append(compliance.purge_result(ctx, database, table, dict(fields, state='FAILED', reason=reason, rows_after=none))) -%}
            {%- elif ctx.dry_run -%}
                {%- do fields.update({'state': 'DRY_RUN', 'reason': 'would remove ' ~ rows_purged ~ ' of ' ~ rows_before ~ ' rows'}) -%}
                {%- do compliance.purge_say(name ~ " " ~ (unit.spec or '(unpartitioned)') ~ ": DRY_RUN, would remove " ~ rows_purged ~ " of " ~ rows_before ~ " rows") -%}
                {%- do results.append(compliance.purge_result(ctx, database, table, fields)) -%}
            {%- else -%}
                {%- do todo.append({'unit': unit, 'fields': fields, 'fingerprint': snapshot.fingerprint,
                    'clean': snapshot.clean or [], 'candidates': snapshot.candidates or []}) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do compliance.purge_say(name ~ " (" ~ identifier.field ~ "): " ~ units | length ~ " partition(s), "
        ~ todo | length ~ " to rewrite" ~ (" (dry run)" if ctx.dry_run else "")) -%}
    {%- if todo -%}
        {%- do results.extend(compliance.purge_rewrite_partitions(info, identifier, ids, ctx, todo)) -%}
    {%- endif -%}
    {{ return(results) }}
{%- endmacro %}

{#- Steps 1-5 for the partitions that hold ids. -#}
{% macro purge_rewrite_partitions(info, identifier, ids, ctx, todo) -%}
    {%- set database = info.database -%}
    {%- set table = info.table -%}
    {%- set name = database ~ '.' ~ table -%}
    {%- set results = [] -%}
    {%- set staging = table ~ '_staging_' ~ ctx.ts -%}
    {%- set backup = table ~ '_backup_' ~ ctx.ts -%}
    {%- set staging_location = compliance.purge_staging_location(info, ctx) -%}
    {%- set partitioned = info.partition_columns | length > 0 -%}
    {#- the unpartitioned backup points at the table location (contract); a partitioned one gets its own directory -#}
    {%- set backup_location = info.database_location ~ '/' ~ backup if partitioned else info.location -%}

    {#- file-level: every partition has candidate files and some have files to copy -#}
    {%- set ns = namespace(file_level=partitioned, copies=0) -%}
    {%- for item in todo -%}
        {%- if not item.candidates -%}{%- set ns.file_level = false -%}{%- endif -%}
        {%- set ns.copies = ns.copies + item.clean | length -%}
    {%- endfor -%}
    {%- set file_level = ns.file_level and ns.copies > 0 -%}
    {%- set together = partitioned and (todo | length > 1 or file_level) -%}
    {%- set backup_sql = compliance.purge_backup_table_sql(database, backup, table, backup_location,
        compliance.side_table_properties('backup', database, table, ctx.ts)) -%}

    {%- set step = compliance.purge_create_staging(info, staging, staging_location, compliance.side_table_properties('staging', database, table, ctx.ts)) -%}
    {%- if step.ok and not together -%}
        {%- set step = compliance.purge_execute('create backup', backup_sql) -%}
    {%- endif -%}
    {%- if not step.ok -%}
        {%- do compliance.purge_forget_side_table(database, staging) -%}
        {{ return(compliance.purge_all_failed(info, ctx, todo, "could not create " ~ staging ~ " / " ~ backup ~ ": " ~ step.error)) }}
    {%- endif -%}

    {%- set backed_up = false -%}
    {%- if together -%}
        {#-
            Step 3 for every partition while the rewrite runs: the backup table, then one statement
            adding every partition's backup, pointing at its current location, on a background
            thread (the rewrite only reads those locations; each partition adds its own backup
            if the batch fails).  Nothing is swapped before both are done.
        -#}
        {%- set parts = [] -%}
        {%- for item in todo -%}{%- do parts.append([item.unit.pairs, item.unit.location]) -%}{%- endfor -%}
        {%- set backup_steps = [{'name': 'create backup', 'sql': backup_sql},
            {'name': 'backup partitions', 'sql': compliance.purge_backup_partitions_sql(database, backup, parts)}] -%}
        {%- for backup_step in backup_steps -%}
            {%- do log('purge step ' ~ backup_step.name ~ ' (in the background, during the rewrite):\n' ~ backup_step.sql, info=false) -%}
        {%- endfor -%}
        {%- set backup_key = 'purge backup ' ~ ctx.ts ~ ' ' ~ name -%}
        {%- do compliance.catalog_statements_ahead(backup_key, backup_steps) -%}
        {%- set staged = compliance.purge_rewrite_together(info, identifier, ids, staging, staging_location, todo, file_level, ctx) -%}
        {%- set backing = compliance.catalog_collect(backup_key) -%}
        {%- if not backing.ok and backing.step == 'create backup' -%}
            {#- nothing may be swapped without its backup: the rewritten copy goes, the table stays as it was -#}
            {%- do adapter.fs_delete(staging_location) -%}
            {%- do compliance.purge_forget_side_table(database, staging) -%}
            {{ return(compliance.purge_all_failed(info, ctx, todo, "could not create " ~ backup ~ ": " ~ backing.error)) }}
        {%- endif -%}
        {%- if not backing.ok -%}
            {%- do log('purge: ' ~ name ~ ': adding the backup partitions together failed, adding them one by one: ' ~ backing.error, info=false) -%}
        {%- endif -%}
        {%- set backed_up = backing.ok -%}
    {%- else -%}
        {%- set staged = none -%}
    {%- endif -%}
    {#-
        Several partitions: each is checked (row count, commit check) and left READY, then every
        READY partition is swapped by one metastore call; if that call fails, one by one.
    -#}
    {%- set swap_together = together -%}
    {%- set checked = [] -%}
    {%- for item in todo -%}
        {%- set done = staged.get(item.unit.spec) if staged is not none else none -%}
        {%- do checked.append(compliance.purge_partition(info, identifier, ids, ctx, item.unit, item.fields, staging, backup, staging_location, item.fingerprint, done, backed_up, swap_together)) -%}
    {%- endfor -%}
    {%- set ready = [] -%}
    {%- for row in checked if row.state == 'READY' -%}
        {%- do ready.append([row.partition_pairs, row.new_location]) -%}
    {%- endfor -%}
    {%- set swapped = {'ok': false} -%}
    {%- if ready -%}
        {%- do log('purge step swap ' ~ ready | length ~ ' partitions:\n' ~ tojson(ready), info=false) -%}
        {%- set swapped = compliance.catalog_set_partition_locations(database, table, ready) -%}
        {%- if not swapped.ok -%}
            {%- do compliance.purge_say(name ~ ": swapping " ~ ready | length ~ " partitions together failed, swapping them one by one: " ~ swapped.error) -%}
        {%- endif -%}
    {%- endif -%}
    {%- for row in checked -%}
        {%- if row.state == 'READY' -%}
            {%- do results.append(compliance.purge_commit(info, ctx, todo[loop.index0].unit, row, backup, swapped.ok)) -%}
        {%- else -%}
            {%- do results.append(row) -%}
        {%- endif -%}
    {%- endfor -%}
    {#- the old location of every swapped partition, for retention: one insert per table -#}
    {%- set stale = [] -%}
    {%- for row in results if row.state == 'COMMITTED' -%}
        {%- do stale.append({'database': database, 'table': table, 'partition_spec': row.partition_spec, 'location': row.old_location, 'reason': 'purge'}) -%}
    {%- endfor -%}
    {#- every swap above refreshed the table: nothing cached points at the old files; the node waits for it at its end -#}
    {%- do compliance.purge_forget_side_table_later(database, staging, ctx) -%}
    {#-
        In the background, while the next table is purged and the results are written; the node
        waits for it.  Started after the drop, which would otherwise wait for its metastore calls.
    -#}
    {%- if stale -%}
        {%- do compliance.catalog_background_start('stale_data_records ' ~ ctx.ts ~ ' ' ~ name,
            compliance.stale_records_sql(stale), compliance.stale_records_append(stale)) -%}
    {%- endif -%}
    {{ return(results) }}
{%- endmacro %}

{#- Every partition in `todo` FAILED for `reason`, nothing of them written or swapped. -#}
{% macro purge_all_failed(info, ctx, todo, reason) -%}
    {%- set results = [] -%}
    {%- for item in todo -%}
        {%- do compliance.purge_say(info.database ~ "." ~ info.table ~ " " ~ (item.unit.spec or '(unpartitioned)') ~ ": FAILED: " ~ reason) -%}
        {%- do results.append(compliance.purge_result(ctx, info.database, info.table, dict(item.fields, state='FAILED', reason=reason, rows_after=none))) -%}
    {%- endfor -%}
    {{ return(results) }}
{%- endmacro %}

{#-
    All partitions with ids rewritten by one statement: {spec: {location, rows}} of what landed
    in the staging table, or none when the statement failed (each partition is then rewritten
    on its own, so one bad partition fails alone).
-#}
{% macro purge_rewrite_together(info, identifier, ids, staging, staging_location, todo, file_level=false, ctx=none) -%}
    {%- set name = info.database ~ '.' ~ info.table -%}
    {%- set partitions = [] -%}
    {%- for item in todo -%}{%- do partitions.append(item.unit.pairs) -%}{%- endfor -%}
    {#-
        File-level: the rewrite reads a view over the files that may hold ids, and the files whose
        footers rule out every listed id are copied unchanged into the new directories.
    -#}
    {%- set source = none -%}
    {%- if file_level -%}
        {%- set view = 'purge_candidates_' ~ ctx.ts -%}
        {%- set reads = [] -%}
        {%- for item in todo -%}{%- do reads.append({'pairs': item.unit.pairs, 'files': item.candidates}) -%}{%- endfor -%}
        {%- set viewed = compliance.purge_candidate_view(info.database, info.table, view, reads) -%}
        {%- if viewed.ok -%}
            {%- set source = compliance.quote_ident(view) -%}
        {%- else -%}
            {%- do log('purge: ' ~ name ~ ': rewriting whole partitions (' ~ viewed.error ~ ')', info=false) -%}
        {%- endif -%}
    {%- endif -%}
    {#- the clean files are copied on a background thread while the rewrite runs -#}
    {%- set ns = namespace(rewritten=0, copied=0) -%}
    {%- if source is not none -%}
        {%- set copies = [] -%}
        {%- for item in todo -%}
            {%- do copies.append({'files': item.clean, 'directory': staging_location ~ '/' ~ item.unit.spec}) -%}
            {%- set ns.rewritten = ns.rewritten + item.candidates | length -%}
            {%- set ns.copied = ns.copied + item.clean | length -%}
        {%- endfor -%}
        {%- do log('purge step copy files without listed ids: ' ~ ns.copied ~ ' file(s) into ' ~ staging_location, info=false) -%}
        {%- set copying = compliance.purge_start_copy(view, copies) -%}
    {%- endif -%}
    {%- set step = compliance.purge_execute('rewrite partitions', compliance.purge_rewrite_many_sql(info.database, staging, info.table, info.data_columns, info.partition_columns, partitions, identifier.path, ids.database, ids.table, ids.column, source)) -%}
    {%- if source is not none -%}
        {%- do compliance.purge_drop_view(view) -%}
        {%- set copied = compliance.catalog_collect(view) if copying.ok else copying -%}
    {%- endif -%}
    {%- if not step.ok -%}
        {%- do compliance.purge_say(name ~ ": rewriting " ~ todo | length ~ " partition(s) together failed, rewriting them one by one: " ~ step.error) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if source is not none -%}
        {%- if not copied.ok -%}
            {%- do compliance.purge_say(name ~ ": copying the files without listed ids failed, rewriting the partitions whole, one by one: " ~ copied.error) -%}
            {{ return(none) }}
        {%- endif -%}
        {%- do compliance.purge_say(name ~ ": file-level rewrite: " ~ ns.rewritten ~ " file(s) that may hold listed ids rewritten, "
            ~ ns.copied ~ " whose footers rule them out copied unchanged") -%}
    {%- endif -%}
    {#- rows per rewritten partition from the files' footers; a Spark count when they cannot be read -#}
    {%- set written = compliance.purge_partition_row_counts(info.database, staging) -%}
    {%- set staged = {} -%}
    {%- if written.ok -%}
        {%- for part in written.partitions -%}
            {%- do staged.update({adapter.partition_path(part['values']): {'location': part.location, 'rows': part.rows}}) -%}
        {%- endfor -%}
    {%- else -%}
        {%- do log('purge: ' ~ info.database ~ '.' ~ staging ~ ': counting rows with Spark SQL (' ~ written.error ~ ')', info=false) -%}
        {%- set counted = compliance.purge_execute('count partitions', compliance.purge_count_by_partition_sql(info.database, staging, info.partition_columns)) -%}
        {#- the rewrite's directories, whether or not the metastore registers them as partitions -#}
        {%- for row in counted.rows -%}
            {%- set spec = compliance.purge_row_spec(info.partition_columns, row) -%}
            {%- do staged.update({spec: {'location': staging_location ~ '/' ~ spec, 'rows': row[-1]}}) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(staged) }}
{%- endmacro %}

{% macro purge_partition(info, identifier, ids, ctx, unit, fields, staging, backup, staging_location, before, staged, backed_up, defer_swap=false) -%}
    {%- set database = info.database -%}
    {%- set table = info.table -%}
    {%- set started = compliance.purge_now() -%}
    {%- set row = dict(fields, started_at=started, backup_table=database ~ '.' ~ backup) -%}
    {%- set expected_after = (fields.rows_before - fields.rows_purged) if fields.rows_before is not none else none -%}
    {%- set new_location = (staging_location ~ '/' ~ unit.spec) if unit.pairs else staging_location -%}
    {%- if staged is none -%}
        {%- set step = compliance.purge_execute('rewrite', compliance.purge_rewrite_sql(database, staging, table, info.data_columns, unit.pairs, identifier.path, ids.database, ids.table, ids.column)) -%}
        {%- if step.ok and unit.pairs -%}
            {%- set new_location = compliance.catalog_partition_location(database, staging, unit.pairs) or new_location -%}
        {%- endif -%}
        {%- set reason = none if step.ok else 'the rewrite into ' ~ staging ~ ' failed: ' ~ step.error -%}
    {%- else -%}
        {%- set new_location = staged.location -%}
        {%- set reason = none -%}
    {%- endif -%}

    {%- if reason is none -%}
        {%- if staged is none -%}
            {%- set counted = compliance.purge_execute('count', compliance.purge_count_sql(database, staging, unit.pairs)) -%}
        {%- else -%}
            {%- set counted = {'ok': true, 'rows': [[staged.rows]]} -%}
        {%- endif -%}
        {%- set after = counted.rows[0][0] if counted.ok else none -%}
        {%- if after is none or after != expected_after -%}
            {%- set reason = 'the rewrite holds ' ~ after ~ ' rows, expected ' ~ expected_after ~ ' (' ~ fields.rows_before ~ ' minus ' ~ fields.rows_purged
                ~ '): the partition changed during the purge' ~ ('' if counted.ok else ' (' ~ counted.error ~ ')') ~ '; not swapped, the next run purges it again' -%}
        {%- elif after == 0 and unit.pairs -%}
            {#- every row was purged: the writer made no directory, and the partition must not point at nothing -#}
            {%- do adapter.fs_mkdirs(new_location) -%}
        {%- endif -%}
    {%- endif -%}

    {%- if reason is none and unit.pairs and not backed_up -%}
        {%- set step = compliance.purge_execute('backup partition', compliance.purge_backup_partition_sql(database, backup, unit.pairs, unit.location)) -%}
        {%- if not step.ok -%}{%- set reason = 'could not add the backup partition to ' ~ backup ~ ': ' ~ step.error -%}{%- endif -%}
    {%- endif -%}

    {%- if reason is none -%}
        {%- do compliance.purge_before_swap(database, table, unit.pairs, unit.location) -%}
        {#- Gobblin's commit check: the files read by the rewrite must still be the partition's files -#}
        {%- set now = compliance.purge_snapshots(info, [unit.location], staging_location, count_rows=false)[unit.location] -%}
        {%- if now.fingerprint is none or now.fingerprint != before -%}
            {%- set reason = 'the files of the partition changed between the start of the rewrite and the swap (a concurrent write?): not swapped, the next run purges it again' -%}
        {%- endif -%}
    {%- endif -%}

    {%- if reason is not none -%}
        {{ return(compliance.purge_partition_failed(info, ctx, unit, row, backup, new_location, reason)) }}
    {%- endif -%}
    {%- set ready = dict(row, state='READY', new_location=new_location, partition_pairs=unit.pairs) -%}
    {%- if defer_swap -%}
        {{ return(ready) }}
    {%- endif -%}
    {{ return(compliance.purge_commit(info, ctx, unit, ready, backup, false)) }}
{%- endmacro %}

{#-
    Step 4 for one checked (READY) partition: swap it unless a batched swap already did, and
    return its COMMITTED row, or FAILED (backup partition and rewritten copy removed).
-#}
{% macro purge_commit(info, ctx, unit, ready, backup, swapped) -%}
    {%- set label = info.database ~ '.' ~ info.table ~ ' ' ~ (unit.spec or '(unpartitioned)') -%}
    {%- set row = dict(ready) -%}
    {%- do row.pop('partition_pairs', none) -%}
    {%- if not swapped -%}
        {%- set step = compliance.purge_execute('swap', compliance.purge_swap_location_sql(info.database, info.table, unit.pairs, row.new_location)) -%}
        {%- if not step.ok -%}
            {{ return(compliance.purge_partition_failed(info, ctx, unit, row, backup, row.new_location, 'the location swap failed: ' ~ step.error)) }}
        {%- endif -%}
    {%- endif -%}
    {%- set expected_after = row.rows_before - row.rows_purged -%}
    {%- do compliance.purge_say(label ~ ": COMMITTED, removed " ~ row.rows_purged ~ " of " ~ row.rows_before ~ " rows, now at " ~ row.new_location) -%}
    {%- set committed = compliance.purge_result(ctx, info.database, info.table, dict(row, state='COMMITTED', rows_after=expected_after)) -%}
    {#- kept as it happens: if the table fails later, this row still reaches purge_log -#}
    {%- do ctx.committed.append(committed) -%}
    {{ return(committed) }}
{%- endmacro %}

{#- A partition that is not swapped: its backup partition and rewritten copy removed, its FAILED row. -#}
{% macro purge_partition_failed(info, ctx, unit, row, backup, new_location, reason) -%}
    {%- set label = info.database ~ '.' ~ info.table ~ ' ' ~ (unit.spec or '(unpartitioned)') -%}
    {#- the backup partition would point at the live data: remove it (external: no data deleted) -#}
    {%- if unit.pairs -%}
        {%- do compliance.purge_execute('undo backup partition', compliance.purge_drop_backup_partition_sql(info.database, backup, unit.pairs)) -%}
    {%- else -%}
        {#-
            An unpartitioned table's backup is the whole table at the live location: it backs up
            nothing (the data was not swapped) and would count as a backup version.  Forget it;
            it is external, so no file is deleted.
        -#}
        {%- do compliance.purge_forget_side_table(info.database, backup, 'undo backup table') -%}
        {%- do row.update({'backup_table': none}) -%}
    {%- endif -%}
    {#- nothing references the rewritten copy: remove it (for an unpartitioned table it sits inside the live location) -#}
    {%- do adapter.fs_delete(new_location) -%}
    {%- do compliance.purge_say(label ~ ": FAILED: " ~ reason) -%}
    {%- set failed = dict(row, state='FAILED', reason=reason, new_location=none, rows_after=none) -%}
    {%- do failed.pop('partition_pairs', none) -%}
    {{ return(compliance.purge_result(ctx, info.database, info.table, failed)) }}
{%- endmacro %}
