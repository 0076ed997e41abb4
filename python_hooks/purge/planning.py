"""Planning a purge node: the catalog's and the files' facts, as a typed plan (plan.py).

In order, as the node's first call into Python (`adapter.purge_plan`):

1. the journal's open entries are completed into purge_log (recovery.py), before anything else;
2. the id table is checked and the listed ids' range read (id_table.py);
3. the tables are selected (selection.py) and each one's identifier resolved from its descriptor;
4. each table's files are narrowed by their footers (skipping.py): no scan, a scan of a few
   files, or a scan of the table;
5. each table gets the names and locations of its staging table, backup and rewritten copy.

A bad var or id table stops the node here, before any table is touched; a table whose
descriptor it cannot honour gets an error that becomes its FAILED row.
"""

from __future__ import annotations

import json
import time
from typing import Any

from python_hooks.catalog import console, files, layout, metastore, tables
from python_hooks.catalog import iceberg as iceberg_tables
from python_hooks.catalog.column_types import types_comparable
from python_hooks.catalog.jvm import path_string, scala_list
from python_hooks.errors import ConfigError, did_you_mean
from python_hooks.purge import delta, footers, iceberg, recovery, skipping
from python_hooks.purge.formats import table_format_refusal
from python_hooks.purge.id_table import id_source
from python_hooks.purge.plan import Identifier, IdSource, PurgeConfig, PurgePlan, TablePlan
from python_hooks.purge.selection import DESCRIPTOR, partition_columns, select_tables

EXAMPLE_DESCRIPTOR = '{"complianceSpec": {"identifierField": "metadata.guestid"}}'


def plan_purge(spark: Any, given: dict[str, Any]) -> PurgePlan:
    """The node's plan; raises ConfigError / NotFoundError for a var or id table it cannot use."""
    config = PurgeConfig.of(given)
    started = time.perf_counter()
    console.debug("purge step recovery check (the journal's open entries)")
    recovered = recovery.complete_from_journal(spark, config)
    console.debug("purge step id table")
    ids = id_source(spark, config)
    plan = PurgePlan(config=config, ids=ids, recovered=recovered)
    if not config.whitelist:
        return plan
    console.debug("purge step selection (the onboarded tables)")
    selection = select_tables(spark, config)
    for warning in selection.warnings:
        console.warn(f"purge: {warning}")
    for notice in selection.notices:
        console.say(f"purge: {notice}")
    plan.notices.extend(selection.notices)
    locations: dict[str, str] = {}
    console.debug(f"purge step table plans ({len(selection.onboarded)} table(s))")
    for meta in selection.onboarded:
        if metastore.provider(meta) == "delta":
            plan.delta.append(delta_table_plan(spark, meta, ids))
        elif iceberg_tables.is_iceberg(meta) and iceberg_tables.in_session(spark):
            plan.delta.append(delta_table_plan(spark, meta, ids, iceberg.table_plan))
        else:
            plan.tables.append(table_plan(spark, meta, ids, config, locations))
    if not plan.tables and not plan.delta:
        _empty_selection(config, selection.databases)
    console.debug("purge step footers (data skipping)")
    skipping.narrow(spark, plan)
    console.debug(f"purge: planned {len(plan.tables)} table(s) in {time.perf_counter() - started:.3f}s")
    return plan


def identifier_of(spark: Any, database: str, table: str, ids: dict[str, Any]) -> dict[str, Any]:
    """A table's identifier for macros: {field, path, type}, or {error}."""
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    source = IdSource(ids["database"], ids["table"], ids["column"], ids["type"])
    descriptor = meta.properties().get(DESCRIPTOR)
    if not descriptor.isDefined():
        return {"error": f"Table {database}.{table} has no dataset.descriptor"}
    plan = TablePlan(database, table, "", "", partition_columns(meta), [], [], None, False)
    try:
        found = resolve_identifier(plan, tables.read_schema(meta), str(descriptor.get()), source)
    except ConfigError as exc:
        return {"error": str(exc.msg)}
    return {"field": found.field, "path": found.path, "type": found.type}


def table_plan(
    spark: Any, meta: Any, ids: IdSource, config: PurgeConfig, database_locations: dict[str, str]
) -> TablePlan:
    """One onboarded table: its facts from the metastore, its identifier, its side tables' names."""
    database = str(meta.identifier().database().get()).lower()
    table = str(meta.identifier().table()).lower()
    if database not in database_locations:
        database_locations[database] = path_string(
            spark, metastore.session_catalog(spark).getDatabaseMetadata(database).locationUri()
        )
    schema = tables.read_schema(meta)
    columns = partition_columns(meta)
    storage = files.storage_format(meta)
    plan = TablePlan(
        database=database,
        table=table,
        location=path_string(spark, meta.location()),
        database_location=database_locations[database],
        partition_columns=columns,
        partition_types=[str(schema[c].dataType.simpleString()) for c in columns],
        data_columns=[f.name for f in schema.fields if f.name not in columns],
        storage_format=storage if storage and footers.reads_like_the_table(spark, meta, storage) else None,
        bucketed=bool(meta.bucketSpec().isDefined()),
        write_properties=_write_properties(meta, storage),
    )
    plan.error = table_format_refusal(spark, meta, plan.name, plan.location)
    _identify(plan, schema, str(meta.properties().apply(DESCRIPTOR)), ids)
    ts = config.run_ts
    plan.staging = f"{table}_staging_{ts}"
    plan.backup = f"{table}_backup_{ts}"
    # a partitioned table's rewrite sits in <L>/<ts> (only registered partition directories are
    # read); an unpartitioned one's beside its directory (python_hooks/catalog/layout.py)
    plan.staging_location = (
        f"{plan.location}/{ts}" if columns else layout.unpartitioned_rewrite(plan.location, ts)
    )
    # the unpartitioned backup is the table's own location: the old data, not moved
    plan.backup_location = f"{plan.database_location}/{plan.backup}" if columns else plan.location
    plan.scan_view = f"__purge_scan_{database}__{table}"
    plan.candidate_view = f"__purge_candidates_{database}__{table}"
    return plan


def delta_table_plan(spark: Any, meta: Any, ids: IdSource, planner: Any = None) -> TablePlan:
    """A Delta Lake table's plan (delta.py), or with `planner` iceberg.table_plan an Iceberg
    table's, its identifier resolved as any table's."""
    plan, schema, descriptor = (planner or delta.table_plan)(spark, meta)
    if descriptor is None and meta.properties().get(DESCRIPTOR).isDefined():
        descriptor = str(meta.properties().apply(DESCRIPTOR))  # set in the metastore by hand
    _identify(plan, schema, str(descriptor), ids)
    return plan


def _identify(plan: TablePlan, schema: Any, descriptor: str, ids: IdSource) -> None:
    """The plan's identifier, or the error that refuses the table (a plan refused already keeps
    its error)."""
    if plan.error is not None:
        return
    try:
        plan.identifier = resolve_identifier(plan, schema, descriptor, ids)
    except ConfigError as exc:
        plan.error = str(exc.msg)


def _write_properties(meta: Any, storage: str | None) -> dict[str, str]:
    """The table properties that decide how its files are written (`parquet.compression`,
    `orc.compress`, ...): its staging table carries them, so that the rewrite writes as the
    table's own writers do (`create table ... like` does not copy them)."""
    if storage is None:
        return {}
    found = {}
    for key in scala_list(meta.properties().keys()):
        if str(key).lower().startswith(f"{storage}."):
            found[str(key)] = str(meta.properties().apply(key))
    return found


def resolve_identifier(plan: TablePlan, schema: Any, descriptor: str, ids: IdSource) -> Identifier:
    """The descriptor's identifier field, resolved in the table's schema and comparable with the ids."""
    name = plan.name
    try:
        parsed = json.loads(descriptor)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise ConfigError(
            f"Table {name}: its dataset.descriptor is not valid JSON: {json.dumps(descriptor)}. Expected for"
            f" example {EXAMPLE_DESCRIPTOR}; fix it with `dbt run-operation onboard --args '{{table: {name},"
            " identifier: <column>}'`. The table was left as it was."
        )
    spec = parsed.get("complianceSpec")
    field = spec.get("identifierField") if isinstance(spec, dict) else None
    if not isinstance(field, str) or not field.strip():
        raise ConfigError(
            f"Table {name}: its dataset.descriptor {descriptor} has no complianceSpec.identifierField."
            f" Expected for example {EXAMPLE_DESCRIPTOR}. The table was left as it was."
        )
    field = field.strip()
    resolved = tables.field_in_schema(schema, field)
    if resolved is None:
        raise ConfigError(
            f"Table {name}: the identifier {json.dumps(field)} of its dataset.descriptor is not a column or"
            f" struct field (columns: {', '.join(f.name for f in schema.fields)})"
            f"{did_you_mean(field, tables.field_paths(schema))}. Fix the descriptor with"
            " `dbt run-operation onboard`. The table was left as it was."
        )
    if not types_comparable(resolved["type"], ids.type):
        raise ConfigError(
            f"Table {name}: the identifier {field} is {resolved['type']} but the id column {ids.name}.{ids.column}"
            f" is {ids.type}; they cannot be compared safely. Point the descriptor at a {ids.type} field or use"
            f" an id table of {resolved['type']} ids. The table was left as it was."
        )
    return Identifier(field, list(resolved["path"]), resolved["type"])


def _empty_selection(config: PurgeConfig, databases: list[str]) -> None:
    white = ", ".join(p.text for p in config.whitelist)
    black = ", ".join(p.text for p in config.blacklist)
    message = (
        f"purge: purge_whitelist {json.dumps(white)}"
        + (f" minus purge_blacklist {json.dumps(black)}" if black else "")
        + " matches no onboarded table (a table with a dataset.descriptor), so nothing would be purged."
        f" The databases in the catalog are: {', '.join(sorted(databases)) or '(none)'}. Fix the patterns"
        " (db, db.table, db*, db.table*) or onboard the tables (`dbt run-operation onboard`); set"
        " purge_allow_empty: true if an empty run is expected."
    )
    if not config.allow_empty:
        raise ConfigError(message)
    console.warn(message + " (purge_allow_empty is set: a warning only)")
