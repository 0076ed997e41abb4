"""The units a purge works on: a table's partitions (or the unpartitioned table itself), and the
rows the node writes for each (one per table and partition and run; results.py has the columns)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog.partitions import spec_path
from python_hooks.purge.plan import DEFAULT_PARTITION, INTEGRAL, PartitionRewrite, PurgeConfig, TablePlan


def partition_of(table: TablePlan, values: list[list[str]], location: str) -> PartitionRewrite:
    """A partition ([[column, unescaped value]]) with the directory its rewrite goes to."""
    pairs = [(str(k), str(v)) for k, v in values]
    return PartitionRewrite(pairs, location, new_location=f"{table.staging_location}/{spec_path(pairs)}")


def whole_table(table: TablePlan) -> PartitionRewrite:
    """An unpartitioned table as the one unit of work."""
    return PartitionRewrite([], table.location, new_location=table.staging_location)


def scan_key(table: TablePlan, values: list[Any]) -> tuple[str, ...]:
    """A partition's values as the scan returns them (cast to string; NULL is Hive's default
    partition), normalised by the partition column's type so that `01` and `1` of an integer
    column meet."""
    return tuple(
        _normal(DEFAULT_PARTITION if v is None else str(v), kind)
        for v, kind in zip(values, table.partition_types, strict=False)
    )


def listing_key(table: TablePlan, part: PartitionRewrite) -> tuple[str, ...]:
    """A listed partition's values, normalised as `scan_key`."""
    return tuple(_normal(v, kind) for (_, v), kind in zip(part.values, table.partition_types, strict=False))


def _normal(value: str, kind: str) -> str:
    text = value.strip()
    if kind in INTEGRAL and text.lstrip("-").isdigit():
        return str(int(text))
    return value


def now_text() -> str:
    """A UTC timestamp as the result rows carry it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


def result_row(
    config: PurgeConfig, table: TablePlan, part: PartitionRewrite | None, state: str, **fields: Any
) -> dict[str, Any]:
    """A result row with every column; `fields` fill in the rest (rows_*, reason, locations...)."""
    spec = part.path if part is not None and part.path else None
    row = {
        "purge_log_id": hashlib.md5(
            f"{config.invocation_id}|{table.database}|{table.table}|{spec or ''}".encode()
        ).hexdigest(),
        "invocation_id": config.invocation_id,
        "purge_ts": config.run_ts,
        "database_name": table.database,
        "table_name": table.table,
        "partition_spec": spec,
        "identifier_field": table.identifier.field if table.identifier else None,
        "state": state,
        "reason": None,
        "old_location": part.location if part is not None else None,
        "new_location": None,
        "backup_table": None,
        "rows_before": part.rows_before if part is not None else None,
        "rows_after": None,
        "rows_purged": part.rows_purged if part is not None else None,
        "dry_run": config.dry_run,
        "started_at": now_text(),
        "ended_at": None,
    }
    row.update(fields)
    row["ended_at"] = row["ended_at"] or now_text()
    return row
