"""Credentials and connection manager: the `spark` ones, plus the run lock and session defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.lakehouse import storage
from dbt.adapters.lakehouse.driver import DRIVER, Command
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)

LOG4J_CONFIG = os.path.join(os.path.dirname(__file__), "log4j2.properties")


@dataclass
class LakehouseCredentials(SparkCredentials):
    @property
    def type(self) -> str:
        return "lakehouse"


def session_parameters(params: dict[str, str]) -> dict[str, str]:
    """The profile's Spark settings, completed with this plugin's defaults.

    Quiet Spark logging (log4j2) and put derby.log beside the metastore instead of the working
    directory.  Settings given in the profile win.

    A partition filter the metastore cannot evaluate falls back to listing the table's
    partitions and pruning them in the driver (`metastorePartitionPruningFallbackOnException`),
    instead of failing the read.  A Hive 2.3 metastore on PostgreSQL needs it: its direct SQL
    casts the values of an integer partition column (`hr = 10`) and PostgreSQL may apply that
    cast to other tables' values of the same key position (`'eu'`) before the join, which
    fails; its ORM fallback then refuses a filter on a non-string column.  A non-numeric value
    in an integer partition column (written by another tool) fails the same way on any
    metastore.  docs/deploy.md has the details.

    A local master (the embedded default) does not wait for locality (`spark.locality.wait` 0s):
    it has one executor, so no task can run nearer its data, and Spark's local backend offers its
    cores again only when a task starts or ends.  A task held back for a host it prefers (an HDFS
    block on `127.0.0.1` while the driver's host is named otherwise) was never offered them again
    once the wait expired: the job hung, with free cores and no task running (seen on HDFS).

    pandas-on-Spark (a Python model may return its DataFrame) asks for PYARROW_IGNORE_TIMEZONE=1
    in the driver and the executors, set before the session starts: the executors get it here,
    the driver in `LakehouseConnectionManager.open`.
    """
    result = dict(params)
    java_opts = result.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in java_opts:
        java_opts += f" -Dlog4j2.configurationFile=file:{LOG4J_CONFIG}"
    metastore = storage.metastore_dir(result)
    if metastore and "derby.stream.error.file" not in java_opts:
        derby_log = os.path.join(os.path.dirname(os.path.abspath(metastore)), "derby.log")
        java_opts += f" -Dderby.stream.error.file={derby_log}"
    result["spark.driver.extraJavaOptions"] = java_opts.strip()
    result.setdefault("spark.ui.enabled", "false")
    result.setdefault("spark.ui.showConsoleProgress", "false")
    result.setdefault("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
    result.setdefault("spark.sql.hive.metastorePartitionPruningFallbackOnException", "true")
    result.setdefault("spark.executorEnv.PYARROW_IGNORE_TIMEZONE", "1")
    if str(result.get("spark.master", "local")).startswith("local"):
        result.setdefault("spark.locality.wait", "0s")
    result.update(storage.object_store_settings(result))
    result.update(storage.format_settings(result))
    return result


# the connection dbt runs its hooks on: its statements still run after a cancellation
HOOK_CONNECTION = "master"


# The dbt commands that open a connection to the warehouse (dbt's `flags.WHICH`).  They take the
# warehouse's run lock when dbt creates the adapter, which it does before it parses the project
# and writes target/ (partial_parse.msgpack, manifest.json, ...): a command refused because
# another holds the warehouse stops before writing anything, so the running command's target/
# stays as it wrote it.  `dbt parse`, `ls`, `deps` and `debug` take no lock early.
EARLY_LOCK_COMMANDS = frozenset(
    {
        "build",
        "clone",
        "compile",
        "freshness",
        "generate",
        "retry",
        "run",
        "run-operation",
        "seed",
        "show",
        "snapshot",
        "test",
    }
)


def _command() -> str | None:
    """The running dbt command (`run`, `run-operation`, `generate`, ...), or None outside the CLI."""
    try:
        from dbt.flags import get_flags

        return getattr(get_flags(), "WHICH", None)
    except ImportError:  # no dbt-core flags (a library use of the adapter)
        return None


class LakehouseConnectionManager(SparkConnectionManager):
    TYPE = "lakehouse"
    # the adapter's command, set when it makes this manager (driver.py): its cancellation, its session
    command: Command | None = None

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        creds = profile.credentials
        if creds.method == SparkConnectionMethod.SESSION and _command() in EARLY_LOCK_COMMANDS:
            creds.server_side_parameters = session_parameters(creds.server_side_parameters)
            DRIVER.lock(creds.server_side_parameters)
            # a command that never reaches a session (a run-operation that fails to compile) is
            # still known to have run against this warehouse
            from dbt.adapters.lakehouse.compliance import record_connected

            record_connected(
                creds.server_side_parameters, creds.schema, getattr(profile, "target_name", None)
            )

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        creds.server_side_parameters = session_parameters(creds.server_side_parameters)
        os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
        DRIVER.lock(creds.server_side_parameters)
        connection = super().open(connection)
        # imported here, as dbt-spark imports its session module: it imports pyspark
        from dbt.adapters.lakehouse.session_connection import LiteralBindingConnectionWrapper

        if not isinstance(connection.handle, LiteralBindingConnectionWrapper):
            connection.handle = LiteralBindingConnectionWrapper(connection.handle.handle)
        return connection

    def add_query(self, sql: str, *args: Any, **kwargs: Any) -> tuple[Connection, Any]:
        """dbt-spark's, in the Spark job group of the connection (so `cancel` stops its jobs),
        and refused on a node's connection once the run was cancelled."""
        connection = self.get_thread_connection()
        if self.command is not None:
            if connection.name != HOOK_CONNECTION:
                self.command.cancellation.check(f"{connection.name} was not run")
            self.command.cancellation.active = True
            self.command.set_job_group(connection.name)
        result = super().add_query(sql, *args, **kwargs)
        self.record_run(connection.credentials)
        return result

    # the invocation whose run record this command has left (record_connected)
    recorded_invocation: str | None = None

    def record_run(self, credentials: Any) -> None:
        """This command reached its warehouse: its run record names it (once per command)."""
        from dbt_common.invocation import get_invocation_id

        if (
            credentials.method != SparkConnectionMethod.SESSION
            or self.recorded_invocation == get_invocation_id()
        ):
            return
        from pyspark.sql import SparkSession

        session = DRIVER.running_session() or SparkSession._instantiatedSession
        from dbt.adapters.lakehouse.compliance import record_connected

        if session is not None:
            self.recorded_invocation = record_connected(session, getattr(credentials, "schema", None))

    def cancel(self, connection: Connection) -> None:
        """dbt's interrupt: the connection's Spark jobs are cancelled, and the product's work
        (the purge engine, retention) stops at its next safe point."""
        if self.command is not None:
            self.command.cancellation.request("KeyboardInterrupt")
        session = DRIVER.running_session()
        if session is not None and connection.name:
            session.sparkContext.cancelJobGroup(connection.name)
