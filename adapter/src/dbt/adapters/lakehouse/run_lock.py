"""One dbt run per warehouse.

The embedded Derby metastore can only be booted by one JVM, and two runs that rewrite the same
partitions would corrupt each other's work.  Before the Spark session starts, the adapter takes an
exclusive ``flock`` on ``<warehouse>/.dbt-run.lock``.  The kernel releases the lock when the
holding process ends, however it ends, so a killed run never blocks the next one; the file's
contents (pid, host, command, start time) only serve the message a refused run prints.

The lock is held for the life of the process: one process is one Spark driver (`driver.Driver`
keeps what this module takes; this module keeps nothing).

With a shared metastore (the `cluster` target: `spark.hadoop.hive.metastore.uris` set) there is no
Derby to protect, but two drivers on different hosts may share the warehouse: there the lock is a
lease on the warehouse's own filesystem, taken once the session runs (`take_lease`,
`warehouse_lease.py`), with the same refusal message and record.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime, timezone
from typing import IO, Any
from urllib.parse import urlparse

from dbt.adapters.lakehouse import holders, storage

from python_hooks.errors import LakehouseError

LOCK_FILE_NAME = ".dbt-run.lock"
REFUSALS_DIR = ".dbt-refusals"


def local_dir(warehouse_dir: str) -> str | None:
    """The local directory of a warehouse URI, or None when it is not on the local disk."""
    parsed = urlparse(warehouse_dir)
    if parsed.scheme in ("", "file"):
        path = parsed.path if parsed.scheme == "file" else warehouse_dir
        return os.path.abspath(path)
    return None


def _describe_holder(handle: IO[str]) -> str:
    handle.seek(0)
    try:
        info = json.loads(handle.read() or "{}")
    except ValueError:
        info = {}
    return holders.describe(info) if info else "another process"


def _refusal_record(refusal: dict[str, Any]) -> dict[str, Any]:
    try:
        from dbt_common.invocation import get_invocation_id

        invocation_id: str | None = get_invocation_id()
    except Exception:
        invocation_id = None
    try:
        import getpass

        user = getpass.getuser()
    except Exception:
        user = os.environ.get("USER")
    try:
        from dbt.version import __version__ as dbt_version
    except Exception:
        dbt_version = None
    return {
        **refusal,
        "invocation_id": invocation_id,
        **holders.identity(),
        "user": user,
        "dbt_version": dbt_version,
    }


def refusal_dirs(warehouse: str | None, metastore_url: str | None) -> list[str]:
    """Where refused runs of a warehouse leave their records for the audit (a session's
    `spark.sql.warehouse.dir` and `spark.hadoop.javax.jdo.option.ConnectionURL`): the local lock's
    directory (`take`: the warehouse's, or the embedded metastore's beside it), and, for a
    warehouse on HDFS or an object store, the lease's (`take_lease`), read through Hadoop."""
    if not warehouse:
        return []
    found = []
    metastore = storage.metastore_dir({"spark.hadoop.javax.jdo.option.ConnectionURL": metastore_url or ""})
    directory = storage.lock_directory(warehouse, metastore)
    if directory:
        found.append(os.path.join(directory, REFUSALS_DIR))
    if storage.scheme(warehouse) != "file":
        found.append(f"{warehouse.rstrip('/')}/{REFUSALS_DIR}")
    return found


def _record_refusal(directory: str, refusal: dict[str, Any]) -> None:
    """Leave `<warehouse>/.dbt-refusals/<time>-<pid>.json` for the next run to load into the audit.

    The refused process cannot write to the warehouse's tables (another JVM holds the metastore),
    so it writes this small file instead; the audit's on-run-start hook loads it into
    dbt_invocations (status `refused`) and removes it.  Best effort: the refusal itself matters more.
    """
    record = _refusal_record(refusal)
    try:
        folder = os.path.join(directory, REFUSALS_DIR)
        os.makedirs(folder, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        final = os.path.join(folder, f"{stamp}-{os.getpid()}.json")
        with open(final + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(final + ".tmp", final)
    except OSError:
        pass


def lock_path(directory: str) -> str:
    """The run lock file of a local warehouse directory."""
    return os.path.join(directory, LOCK_FILE_NAME)


def take(directory: str) -> IO[str]:
    """Take the run lock of a local warehouse directory: the open lock file, whose flock lasts
    until it is closed (`give_back`) or the process ends.

    Raises LakehouseError at once (no waiting), naming the holder, when another process holds it,
    after leaving the refusal record the audit loads.  The caller keeps the handle (`Driver`).
    """
    os.makedirs(directory, exist_ok=True)
    handle = open(lock_path(directory), "a+", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _describe_holder(handle)
        handle.close()
        _record_refusal(directory, _refusal(directory, holder))
        raise LakehouseError(_refused(directory, holder)) from None
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(holders.record()))
    handle.flush()
    return handle


def give_back(handle: IO[str]) -> None:
    """Release a lock `take` returned."""
    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    handle.close()


def _refusal(warehouse: str, holder: str) -> dict[str, Any]:
    return {"warehouse": warehouse, "holder": holder, "refused_at": datetime.now(timezone.utc).isoformat()}


def _refused(warehouse: str, holder: str) -> str:
    return (
        f"Another dbt run holds the warehouse {warehouse} ({holder}). "
        "Only one run per warehouse is allowed: wait for it to finish and run again. "
        "Nothing was changed by this run."
    )


def uses_lease(params: dict[str, str]) -> bool:
    """True for a shared (thrift) metastore: lock with the warehouse lease, not a local flock."""
    return bool(str(params.get("spark.hadoop.hive.metastore.uris") or "").strip())


def take_lease(spark: Any, warehouse_dir: str, ttl: float | None = None) -> Any:
    """Take the warehouse's lease (see warehouse_lease.py); the caller keeps it (`Driver`).

    Raises LakehouseError at once, naming the holder, when a live run holds it, after leaving
    the refusal record the audit loads.
    """
    from dbt.adapters.lakehouse import warehouse_lease

    lease = warehouse_lease.Lease(spark, warehouse_dir, ttl)
    try:
        lease.acquire()
    except warehouse_lease.LeaseHeldError as held:
        refusal = _refusal(warehouse_dir, held.holder)
        directory = local_dir(warehouse_dir)
        if directory is not None:
            _record_refusal(directory, refusal)
        else:
            _record_refusal_remote(spark, warehouse_dir, refusal)
        raise LakehouseError(_refused(warehouse_dir, held.holder)) from None
    return lease


def check_lease(lease: Any, warehouse_dir: str) -> None:
    """Stop before the run's next step when its lease was lost: the heartbeat could not renew
    it in time and another run took the warehouse over, so this run must not work beside it."""
    if lease.lost:
        raise LakehouseError(
            f"This run lost its lease on the warehouse {warehouse_dir}: it was not renewed within "
            f"{lease.ttl:.0f}s and another run took the warehouse over. This run stopped before its "
            "next step; check the other run's purge_log and run again once it has finished."
        )


def _record_refusal_remote(spark: Any, warehouse_dir: str, refusal: dict[str, Any]) -> None:
    """The refusal record of a warehouse on HDFS or an object store, written through Hadoop."""
    try:
        record = _refusal_record(refusal)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        jvm = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(
            f"{warehouse_dir.rstrip('/')}/{REFUSALS_DIR}/{stamp}-{os.getpid()}.json"
        )
        stream = path.getFileSystem(spark._jsc.hadoopConfiguration()).create(path, False)
        try:
            stream.write(bytearray(json.dumps(record).encode()))
        finally:
            stream.close()
    except Exception:
        pass
