"""The Spark driver a dbt process is, and the dbt command that runs on it: the adapter's state.

A dbt process is one Spark driver: one JVM, one embedded Derby metastore (which only one JVM may
boot), and so one run lock or lease per warehouse for as long as the JVM lives, across every
command the process runs (`dbt run` runs one; a test or a host calling `dbtRunner().invoke` runs
many, and they share the session, as dbt-spark's session connection does).  `Driver` holds exactly
that, in one place: the session, the local locks and the leases it took, and their release when
the process exits.  `DRIVER` is the process's one driver: dbt-spark's session connection and
PySpark's builder are process-wide too, so a second driver in one process could only hold a second
view of the same JVM.

Everything that belongs to one dbt command is in `Command`, made with the adapter (dbt makes a new
adapter for every command): the driver it runs on, its profile's session settings and its
cancellation (Ctrl-C, SIGTERM).  The adapter asks the command for the session and hands it down to
`python_hooks` as an argument; nothing below the adapter keeps a session.
The JVM helpers `python_hooks` compiles (`catalog/jvm.py`) are kept on the SparkContext they were
compiled in: they are code of that JVM, gone with it, and a driver that restarts its session gets
new ones.
"""

from __future__ import annotations

import atexit
import threading
from typing import IO, Any

from dbt.adapters.lakehouse import run_lock, storage, warehouse_lease
from dbt.adapters.lakehouse.cancellation import Cancellation, SignalWaker

__all__ = ["DRIVER", "Command", "Driver"]


class Driver:
    """One Spark driver: its session, the run lock or lease of each warehouse it works on, and
    the wakeup of its main thread when a signal comes (`cancellation.SignalWaker`)."""

    def __init__(self) -> None:
        self.signals = SignalWaker()
        self._session: Any = None
        self._locks: dict[str, IO[str]] = {}
        self._leases: dict[str, warehouse_lease.Lease] = {}
        self._guard = threading.RLock()
        self._exit_hook = False

    # ---- the session ---------------------------------------------------------------------
    def running_session(self) -> Any:
        """The driver's SparkSession when it runs, else None (nothing is started)."""
        session = self._session
        if session is not None and session.sparkContext._jsc is not None:
            return session
        return None

    def session(self, params: dict[str, str]) -> Any:
        """The driver's SparkSession, started with `params` when it does not run yet, after the
        warehouse's run lock is taken (`lock`).

        Built once and then reused while its SparkContext runs: `getOrCreate()` on a running
        session sets every parameter again (a JVM round trip each), and macros ask for the session
        for every hook and file-system method.
        """
        self.lock(params)
        return self._started(params)

    def _started(self, params: dict[str, str]) -> Any:
        with self._guard:
            running = self.running_session()
            if running is not None:
                return running
            from pyspark.sql import SparkSession

            builder = SparkSession.builder.enableHiveSupport()
            for key, value in params.items():
                builder = builder.config(key, value)
            self._session = builder.getOrCreate()
            return self._session

    # ---- one run per warehouse (run_lock.py, warehouse_lease.py) -----------------------------
    def lock(self, params: dict[str, str]) -> None:
        """One run per warehouse: a local flock before the session starts (embedded Derby allows
        one JVM), or, with a shared metastore, the warehouse lease once the session runs.  Held
        until the process exits; taking what the driver holds already costs nothing."""
        warehouse = params.get("spark.sql.warehouse.dir", "spark-warehouse")
        if run_lock.uses_lease(params):
            self.hold_lease(self._started(params), warehouse)
        else:
            self.lock_directory(storage.lock_directory(warehouse, storage.metastore_dir(params)) or warehouse)

    def lock_directory(self, warehouse_dir: str) -> str | None:
        """The flock of a local warehouse directory (`run_lock.take`); its path, None off the local disk."""
        directory = run_lock.local_dir(warehouse_dir)
        if directory is None:
            return None
        with self._guard:
            path = run_lock.lock_path(directory)
            if path not in self._locks:
                self._locks[path] = run_lock.take(directory)
            return path

    def hold_lease(self, spark: Any, warehouse: str, ttl: float | None = None) -> warehouse_lease.Lease:
        """The lease of a warehouse (`run_lock.take_lease`), taken once; LakehouseError when a
        live run holds it, or when this driver's lease was lost (`run_lock.check_lease`)."""
        with self._guard:
            lease = self._leases.get(warehouse)
            if lease is None:
                lease = run_lock.take_lease(spark, warehouse, ttl)
                self._leases[warehouse] = lease
                if not self._exit_hook:
                    # registered after the Spark gateway started, so it runs while the JVM lives;
                    # the leases only: a flock must last until the JVM (its Derby) is gone, and
                    # the kernel releases it then
                    atexit.register(self._release_leases)
                    self._exit_hook = True
        run_lock.check_lease(lease, warehouse)
        return lease

    def release(self) -> None:
        """Release every lock and lease this driver holds (tests and long-lived hosts, once their
        session is stopped)."""
        with self._guard:
            for handle in self._locks.values():
                run_lock.give_back(handle)
            self._locks.clear()
        self._release_leases()

    def _release_leases(self) -> None:
        with self._guard:
            for lease in self._leases.values():
                lease.release()
            self._leases.clear()


# the process's one driver (see the module's docstring)
DRIVER = Driver()


class Command:
    """One dbt command: the driver it runs on, the session settings of its profile, and its
    cancellation.  The adapter makes it (dbt makes an adapter per command) and asks it for the
    session; the connection manager and the Python model helper get it from the adapter."""

    def __init__(self, driver: Driver, params: dict[str, str]) -> None:
        self.driver = driver
        self.params = params
        self.cancellation = Cancellation()

    def session(self) -> Any:
        """The session, under the warehouse's run lock, and this command now running on it."""
        session = self.driver.session(self.params)
        self.cancellation.active = True
        return session

    def cancel_all_jobs(self) -> None:
        session = self.driver.running_session()
        if session is not None:
            session.sparkContext.cancelAllJobs()

    def set_job_group(self, name: str | None) -> None:
        """Put this thread's Spark jobs in the group `name` (a connection's, i.e. a node's), with
        interruption on cancel, when a session runs."""
        session = self.driver.running_session()
        if session is not None and name:
            session.sparkContext.setJobGroup(name, f"dbt {name}", interruptOnCancel=True)
