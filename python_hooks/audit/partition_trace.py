"""Which partitions the purge, retention and compaction nodes of a run read and wrote.

Each capability logs its work in a table that carries dbt's `invocation_id`:
- `purge_log` (model): `database_name`, `table_name`, `partition_spec`, `old_location`,
  `new_location` — the purge read the partition at its old location and wrote it at the new one;
- `retention_log` (model): `database_name`, `table_name`, `partition_spec`, `location` — what a
  retention pass deleted (written);
- `compaction_watermarks` (a table beside the compaction models): `dataset`, `partition` — the
  partitions a compaction model published (written).
For a run, that invocation's rows become `db.table/k=v` strings (with `@ location` where the log
has one), so a partition can be traced back to the partitions it came from.  A log that does not
exist (its capability is not installed or has not run yet) is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit import audit_tables

Row = Mapping[str, Any]


def _qualified(row: Row) -> str:
    database, table = row.get("database_name"), row.get("table_name")
    return f"{database}.{table}" if database else str(table or "")


def _partition(row: Row, location_column: str | None = None) -> str | None:
    name = _qualified(row)
    spec = row.get("partition_spec")
    text = f"{name}/{spec}" if spec else name
    location = row.get(location_column) if location_column else None
    if location:
        text = f"{text} @ {location}"
    return text or None


def purge_partitions(rows: Sequence[Row]) -> tuple[list[str], list[str]]:
    read = [_partition(r, "old_location") for r in rows if r.get("old_location")]
    written = [_partition(r, "new_location") for r in rows if r.get("new_location")]
    return sorted({p for p in read if p}), sorted({p for p in written if p})


def retention_partitions(rows: Sequence[Row]) -> tuple[list[str], list[str]]:
    written = [_partition(r, "location") for r in rows if r.get("succeeded") is not False]
    return [], sorted({p for p in written if p})


def compaction_partitions(rows: Sequence[Row]) -> tuple[list[str], list[str]]:
    written = [f"{r.get('dataset')}/{r.get('partition')}" for r in rows if r.get("partition")]
    return [], sorted(set(written))


def _log_rows(spark: SparkSession, relation: str, invocation_id: str) -> list[dict[str, Any]] | None:
    if not audit_tables.relation_exists(spark, relation):
        return None
    frame = spark.table(relation)
    if "invocation_id" not in frame.columns:
        return None
    return [r.asDict(recursive=True) for r in frame.where(frame["invocation_id"] == invocation_id).collect()]


def _model(nodes: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    return next(
        (n for n in nodes.values() if n.get("resource_type") == "model" and n.get("name") == name), None
    )


def _dataset_names(node: Mapping[str, Any]) -> set[str]:
    """The names a compaction model's watermarks use: its `meta.compaction.dataset`, else its name."""
    names = {str(node.get("name")), str(node.get("alias") or node.get("name"))}
    for meta in (node.get("meta") or {}, (node.get("config") or {}).get("meta") or {}):
        compaction = meta.get("compaction")
        if isinstance(compaction, dict) and compaction.get("dataset"):
            names.add(str(compaction["dataset"]))
    return names


def partitions_by_node(
    spark: SparkSession,
    manifest: Mapping[str, Any],
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    default_schema: str,
) -> dict[str, tuple[list[str], list[str]]]:
    """unique_id -> (partitions read, partitions written) for this invocation's lifecycle nodes."""
    nodes = manifest.get("nodes", {})
    ran = {str(r.get("unique_id")) for r in results if r.get("unique_id")}
    found: dict[str, tuple[list[str], list[str]]] = {}
    for node_name, log_name, describe in (
        ("purge", "purge_log", purge_partitions),
        ("retention", "retention_log", retention_partitions),
    ):
        node, log = _model(nodes, node_name), _model(nodes, log_name)
        if node is None or node.get("unique_id") not in ran:
            continue
        relation = f"{(log or node).get('schema') or default_schema}.{(log or {}).get('alias') or log_name}"
        rows = _log_rows(spark, relation, invocation_id)
        if rows:
            found[str(node["unique_id"])] = describe(rows)
    compaction = [
        n
        for n in nodes.values()
        if n.get("resource_type") == "model"
        and n.get("unique_id") in ran
        and "compaction" in ((n.get("tags") or []) + ((n.get("config") or {}).get("tags") or []))
    ]
    rows_by_schema: dict[str, list[dict[str, Any]] | None] = {}
    for node in compaction:
        schema = str(node.get("schema") or default_schema)
        if schema not in rows_by_schema:
            rows_by_schema[schema] = _log_rows(spark, f"{schema}.compaction_watermarks", invocation_id)
        mine = [r for r in rows_by_schema[schema] or [] if r.get("dataset") in _dataset_names(node)]
        if mine:
            found[str(node["unique_id"])] = compaction_partitions(mine)
    return found
