"""What no on-run-end could load: refused runs (run lock records) and commands without hooks (run_results.json)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit import values
from python_hooks.audit.rows import invocation_row


def refusal_dir(spark: SparkSession) -> Path | None:
    from dbt.adapters.lakehouse import run_lock

    warehouse = spark.conf.get("spark.sql.warehouse.dir", None)
    directory = run_lock.local_dir(warehouse) if warehouse else None
    return Path(directory) / run_lock.REFUSALS_DIR if directory else None


def previous_invocation(run_results: Mapping[str, Any], target_schema: str) -> dict[str, Any]:
    """A dbt_invocations row from a run_results.json (a command that had no on-run-end)."""
    meta = run_results.get("metadata") or {}
    args = dict(run_results.get("args") or {})
    results = list(run_results.get("results") or [])
    elapsed = float(run_results.get("elapsed_time") or 0.0)
    ended = values.ts(meta.get("generated_at"))
    started = None
    if ended is not None:
        started = ended - timedelta(seconds=elapsed)
    return invocation_row(
        meta["invocation_id"],
        args,
        results,
        target_name=args.get("target"),
        target_schema=target_schema,
        dbt_version=meta.get("dbt_version"),
        project_name=None,
        started_at=started,
        ended_at=ended,
        loaded_from="run_results.json",
    )


DBT_COMMANDS = (
    "build run test seed snapshot compile docs run-operation retry show source clone list ls parse debug deps clean"
).split()


def refusal_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A dbt_invocations row (status `refused`) from a run lock refusal record."""
    command = str(record.get("command") or "")
    words = command.split()
    which = next((w for w in words[1:] if w in DBT_COMMANDS), None)
    args = {"which": which, "argv": words}
    return invocation_row(
        str(record.get("invocation_id") or f"refused-{record.get('pid')}-{record.get('refused_at')}"),
        args,
        [],
        target_name=None,
        target_schema=None,
        dbt_version=record.get("dbt_version"),
        project_name=None,
        started_at=record.get("refused_at"),
        ended_at=record.get("refused_at"),
        loaded_from="refusal record",
        status="refused",
        message=f"refused: {record.get('holder')} held the warehouse {record.get('warehouse')}",
        run_by=record.get("user"),
        host=record.get("host"),
    )
