"""What no on-run-end could load: refused runs (run lock records), commands without hooks
(run_results.json), and the previous command's hook results, which on-run-start finds and holds
for this command's on-run-end to write with its own node results (one file, not two).

What ran against which warehouse is known from the run records (`target/_audit_runs/`, below):
run_results.json and the target directory name no warehouse, and two targets of one project
directory (dev and prod, two warehouses) share them.  A command is adopted, or recorded
`interrupted`, only by a command of the warehouse and schema its record names.

Holding is crash-safe: the held results are also saved as
`target/_audit_held_hook_results.<warehouse key>.json` (a local file, as run_results.json is).  When this command's on-run-end writes them, it removes
the file.  When it does not (the command was killed, or its load failed), the next on-run-start
finds them either still in the previous command's run_results.json (a killed command writes
none: it holds them again) or only in the file, and writes them then, skipping any already
loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from python_hooks.audit import values
from python_hooks.audit.manifest import write_target_json
from python_hooks.audit.rows import invocation_row


def refusal_records(
    spark: SparkSession, directories: Sequence[str]
) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    """Every refusal record left for the audit in `directories`, each with what removes it once
    loaded.  The adapter's run lock, which writes the records, names the directories
    (`run_lock.refusal_dirs`): the local lock's, read here, and, for a warehouse on HDFS or an
    object store, the lease's (`<warehouse>/.dbt-refusals/`), read through Hadoop."""
    found: list[tuple[dict[str, Any], Callable[[], Any]]] = []
    for directory in directories:
        parsed = urlparse(directory)
        if parsed.scheme in ("", "file"):
            found += _local_refusals(Path(parsed.path if parsed.scheme else directory))
        else:
            found += _remote_refusals(spark, directory)
    return found


def _local_refusals(directory: Path) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    found: list[tuple[dict[str, Any], Callable[[], Any]]] = []
    if directory.is_dir():
        for record_path in sorted(directory.glob("*.json")):
            try:
                found.append(
                    (json.loads(record_path.read_text()), partial(record_path.unlink, missing_ok=True))
                )
            except ValueError:
                continue
    return found


def _remote_refusals(spark: SparkSession, directory: str) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    found: list[tuple[dict[str, Any], Callable[[], Any]]] = []
    jvm = spark._jvm
    remote = jvm.org.apache.hadoop.fs.Path(directory)
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


def previous_invocation(
    run_results: Mapping[str, Any], target_schema: str, record: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A dbt_invocations row from a run_results.json (a command that had no on-run-end, or whose
    load failed), with the status its run record gives: what its on-run-end decided (`cancelled`
    after Ctrl-C); `cancelled` when its on-run-start ran and its on-run-end never did (only dbt's
    own interrupt, Ctrl-C, writes run_results.json then); else from its results."""
    meta = run_results.get("metadata") or {}
    args = dict(run_results.get("args") or {})
    results = list(run_results.get("results") or [])
    elapsed = float(run_results.get("elapsed_time") or 0.0)
    ended = values.ts(meta.get("generated_at"))
    started = None
    if ended is not None:
        started = ended - timedelta(seconds=elapsed)
    status = message = None
    record = record or {}
    if record.get("phase") == "running":
        status = "cancelled"
        message = "stopped by an interrupt (Ctrl-C) before its on-run-end"
    elif record.get("phase") == "ended" and record.get("status"):
        status = str(record["status"])
        message = "cancelled (SIGINT/SIGTERM): stopped at a safe point" if status == "cancelled" else None
    return invocation_row(
        meta["invocation_id"],
        args,
        results,
        target_name=record.get("target_name") or args.get("target"),
        target_schema=target_schema,
        dbt_version=meta.get("dbt_version"),
        project_name=None,
        started_at=started,
        ended_at=ended,
        loaded_from="run_results.json",
        status=status,
        message=message,
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


HELD_FILE = "_audit_held_hook_results"


def held_path(target: Path, key: str) -> Path:
    """The held file of one warehouse and schema (`scope_key`): two warehouses that share a
    target directory never take each other's held results."""
    return target / f"{HELD_FILE}.{key}.json"


def hold(target: Path, key: str, held_by: str, invocation_id: str, results: list[dict[str, Any]]) -> None:
    """Hold `results` (run_results.json entries of the command `invocation_id`) for the on-run-end
    of the command `held_by`, in the target directory's held file of this warehouse (nothing is
    kept in this process between the hooks)."""
    write_target_json(
        held_path(target, key), {"held_by": held_by, "invocation_id": invocation_id, "results": results}
    )


def take(target: Path, key: str, held_by: str) -> dict[str, Any] | None:
    """What on-run-start held for the command `held_by` ({invocation_id, results}), if anything."""
    record = leftover(target, key)
    return record if record is not None and record.get("held_by") == held_by else None


def release(target: Path, key: str, held_by: str) -> None:
    """The held results are written: forget the held file (when it is still this command's)."""
    left = leftover(target, key)
    if left is not None and left.get("held_by") == held_by:
        held_path(target, key).unlink(missing_ok=True)


def leftover(target: Path, key: str) -> dict[str, Any] | None:
    """The held file a command left (its on-run-end did not write what it held), or None."""
    try:
        record = json.loads(held_path(target, key).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and isinstance(record.get("results"), list) and record.get("invocation_id"):
        return record
    return None


def discard_leftover(target: Path, key: str) -> None:
    held_path(target, key).unlink(missing_ok=True)


# ---- run records: which command ran against which warehouse ---------------------------------
#
# run_results.json and the target directory carry no warehouse: two targets (dev and prod, two
# warehouses) run from one project directory share them.  Every command that opens a connection
# leaves `target/_audit_runs/<invocation_id>.json`, naming its warehouse, metastore and target,
# and how far it got: `connected` (the adapter opened a session: every command that reaches the
# warehouse, with hooks or not), `running` (its on-run-start ran) and `ended` (its on-run-end
# ran, with the status it recorded).  The audit adopts a command's run_results.json, or records
# a command as interrupted, only when its record names this warehouse and schema.

RUNS_DIR = "_audit_runs"
PHASES = ("connected", "running", "ended")


def warehouse_of(spark: SparkSession) -> dict[str, str | None]:
    """This session's warehouse (`warehouse_identity` of its settings)."""
    conf = spark.conf
    return warehouse_identity({k: conf.get(k, None) for k in IDENTITY_SETTINGS})


IDENTITY_SETTINGS = (
    "spark.sql.warehouse.dir",
    "spark.hadoop.javax.jdo.option.ConnectionURL",
    "spark.hadoop.hive.metastore.uris",
    "spark.sql.catalogImplementation",
)


def warehouse_identity(settings: Mapping[str, Any]) -> dict[str, str | None]:
    """A warehouse as Spark settings name it (a session's, or a profile's before its session
    starts: the same result): the qualified `spark.sql.warehouse.dir` (a local path as
    `file:/absolute/path`, as Spark qualifies it) and the metastore (the embedded Derby
    database's absolute path, or the metastore URIs; None for Spark's in-memory catalog)."""
    warehouse = str(settings.get("spark.sql.warehouse.dir") or "") or None
    if warehouse:
        parsed = urlparse(warehouse)
        if not parsed.scheme or parsed.scheme == "file":
            warehouse = "file:" + os.path.normpath(os.path.abspath(parsed.path or warehouse))
        else:
            warehouse = warehouse.rstrip("/")
    uris = settings.get("spark.hadoop.hive.metastore.uris") or None
    url = str(settings.get("spark.hadoop.javax.jdo.option.ConnectionURL") or "")
    if uris:
        metastore: str | None = f"thrift {uris}"
    elif "databaseName=" in url:
        metastore = "derby " + os.path.abspath(url.split("databaseName=", 1)[1].split(";", 1)[0])
    elif (settings.get("spark.sql.catalogImplementation") or "hive") == "in-memory":
        metastore = None
    else:
        metastore = f"jdbc {url}" if url else None
    return {"warehouse": warehouse, "metastore": metastore}


def scope_key(warehouse: Mapping[str, Any], target_schema: str | None) -> str:
    """A short name for a warehouse and audit schema, for the files kept per warehouse."""
    text = json.dumps({**warehouse, "schema": target_schema}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _record_path(target: Path, invocation_id: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in invocation_id)
    return target / RUNS_DIR / f"{safe}.json"


def run_record(target: Path, invocation_id: str) -> dict[str, Any] | None:
    try:
        record = json.loads(_record_path(target, invocation_id).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("invocation_id") == invocation_id else None


def record_run(
    target: Path,
    invocation_id: str,
    warehouse: Mapping[str, Any],
    phase: str,
    **fields: Any,
) -> None:
    """Create or advance the run record of `invocation_id` (a phase never goes back; `fields`,
    e.g. target_name, target_schema, args, started_at, status, are kept once given)."""
    path = _record_path(target, invocation_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = run_record(target, invocation_id) or {"invocation_id": invocation_id, "phase": phase}
    record["warehouse"] = dict(warehouse)
    if PHASES.index(phase) >= PHASES.index(str(record.get("phase"))):
        record["phase"] = phase
    record.update({k: v for k, v in fields.items() if v is not None})
    write_target_json(path, record)


def belongs(record: Mapping[str, Any], warehouse: Mapping[str, Any], target_schema: str | None) -> bool:
    """Whether a run record is known to have run against this warehouse and audit schema."""
    return record.get("warehouse") == dict(warehouse) and record.get("target_schema") == target_schema


def runs_of(
    target: Path, warehouse: Mapping[str, Any], target_schema: str | None
) -> dict[str, dict[str, Any]]:
    """The run records of this warehouse and schema, by invocation id."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((target / RUNS_DIR).glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if (
            isinstance(record, dict)
            and record.get("invocation_id")
            and belongs(record, warehouse, target_schema)
        ):
            found[str(record["invocation_id"])] = record
    return found


def forget_run(target: Path, invocation_id: str) -> None:
    _record_path(target, invocation_id).unlink(missing_ok=True)


def mark_running(
    target: Path,
    invocation_id: str,
    args: Mapping[str, Any],
    started_at: str,
    warehouse: Mapping[str, Any],
    target_schema: str | None,
    target_name: str | None = None,
) -> None:
    """on-run-start: this command is running (its on-run-end ends the record).  A later command
    of the same warehouse that finds the record still running records it: `cancelled` when dbt's
    own interrupt wrote its run_results.json, `interrupted` (killed) when it left none."""
    record_run(
        target,
        invocation_id,
        warehouse,
        "running",
        args=dict(args),
        started_at=started_at,
        target_name=target_name or args.get("target"),
        target_schema=target_schema,
    )


def clear_running(target: Path, invocation_id: str, status: str | None = None) -> None:
    """The command reached its on-run-end (with the status it records): not interrupted."""
    record = run_record(target, invocation_id)
    if record is not None:
        record_run(target, invocation_id, record.get("warehouse") or {}, "ended", status=status)


def interrupted_row(record: Mapping[str, Any], target_schema: str) -> dict[str, Any]:
    """A dbt_invocations row (status `interrupted`) for a command that left only its run record."""
    return _record_row(
        record,
        target_schema,
        status="interrupted",
        message="killed before its on-run-end (SIGKILL, a lost host): no run_results.json; what its purge"
        " swapped is in purge_log from the journal",
    )


def unloaded_row(record: Mapping[str, Any], target_schema: str) -> dict[str, Any]:
    """A dbt_invocations row for a command that reached its on-run-end (the status it decided
    there) but could not load itself, and whose run_results.json another command replaced."""
    return _record_row(
        record,
        target_schema,
        status=str(record["status"]),
        message="its on-run-end could not load it and its run_results.json was replaced: its node results are"
        " not in the audit",
    )


def _record_row(record: Mapping[str, Any], target_schema: str, status: str, message: str) -> dict[str, Any]:
    return invocation_row(
        str(record["invocation_id"]),
        dict(record.get("args") or {}),
        [],
        target_name=record.get("target_name") or (record.get("args") or {}).get("target"),
        target_schema=target_schema,
        dbt_version=None,
        project_name=None,
        started_at=record.get("started_at"),
        ended_at=record.get("ended_at"),
        loaded_from="run record",
        status=status,
        message=message,
    )
