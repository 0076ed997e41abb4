"""Which partitions the purge, retention and compaction nodes of a run read and wrote.

Each capability logs its work in a table that carries dbt's `invocation_id` (`purge_log`,
`retention_log`, `compaction_watermarks`).  For a run, the rows of that invocation are read
and turned into `db.table/k=v` strings: the partition written (the table's partition, or the
target) and the partitions read (a backup, a source or input partition), so that a partition
can be traced back to the partitions it came from.  A log that does not exist (its capability
is not installed or has not run) is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from python_hooks import audit_tables

LOGS = {"purge": "purge_log", "retention": "retention_log", "compaction": "compaction_watermarks"}
TABLE_COLUMNS = ("table_name", "table", "target_table", "dataset", "relation")
DATABASE_COLUMNS = ("database", "database_name", "db", "schema")
WRITTEN_COLUMNS = (
    "partition",
    "partition_spec",
    "partition_path",
    "target_partition",
    "output_partition",
    "partition_written",
)
READ_COLUMNS = (
    "source_partition",
    "source_partitions",
    "input_partition",
    "input_partitions",
    "partitions_read",
    "backup_location",
    "source_location",
)


def _capability(node: Mapping[str, Any]) -> str | None:
    tags = set((node.get("tags") or []) + ((node.get("config") or {}).get("tags") or []))
    for capability in LOGS:
        if capability in tags or node.get("name") == capability:
            return capability
    return None


def _first(row: Mapping[str, Any], names: Sequence[str]) -> Any:
    for name in names:
        if row.get(name) not in (None, ""):
            return row[name]
    return None


def _strings(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)]


def describe(row: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(read, written) partition strings of one log row."""
    table = _first(row, TABLE_COLUMNS)
    database = _first(row, DATABASE_COLUMNS)
    qualified = f"{database}.{table}" if database and table and "." not in str(table) else table
    written = [f"{qualified}/{p}" if qualified else p for p in _strings(_first(row, WRITTEN_COLUMNS))]
    read = _strings(_first(row, READ_COLUMNS))
    return read, written


def partitions_by_node(
    spark: SparkSession,
    manifest: Mapping[str, Any],
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    default_schema: str,
) -> dict[str, tuple[list[str], list[str]]]:
    nodes = manifest.get("nodes", {})
    by_capability: dict[str, list[str]] = {}
    for result in results:
        unique_id = result.get("unique_id") or ""
        node = nodes.get(unique_id, {})
        capability = _capability(node) if node.get("resource_type") == "model" else None
        if capability and node.get("name") != LOGS[capability]:
            by_capability.setdefault(capability, []).append(unique_id)
    found: dict[str, tuple[list[str], list[str]]] = {}
    for capability, unique_ids in by_capability.items():
        log = LOGS[capability]
        relation = next(
            (
                f"{n['schema']}.{n.get('alias') or log}"
                for n in nodes.values()
                if n.get("resource_type") == "model" and n.get("name") == log
            ),
            f"{default_schema}.{log}",
        )
        if not audit_tables.table_exists(spark, relation):
            continue
        frame = spark.table(relation)
        if "invocation_id" not in frame.columns:
            continue
        rows = [
            r.asDict(recursive=True) for r in frame.where(frame["invocation_id"] == invocation_id).collect()
        ]
        read: list[str] = []
        written: list[str] = []
        for row in rows:
            r, w = describe(row)
            read.extend(r)
            written.extend(w)
        for unique_id in unique_ids:
            # one writer per log: the capability's main node carries the partitions
            main = nodes[unique_id].get("name") == capability or len(unique_ids) == 1
            if main:
                found[unique_id] = (sorted(set(read)), sorted(set(written)))
    return found
