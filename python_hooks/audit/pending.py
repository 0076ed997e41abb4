"""What no on-run-end could load: refused runs (run lock records), commands without hooks
(run_results.json), and the previous command's hook results, which on-run-start finds and holds
for this command's on-run-end to write with its own node results (one file, not two).

Holding is crash-safe: the held results are also saved as `target/_audit_held_hook_results.json`
(a local file, as run_results.json is).  When this command's on-run-end writes them, it removes
the file.  When it does not (the command was killed, or its load failed), the next on-run-start
finds them either still in the previous command's run_results.json (a killed command writes
none: it holds them again) or only in the file, and writes them then, skipping any already
loaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit import values
from python_hooks.audit.manifest import write_target_json
from python_hooks.audit.rows import invocation_row


def refusal_dir(spark: SparkSession) -> Path | None:
    from dbt.adapters.lakehouse import run_lock, storage

    warehouse = spark.conf.get("spark.sql.warehouse.dir", None)
    url = spark.conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", None)
    metastore = storage.metastore_dir({"spark.hadoop.javax.jdo.option.ConnectionURL": url or ""})
    directory = storage.lock_directory(warehouse, metastore) if warehouse else None
    return Path(directory) / run_lock.REFUSALS_DIR if directory else None


def refusal_records(spark: SparkSession) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    """Every refusal record left for the audit, each with what removes it once loaded: the local
    lock's (`refusal_dir`), and, for a warehouse on HDFS or an object store, the lease's, which
    `run_lock` writes through Hadoop to `<warehouse>/.dbt-refusals/`."""
    from dbt.adapters.lakehouse import run_lock, storage

    found: list[tuple[dict[str, Any], Callable[[], Any]]] = []
    directory = refusal_dir(spark)
    if directory and directory.is_dir():
        for record_path in sorted(directory.glob("*.json")):
            try:
                found.append(
                    (json.loads(record_path.read_text()), partial(record_path.unlink, missing_ok=True))
                )
            except ValueError:
                continue
    warehouse = spark.conf.get("spark.sql.warehouse.dir", None)
    if warehouse and storage.scheme(warehouse) != "file":
        jvm = spark._jvm
        remote = jvm.org.apache.hadoop.fs.Path(f"{warehouse.rstrip('/')}/{run_lock.REFUSALS_DIR}")
        fs = remote.getFileSystem(spark._jsc.hadoopConfiguration())
        if fs.exists(remote):
            for status in sorted(fs.listStatus(remote), key=lambda s: str(s.getPath().getName())):
                if not str(status.getPath().getName()).endswith(".json"):
                    continue
                stream = fs.open(status.getPath())
                try:
                    text = str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
                finally:
                    stream.close()
                try:
                    found.append((json.loads(text), partial(fs.delete, status.getPath(), False)))
                except ValueError:
                    continue
    return found


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


HELD_FILE = "_audit_held_hook_results.json"


def hold(target: Path, held_by: str, invocation_id: str, results: list[dict[str, Any]]) -> None:
    """Hold `results` (run_results.json entries of the command `invocation_id`) for the on-run-end
    of the command `held_by`, in the target directory's held file (nothing is kept in this
    process between the hooks)."""
    write_target_json(
        target / HELD_FILE, {"held_by": held_by, "invocation_id": invocation_id, "results": results}
    )


def take(target: Path, held_by: str) -> dict[str, Any] | None:
    """What on-run-start held for the command `held_by` ({invocation_id, results}), if anything."""
    record = leftover(target)
    return record if record is not None and record.get("held_by") == held_by else None


def release(target: Path, held_by: str) -> None:
    """The held results are written: forget the held file (when it is still this command's)."""
    left = leftover(target)
    if left is not None and left.get("held_by") == held_by:
        (target / HELD_FILE).unlink(missing_ok=True)


def leftover(target: Path) -> dict[str, Any] | None:
    """The held file a command left (its on-run-end did not write what it held), or None."""
    try:
        record = json.loads((target / HELD_FILE).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and isinstance(record.get("results"), list) and record.get("invocation_id"):
        return record
    return None


def discard_leftover(target: Path) -> None:
    (target / HELD_FILE).unlink(missing_ok=True)


RUNNING_FILE = "_audit_running.json"


def mark_running(target: Path, invocation_id: str, args: Mapping[str, Any], started_at: str) -> None:
    """on-run-start: this command is running (removed by its on-run-end).  A command that finds
    another's mark was killed before its on-run-end: it is recorded `interrupted`."""
    write_target_json(
        target / RUNNING_FILE, {"invocation_id": invocation_id, "args": dict(args), "started_at": started_at}
    )


def running(target: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((target / RUNNING_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("invocation_id") else None


def clear_running(target: Path, invocation_id: str) -> None:
    record = running(target)
    if record is not None and record["invocation_id"] == invocation_id:
        (target / RUNNING_FILE).unlink(missing_ok=True)


def interrupted_row(record: Mapping[str, Any], target_schema: str) -> dict[str, Any]:
    """A dbt_invocations row (status `interrupted`) for a command that left only its running mark."""
    return invocation_row(
        str(record["invocation_id"]),
        dict(record.get("args") or {}),
        [],
        target_name=(record.get("args") or {}).get("target"),
        target_schema=target_schema,
        dbt_version=None,
        project_name=None,
        started_at=record.get("started_at"),
        ended_at=None,
        loaded_from="running mark",
        status="interrupted",
        message="killed before its on-run-end (SIGKILL, a lost host): no run_results.json; what its purge"
        " swapped is in purge_log from the journal",
    )
