"""The purge's records: its result rows (the node's relation), purge_log and the stale locations.

One row per table and partition per run; the columns are defined here only (the yml of
models/purge documents the same ones: tests/python_hooks/test_column_contracts.py).  The node's
relation is a small `using json` table replaced as a whole (catalog.json_table); purge_log and
stale_data_records are appended by the purge node itself (catalog.log_tables), so that what it
committed is recorded even when dbt never reaches the models after it.  Never the ids.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog import json_table, log_tables

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
