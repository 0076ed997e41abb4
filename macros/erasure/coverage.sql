-- noqa: disable=LT02
{#
    Coverage (docs/erasure.md, `## Coverage`): the tables that may hold identifiers but that the
    purge does not cover, in every database of the metastore (var `pii_coverage_exclude` leaves
    some out, whitelist grammar), inside or outside the purge whitelist.  Four findings:
      pii_column_without_descriptor  a table with a column or nested field named like an
                                     identifier in use, or matching var pii_column_patterns, and
                                     no dataset.descriptor;
      onboarded_outside_whitelist    a table with a dataset.descriptor that purge_whitelist (minus
                                     purge_blacklist) does not select: the verifier reads it, the
                                     purge never touches it;
      identifier_statistics_kept     a Delta Lake or Iceberg table onboarded with statistics off
                                     for its identifier (statistics: false) whose metadata keeps
                                     them again (python_hooks/catalog/statistics.py);
      downstream_of_onboarded        a table downstream of an onboarded table in the project's
                                     own lineage (dbt_lineage_edges of the latest invocation the
                                     audit loaded) that is not itself onboarded; with the audit
                                     off, no command refreshes it and the model warns so.
    Side tables this project registered (lakehouse.side_table*), views and the id table are never
    findings, nor, downstream, nodes tagged with var pii_coverage_exempt_tags.  A finding whose
    table matches a row of the exceptions seed is `excepted`.
#}

{#- The columns of pii_coverage's findings, in order (the model adds status, action, checked_at). -#}
{% macro pii_coverage_columns() -%}
    {{ return(['finding_id', 'table_id', 'database_name', 'table_name', 'finding', 'matched_columns',
        'upstream_tables', 'exception_pattern', 'exception_reason', 'action']) }}
{%- endmacro %}

{#- `select ... from values ...` of the finding rows (dicts keyed by pii_coverage_columns), every column a string. -#}
{% macro pii_coverage_rows_sql(rows) -%}
    {%- set columns = compliance.pii_coverage_columns() -%}
    {%- if not rows -%}
select
    {%- for column in columns %}
    cast(null as string) as {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
where 1 = 0
    {%- else -%}
select
    {%- for column in columns %}
    cast({{ column }} as string) as {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
from values
    {%- for row in rows %}
    ({% for column in columns %}{{ compliance.sql_string(row.get(column)) }}{{ ', ' if not loop.last }}{% endfor %}){{ ',' if not loop.last }}
    {%- endfor %}
    as findings ({{ columns | join(', ') }})
    {%- endif -%}
{%- endmacro %}

{#-
    The rows of the exceptions seed: [{table_pattern, reason}].  A pattern outside the grammar
    fails here, naming the entry.
-#}
{% macro pii_coverage_exception_rows(relation) -%}
    {%- set rows = [] -%}
    {%- if adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
        {%- do exceptions.warn("pii_coverage: the exceptions seed " ~ relation ~ " does not exist yet (dbt seed): no finding is excepted.") -%}
        {{ return(rows) }}
    {%- endif -%}
    {%- set table = run_query('select table_pattern, reason from ' ~ relation) -%}
    {%- for row in table.rows -%}
        {%- set text = (row['table_pattern'] or '') | string | trim -%}
        {%- set reason = row['reason'] -%}
        {#- parsed here so that a bad pattern fails before anything is listed, naming the entry -#}
        {%- do compliance.parse_table_patterns(text, 'pii_coverage_exceptions.table_pattern') -%}
        {%- do rows.append({
            'table_pattern': text,
            'reason': (reason | string | trim) if reason is not none and (reason | string | trim) != '' else none,
        }) -%}
    {%- endfor -%}
    {{ return(rows) }}
{%- endmacro %}

{#-
    The exception of one table: {pattern, reason} of the most specific matching row (`db.table`
    beats `db.table*` beats `db` beats `db*`, as the retention policies rank theirs), or none.
    A row without a reason excepts nothing (the seed's test fails on it).
-#}
{% macro pii_coverage_exception_for(database, table, exception_rows) -%}
    {%- set best = compliance.most_specific_match(database, table, exception_rows | selectattr('reason') | list,
        'pii_coverage_exceptions.table_pattern') -%}
    {{ return({'pattern': best.pattern.text, 'reason': best.row.reason} if best else none) }}
{%- endmacro %}

{#- The identifier names in use: the leaf of every onboarded table's identifier field, and the id column. -#}
{% macro pii_coverage_identifier_names(onboarded_tables, id_column) -%}
    {%- set names = [] -%}
    {%- for table in onboarded_tables if table.identifier -%}
        {%- set leaf = table.identifier.split('.')[-1] | replace('`', '') | trim | lower -%}
        {%- if leaf not in names -%}{%- do names.append(leaf) -%}{%- endif -%}
    {%- endfor -%}
    {%- set id_leaf = (id_column or '') | string | trim | lower -%}
    {%- if id_leaf and id_leaf not in names -%}{%- do names.append(id_leaf) -%}{%- endif -%}
    {{ return(names | sort) }}
{%- endmacro %}

{#- One finding row (see pii_coverage_columns). -#}
{% macro pii_coverage_finding(database, table, finding, matched, upstream, exception_rows, detail=none) -%}
    {%- set exception = compliance.pii_coverage_exception_for(database, table, exception_rows) -%}
    {{ return({
        'finding_id': database ~ '.' ~ table ~ ':' ~ finding,
        'table_id': database ~ '.' ~ table,
        'database_name': database,
        'table_name': table,
        'finding': finding,
        'matched_columns': (matched | join(', ')) if matched else none,
        'upstream_tables': (upstream | join(', ')) if upstream else none,
        'exception_pattern': exception.pattern if exception else none,
        'exception_reason': exception.reason if exception else none,
        'action': none if exception else compliance.pii_coverage_action(database ~ '.' ~ table, matched, finding, detail),
    }) }}
{%- endmacro %}

{#-
    This project's nodes and sources as lineage for coverage_downstream_tables: relation, tags,
    parents, and the descriptor a model's config declares.
-#}
{% macro pii_coverage_manifest_nodes() -%}
    {%- set found = [] -%}
    {%- if execute -%}
        {%- for node in (graph.nodes.values() | list) + (graph.sources.values() | list) -%}
            {%- set config = node.get('config') or {} -%}
            {%- do found.append({
                'unique_id': node.unique_id,
                'resource_type': node.resource_type,
                'relation_name': node.get('relation_name'),
                'tags': node.get('tags') or [],
                'depends_on': (node.get('depends_on') or {}).get('nodes') or [],
                'descriptor': (config.get('tblproperties') or {}).get('dataset.descriptor'),
            }) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#-
    The downstream_of_onboarded findings of pii_coverage_findings: tables downstream of an
    onboarded table, not onboarded themselves, in the lineage the audit loaded (every project's
    runs) and in this project's manifest, built or not yet, so that the first build's answer is
    whole.
-#}
{% macro pii_coverage_downstream_findings(edges_relation, nodes_relation, onboarded_ids, names, exempt_tags, whitelist, blacklist, exclude, id_table, exception_rows) -%}
    {%- set findings = [] -%}
    {%- set lineage = adapter.coverage_downstream_tables(edges_relation | string, nodes_relation | string, onboarded_ids, exempt_tags,
        compliance.pii_coverage_manifest_nodes()) -%}
    {%- if not lineage.ok -%}
        {%- do exceptions.warn("pii_coverage: the lineage tables " ~ edges_relation ~ " / " ~ nodes_relation ~ " could not be read ("
            ~ lineage.error ~ "), so only this project's models are judged downstream of onboarded tables, not other projects' tables;"
            ~ " run any dbt command with the audit on first.") -%}
    {%- endif -%}
    {%- if not compliance.bool_var('audit_enabled', true) -%}
        {%- do exceptions.warn("pii_coverage: the audit is off (var audit_enabled), so this project's dbt commands do not refresh the lineage:"
            ~ " the downstream_of_onboarded findings of other projects' tables are as of the last invocation the audit loaded ("
            ~ (lineage.invocation_id or 'none yet: none is listed') ~ "). Turn the audit on to keep them current.") -%}
    {%- endif -%}
    {%- set downstream_pairs = [] -%}
    {%- for row in lineage.tables -%}
        {%- do downstream_pairs.append(row.table_id.split('.', 1)) -%}
    {%- endfor -%}
    {%- set downstream_described = {} -%}
    {%- for table in adapter.coverage_describe_tables(downstream_pairs) -%}
        {%- do downstream_described.update({table.table_id: table}) -%}
    {%- endfor -%}
    {%- set downstream_matched = adapter.coverage_match_columns(downstream_described.values() | list, names, var('pii_column_patterns', [])) -%}
    {%- for row in lineage.tables -%}
        {%- set table = downstream_described.get(row.table_id) -%}
        {%- if not table and row.planned -%}
            {#- a model of this project not built yet: judged by its config, its columns unknown -#}
            {%- set parts = row.table_id.split('.', 1) -%}
            {%- set table = {'database': parts[0], 'table': parts[1], 'table_id': row.table_id, 'side_table': false,
                'is_view': false, 'descriptor': row.descriptor} -%}
        {%- endif -%}
        {%- if table and not (table.side_table or table.is_view or table.table_id == id_table
            or (exclude and compliance.table_selected(table.database, table.table, exclude, []))) -%}
            {%- set is_onboarded = table.descriptor and compliance.table_selected(table.database, table.table, whitelist, blacklist) -%}
            {%- if not is_onboarded -%}
                {%- do findings.append(compliance.pii_coverage_finding(table.database, table.table, 'downstream_of_onboarded',
                    downstream_matched.get(table.table_id), row.upstream, exception_rows)) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(findings) }}
{%- endmacro %}

{#-
    The coverage findings, from the catalog (one listing and one getTablesByName per database) and
    the audit's lineage tables.  Reads no row of any user table.
-#}
{% macro pii_coverage_findings(exceptions_relation, edges_relation, nodes_relation) -%}
    {%- set whitelist = compliance.parse_table_patterns(var('purge_whitelist', ''), 'purge_whitelist') -%}
    {%- set blacklist = compliance.parse_table_patterns(var('purge_blacklist', ''), 'purge_blacklist') -%}
    {%- set exception_rows = compliance.pii_coverage_exception_rows(exceptions_relation) -%}
    {%- set id_table = (compliance.id_table_name() or []) | join('.') -%}
    {%- set exempt_tags = var('pii_coverage_exempt_tags', ['purge', 'retention', 'audit', 'erasure']) -%}

    {#- (a) every table of every database not excluded, described in one call per database -#}
    {%- set exclude = compliance.parse_table_patterns(var('pii_coverage_exclude', ''), 'pii_coverage_exclude') -%}
    {%- set listed = [] -%}
    {%- for database in adapter.catalog_databases() -%}
        {%- for table in adapter.catalog_tables(database) if not (exclude and compliance.table_selected(database, table, exclude, [])) -%}
            {%- do listed.append([database, table]) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set described = adapter.coverage_describe_tables(listed) -%}
    {%- set onboarded = [] -%}
    {%- for table in described if table.descriptor and not table.side_table and not table.is_view -%}
        {%- do onboarded.append(table) -%}
    {%- endfor -%}
    {%- set onboarded_ids = onboarded | map(attribute='table_id') | list -%}
    {%- set names = compliance.pii_coverage_identifier_names(onboarded, var('compliance_id_column', '')) -%}
    {%- set candidates = [] -%}
    {%- for table in described if not (table.descriptor or table.side_table or table.is_view or table.table_id == id_table) -%}
        {%- do candidates.append(table) -%}
    {%- endfor -%}
    {%- set matched = adapter.coverage_match_columns(candidates, names, var('pii_column_patterns', [])) -%}
    {%- set findings = [] -%}
    {%- for table in candidates if table.table_id in matched -%}
        {%- do findings.append(compliance.pii_coverage_finding(table.database, table.table, 'pii_column_without_descriptor',
            matched[table.table_id], none, exception_rows)) -%}
    {%- endfor -%}
    {%- for table in onboarded if not compliance.table_selected(table.database, table.table, whitelist, blacklist) -%}
        {%- do findings.append(compliance.pii_coverage_finding(table.database, table.table, 'onboarded_outside_whitelist',
            [table.identifier] if table.identifier else none, none, exception_rows)) -%}
    {%- endfor -%}
    {%- for table in onboarded if table.statistics_kept -%}
        {%- do findings.append(compliance.pii_coverage_finding(table.database, table.table, 'identifier_statistics_kept',
            [table.identifier], none, exception_rows, table.statistics_kept)) -%}
    {%- endfor -%}

    {#- (b) tables downstream of an onboarded table, not onboarded themselves -#}
    {%- do findings.extend(compliance.pii_coverage_downstream_findings(edges_relation, nodes_relation, onboarded_ids, names,
        exempt_tags, whitelist, blacklist, exclude, id_table, exception_rows)) -%}
    {%- do log("pii_coverage: " ~ described | length ~ " table(s) in " ~ (listed | map('first') | unique | list | length) ~ " database(s)"
        ~ (" (pii_coverage_exclude: " ~ var('pii_coverage_exclude', '') ~ ")" if exclude else "") ~ ", " ~ onboarded | length ~ " onboarded; identifier names "
        ~ (names | join(', ') or '(none)') ~ "; " ~ findings | length ~ " finding(s)", info=true) -%}
    {{ return(findings | sort(attribute='finding_id')) }}
{%- endmacro %}

{#-
    For the data test assert_pii_coverage_complete: logs one line per table that is neither
    onboarded nor excepted, what matched and what to do, so the failing test's output names them
    (dbt prints only the count of a failing test's rows).
-#}
{% macro pii_coverage_report(coverage_relation) -%}
    {#- only where the test runs (not dbt compile or docs generate), and only once the model is built -#}
    {%- if execute and flags.WHICH in ['test', 'build', 'retry']
        and adapter.get_relation(coverage_relation.database, coverage_relation.schema, coverage_relation.identifier) is not none -%}
        {%- set table = run_query("select table_id, finding, matched_columns, upstream_tables, action from " ~ coverage_relation
            ~ " where status = 'onboarded_needed' order by table_id, finding") -%}
        {%- for row in table.rows -%}
            {%- do log("pii_coverage: " ~ row['table_id'] ~ " (" ~ row['finding'] ~ "): "
                ~ ("fields " ~ row['matched_columns'] if row['matched_columns'] else "")
                ~ (("; " if row['matched_columns'] else "") ~ "downstream of " ~ row['upstream_tables'] if row['upstream_tables'] else "")
                ~ ". " ~ row['action'], info=true) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro %}

{#- What to do about an un-excepted finding (the model's `action` column and the test's log); the first matched field that is not in an array is suggested as the identifier. -#}
{% macro pii_coverage_action(table_id, matched=none, finding=none, detail=none) -%}
    {%- if finding == 'identifier_statistics_kept' -%}
        {{ return("It was onboarded with statistics: false, but its metadata keeps statistics of its identifier again (" ~ detail
            ~ "), so the purged ids stay in its log or manifests until they expire. Turn them off again: dbt run-operation onboard --args '{table: "
            ~ table_id ~ ", identifier: " ~ matched[0] ~ ", statistics: false}'; or add a row (table_pattern " ~ table_id ~ ", reason) to the seed "
            ~ var('pii_coverage_exceptions', 'pii_coverage_exceptions') ~ ".") }}
    {%- endif -%}
    {%- if finding == 'onboarded_outside_whitelist' -%}
        {{ return("Make purge_whitelist select it (add " ~ table_id ~ ", or its database) so that the purge removes its ids; the verifier reads it"
            ~ " either way, and its requests are not erased while it holds their ids. If it holds no identifier to erase, remove its dataset.descriptor,"
            ~ " or add a row (table_pattern " ~ table_id ~ ", reason) to the seed " ~ var('pii_coverage_exceptions', 'pii_coverage_exceptions') ~ ".") }}
    {%- endif -%}
    {%- set plain = [] -%}
    {%- for path in matched or [] if '[' not in path -%}{%- do plain.append(path) -%}{%- endfor -%}
    {{ return("Onboard it: dbt run-operation onboard --args '{table: " ~ table_id ~ ", identifier: " ~ (plain[0] if plain else '<field>')
        ~ "}' (and make purge_whitelist select it),"
        ~ " or add a row (table_pattern " ~ table_id ~ ", reason) to the seed " ~ var('pii_coverage_exceptions', 'pii_coverage_exceptions')
        ~ " saying why it holds no identifier to erase.") }}
{%- endmacro %}
