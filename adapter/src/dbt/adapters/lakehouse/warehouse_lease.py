"""One dbt run per warehouse across hosts: a lease file on the warehouse's own filesystem.

With a shared metastore (the `cluster` target) two drivers on different hosts can reach the same
warehouse, so a local ``flock`` proves nothing.  Both drivers can see the warehouse's filesystem
through the session's Hadoop FileSystem (local disk, HDFS, S3A), so the lock lives there:

* **take**: create ``<warehouse>/.dbt-run.lease`` only if it is absent, holding who runs what
  since when: ``FileSystem.create(path, overwrite=false)``, atomic on HDFS (the namenode decides);
  on local or shared-mount disk ``open(O_CREAT | O_EXCL)``, because Hadoop's local filesystem
  checks and then creates.  S3A in the Hadoop 3.3 that pyspark 3.5 ships also checks and then
  writes, so an ``s3a://`` warehouse puts its lease on HDFS or a shared mount instead
  (``DBT_LAKEHOUSE_LEASE_DIR``; docs/deploy.md);
* **hold**: a daemon thread renews the lease every ``ttl / 4`` seconds by touching its
  modification time (``setTimes``; rewritten in place where the store ignores setTimes) after
  checking that the file is still its own;
* **expire**: a lease not renewed for ``ttl`` seconds (``DBT_LAKEHOUSE_LEASE_SECONDS``, 60 by
  default) belongs to a dead holder: the next run renames it aside (rename is atomic, so of two
  runs taking over at once only one succeeds), checks that what it renamed is the stale lease it
  judged, and creates its own;
* **release**: the holder deletes its lease when the process exits.

Expiry compares the filesystem's modification time with this host's clock: hosts must agree on
the time to well within the ttl (NTP does).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.lakehouse import holders

LEASE_FILE_NAME = ".dbt-run.lease"
DEFAULT_TTL_SECONDS = 60.0

logger = AdapterLogger("lakehouse")


def ttl_seconds() -> float:
    return float(os.environ.get("DBT_LAKEHOUSE_LEASE_SECONDS") or DEFAULT_TTL_SECONDS)


def lease_dir() -> str | None:
    """Where the lease lives when not in the warehouse (``DBT_LAKEHOUSE_LEASE_DIR``): an S3
    warehouse on Hadoop < 3.4 has no atomic create-if-absent, so its lease goes to HDFS or
    another filesystem every driver sees (docs/deploy.md)."""
    return os.environ.get("DBT_LAKEHOUSE_LEASE_DIR") or None


class LeaseHeldError(Exception):
    """The lease is held by a live holder: `holder` describes it, `info` is its record."""

    def __init__(self, holder: str, info: dict[str, Any]) -> None:
        super().__init__(holder)
        self.holder = holder
        self.info = info


def _filesystem(spark: Any, uri: str) -> tuple[Any, Any]:
    """(FileSystem, qualified Path); on local disk the raw filesystem, so no .crc files appear."""
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    if fs.getClass().getName() == "org.apache.hadoop.fs.LocalFileSystem":
        fs = fs.getRaw()
    return fs, fs.makeQualified(path)


def _java_class(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    return str(java.getClass().getName()) if java is not None else type(exc).__name__


def describe(info: dict[str, Any], age_seconds: float | None = None) -> str:
    if not info:
        return "another process (its lease file is unreadable)"
    text = holders.describe(info)
    if age_seconds is not None:
        text += (
            f"; lease renewed {age_seconds:.0f}s ago, expires {info.get('ttl_seconds', '?')}s after renewal"
        )
    return text


class Lease:
    def __init__(self, spark: Any, warehouse: str, ttl: float | None = None) -> None:
        self.spark = spark
        self.ttl = float(ttl if ttl is not None else ttl_seconds())
        self.fs, root = _filesystem(spark, lease_dir() or warehouse)
        self.local = self.fs.getClass().getName() == "org.apache.hadoop.fs.RawLocalFileSystem"
        self.fs.mkdirs(root)
        self.warehouse = str(root.toString())
        self.path = spark._jvm.org.apache.hadoop.fs.Path(root, LEASE_FILE_NAME)
        self.id = uuid.uuid4().hex
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.info = {"lease_id": self.id, **holders.record(), "ttl_seconds": self.ttl}

    # ---- file primitives ------------------------------------------------------------------
    def _read(self, path: Any) -> dict[str, Any]:
        try:
            stream = self.fs.open(path)
            try:
                text = self.spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
            finally:
                stream.close()
            return dict(json.loads(str(text) or "{}"))
        except Exception:
            return {}

    def _write(self, path: Any, overwrite: bool) -> None:
        if not overwrite and self.local:
            # Hadoop's local filesystem checks, then creates: O_EXCL is the atomic create-if-absent
            # (HDFS's namenode makes create(overwrite=false) atomic by itself)
            fd = os.open(str(path.toUri().getPath()), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.info, handle)
            return
        stream = self.fs.create(path, bool(overwrite))
        try:
            stream.write(bytearray(json.dumps(self.info).encode()))
        finally:
            stream.close()

    def _age(self) -> float | None:
        """Seconds since the lease was last renewed, or None when there is no lease."""
        try:
            status = self.fs.getFileStatus(self.path)
        except Exception as exc:
            if "FileNotFoundException" in _java_class(exc) or "FileNotFound" in str(exc):
                return None
            raise
        return max(0.0, time.time() - int(status.getModificationTime()) / 1000.0)

    # ---- take, renew, release -------------------------------------------------------------
    def acquire(self) -> None:
        for _ in range(5):
            try:
                self._write(self.path, overwrite=False)
            except FileExistsError:
                pass
            except Exception as exc:
                if "FileAlreadyExists" not in _java_class(exc) and not self.fs.exists(self.path):
                    raise
            else:
                self._start_heartbeat()
                return
            age = self._age()
            if age is None:
                continue  # released between our create and our look: try again
            holder = self._read(self.path)
            if age <= self.ttl:
                raise LeaseHeldError(describe(holder, age), holder)
            self._take_over(holder, age)
        raise LeaseHeldError("another process (the lease changed hands while this run tried to take it)", {})

    def _take_over(self, stale: dict[str, Any], age: float) -> None:
        aside = self.spark._jvm.org.apache.hadoop.fs.Path(
            self.path.getParent(), f"{LEASE_FILE_NAME}.expired-{self.id}"
        )
        if not self.fs.rename(self.path, aside):
            return  # another run moved it first
        moved = self._read(aside)
        if stale and moved.get("lease_id") != stale.get("lease_id"):
            # a fresh lease was created between our look and our rename: give it back
            self.fs.rename(aside, self.path)
            raise LeaseHeldError(describe(moved), moved)
        self.fs.delete(aside, False)
        logger.warning(f"Took over the expired run lease of {describe(stale)} (not renewed for {age:.0f}s).")

    def _start_heartbeat(self) -> None:
        self._thread = threading.Thread(target=self._heartbeat, name="dbt-run-lease", daemon=True)
        self._thread.start()

    def renew(self) -> bool:
        """Touch the lease if it is still ours; False (and `lost`) when another holder has it.

        A lease file that is missing for a moment (a run judging it stale renamed it aside and is
        about to put it back, see `_take_over`) is not lost: the next beat tries again.
        """
        current = self._read(self.path)
        if not current:
            return True
        if current.get("lease_id") != self.id:
            self.lost = True
            return False
        now = int(time.time() * 1000)
        try:
            self.fs.setTimes(self.path, now, -1)
        except Exception:
            pass
        if (self._age() or 0.0) > self.ttl / 2:  # a store that ignores setTimes: rewrite it
            self._write(self.path, overwrite=True)
        return True

    def _heartbeat(self) -> None:
        interval = max(0.5, self.ttl / 4)
        while not self._stop.wait(interval):
            try:
                if not self.renew():
                    logger.error(
                        f"This run lost its lease on {self.warehouse}: another run took the warehouse."
                    )
                    return
            except Exception:
                if self._stop.is_set():
                    return
                logger.warning(f"Could not renew the run lease on {self.warehouse}; retrying.")

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            if self._read(self.path).get("lease_id") == self.id:
                self.fs.delete(self.path, False)
        except Exception:
            pass  # the JVM is gone: the lease expires after its ttl
