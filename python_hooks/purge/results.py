"""The purge's records: its result rows (the node's relation), purge_log and the stale locations.

One row per table and partition per run; the columns are defined here only (the yml of
models/purge documents the same ones: tests/python_hooks/test_column_contracts.py).  The node's
relation is a small `using json` table replaced as a whole (catalog.json_table); purge_log and
stale_data_records are appended by the purge node itself (catalog.log_tables), so that what it
committed is recorded even when dbt never reaches the models after it.  Never the ids.

`record` writes the three at the end of the node, at once, then marks the journal's entries
logged; `summarize` counts the rows for the node's status line.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog import console, json_table, log_tables, metastore
from python_hooks.catalog.journal import Intent, Journal
from python_hooks.catalog.work import Pool
from python_hooks.errors import LakehouseError, first_line
from python_hooks.purge.plan import ScannedPlan

RESULT_COLUMNS: list[tuple[str, str]] = [
    ("purge_log_id", "string"),
    ("invocation_id", "string"),
    ("purge_ts", "bigint"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("partition_spec", "string"),
    ("identifier_field", "string"),
    ("state", "string"),
    ("reason", "string"),
    ("old_location", "string"),
    ("new_location", "string"),
    ("backup_table", "string"),
    ("rows_before", "bigint"),
    ("rows_after", "bigint"),
    ("rows_purged", "bigint"),
    ("dry_run", "boolean"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
]
LOG_TABLE = "purge_log"
STALE_TABLE = "stale_data_records"
STALE_COLUMNS: list[tuple[str, str]] = [
    ("recorded_at", "timestamp"),
    ("invocation_id", "string"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("partition_spec", "string"),
    ("location", "string"),
    ("reason", "string"),
]
_TIMESTAMPS = {name for name, kind in RESULT_COLUMNS if kind == "timestamp"}


def _instant(value: Any) -> Any:
    """A result row's UTC timestamp text as an aware datetime (what the parquet append writes)."""
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
    return value


def replace_results(
    spark: Any, database: str, table: str, rows: list[dict[str, Any]], meta: Any = None
) -> None:
    """Make the purge node's relation `database.table` hold exactly `rows` (`meta`: its
    CatalogTable when known, `log_tables.catalog_tables`)."""
    json_table.replace_rows(spark, database, table, [list(c) for c in RESULT_COLUMNS], rows, meta)


def append_log(
    spark: Any, schema: str, rows: list[dict[str, Any]], deduplicate: bool = False, meta: Any = None
) -> int:
    """Append `rows` to `<schema>.purge_log` (made when missing); with `deduplicate`, only those
    whose purge_log_id it does not hold yet.  Returns how many were appended.  `meta`: the
    table's CatalogTable when known (`log_tables.catalog_tables`)."""
    if deduplicate:
        held = log_tables.existing(
            spark, schema, LOG_TABLE, "purge_log_id", [r["purge_log_id"] for r in rows]
        )
        rows = [r for r in rows if r["purge_log_id"] not in held]
    typed = [{k: (_instant(v) if k in _TIMESTAMPS else v) for k, v in row.items()} for row in rows]
    log_tables.append(spark, schema, LOG_TABLE, RESULT_COLUMNS, typed, meta)
    return len(rows)


def record_stale(
    spark: Any,
    schema: str,
    invocation_id: str,
    rows: list[dict[str, Any]],
    deduplicate: bool = False,
    meta: Any = None,
) -> int:
    """Record old locations for retention (`<schema>.stale_data_records`): rows of
    {database_name, table_name, partition_spec, location, reason}; with `deduplicate`, only
    locations not recorded yet.  `meta`: the table's CatalogTable when known."""
    if deduplicate:
        held = log_tables.existing(spark, schema, STALE_TABLE, "location", [r["location"] for r in rows])
        rows = [r for r in rows if r["location"] not in held]
    if not rows:
        return 0
    now = datetime.now(timezone.utc)
    log_tables.append(
        spark,
        schema,
        STALE_TABLE,
        STALE_COLUMNS,
        [{"recorded_at": now, "invocation_id": invocation_id, **row} for row in rows],
        meta,
    )
    return len(rows)


def record(
    spark: Any,
    plan: ScannedPlan,
    rows: list[dict[str, Any]],
    stale: list[dict[str, Any]],
    relation: list[str],
    recorded: list[Intent],
) -> None:
    """The node's relation, purge_log (this run's rows), the stale locations, and the journal's
    entries whose outcome was recorded marked logged (any other is completed by the next run)."""
    config = plan.config
    console.debug("purge step results, purge_log, stale records (at once)")
    # the three tables' CatalogTables in one metastore call (per database), not two per write
    names = [
        (relation[0], relation[1]),
        (config.log_schema, LOG_TABLE),
        (config.target_schema, STALE_TABLE),
    ]
    known = metastore.tables_by_names(spark, names)
    node_meta, log_meta, stale_meta = (known.get((d.lower(), t.lower())) for d, t in names)
    with Pool(spark, 3, "lakehouse-record") as pool:
        written = [
            pool.submit(replace_results, spark, relation[0], relation[1], plan.recovered + rows, node_meta),
            pool.submit(append_log, spark, config.log_schema, rows, False, log_meta),
        ]
        stale_written = pool.submit(
            record_stale, spark, config.target_schema, config.invocation_id, stale, False, stale_meta
        )
    for future in written:
        future.result()
    try:
        stale_written.result()
    except Exception as exc:  # noqa: BLE001 - the purge is done; the failure is the node's
        raise LakehouseError(
            f"Could not record the old locations of {', '.join(sorted({r['database_name'] + '.' + r['table_name'] for r in stale}))}"
            f" in {config.target_schema}.stale_data_records: {first_line(exc)}. Their partitions were purged, but retention"
            " will not delete their old directories (the old_location of their COMMITTED rows in purge_log) until they"
            " are recorded: fix the cause, then record them with `dbt run-operation record_stale_location`."
        ) from exc
    console.debug(f"purge step journal logged ({len(recorded)} table(s))")
    journal = Journal(spark)
    for intent in recorded:
        journal.mark_logged(intent)
    console.debug("purge step recorded")


def summarize(plan: ScannedPlan, rows: list[dict[str, Any]]) -> dict[str, Any]:
    states = [r["state"] for r in rows]
    return {
        "tables": len({(r["database_name"], r["table_name"]) for r in rows}),
        "committed": states.count("COMMITTED"),
        "skipped": states.count("SKIPPED"),
        "failed": states.count("FAILED"),
        "dry_run": states.count("DRY_RUN"),
        "rows": sum(int(r["rows_purged"] or 0) for r in rows if r["state"] in ("COMMITTED", "DRY_RUN")),
        "recovered": len(plan.recovered),
    }
