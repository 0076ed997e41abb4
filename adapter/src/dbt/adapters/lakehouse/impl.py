"""The adapter: SparkAdapter with a session submission method and filesystem methods for macros."""

from __future__ import annotations

import builtins
import functools
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.lakehouse import relations
from dbt.adapters.lakehouse.compliance import ComplianceMethods
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager, session_parameters
from dbt.adapters.lakehouse.driver import DRIVER, Command
from dbt.adapters.lakehouse.python_job import SessionPythonJobHelper
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter

from python_hooks.catalog import filesystem, partitions


def _empty_list(*args: Any, **kwargs: Any) -> list[Any]:
    return []


class LakehouseAdapter(ComplianceMethods, SparkAdapter):
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # this dbt command, on the process's Spark driver (driver.py)
        self.command = Command(DRIVER, session_parameters(config.credentials.server_side_parameters))
        self.connections.command = self.command
        # Ctrl-C and SIGTERM stop the run at a safe point (cancellation.py)
        self.cancellation = self.command.cancellation
        self.cancellation.install(self.command.cancel_all_jobs)
        DRIVER.signals.install()

    @classmethod
    def type(cls) -> str:
        return "lakehouse"

    def cleanup_connections(self) -> None:
        """The command is over: a later signal is the default's again, a new command starts uncancelled."""
        super().cleanup_connections()
        self.cancellation.active = False
        self.cancellation.reset()

    # ---- Python models -------------------------------------------------------------------
    @property
    def default_python_submission_method(self) -> str:
        if self.config.credentials.method == SparkConnectionMethod.SESSION:
            return "session"
        return super().default_python_submission_method

    @property
    def python_submission_helpers(self) -> dict[str, builtins.type[PythonJobHelper]]:
        # the helper runs the model in this command's session
        session = functools.partial(SessionPythonJobHelper, command=self.command)
        return {**super().python_submission_helpers, "session": session}  # type: ignore[dict-item]

    # ---- the session ---------------------------------------------------------------------
    def spark_session(self) -> Any:
        """The process's SparkSession (started, under the run lock, when it is not yet), its jobs
        in the job group of this thread's connection (the node's: `cancel` stops them)."""
        session = self.command.session()
        connection = self.connections.get_if_exists()
        self.command.set_job_group(connection.name if connection is not None else None)
        self.connections.record_run(self.config.credentials)
        return session

    # ---- the relation cache, from the catalog (relations.py) -------------------------------
    def _uses_session(self) -> bool:
        return self.config.credentials.method == SparkConnectionMethod.SESSION

    def list_schemas(self, database: str) -> list[str]:
        """`show databases`, answered by the catalog without running a statement."""
        if not self._uses_session():
            return super().list_schemas(database)
        return relations.database_names(self.spark_session())

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        """dbt-spark's `show table extended in <schema> like '*'`, answered by two catalog calls
        (the names, then every table's metadata at once) instead of one metastore call per table;
        the statement itself when that fails."""
        if not self._uses_session() or not schema_relation.schema:
            return super().list_relations_without_caching(schema_relation)
        try:
            found = relations.tables_with_information(self.spark_session(), schema_relation.schema)
        except Exception:  # noqa: BLE001 - the statement dbt-spark runs gives the same answer
            return super().list_relations_without_caching(schema_relation)
        return self._build_spark_relation_list(
            row_list=found,  # type: ignore[arg-type]
            relation_info_func=lambda row: row,
        )

    # ---- filesystem methods for macros and hooks -----------------------------------------
    @available.parse(_empty_list)
    def fs_list(self, path: str, recursive: bool = False) -> list[dict[str, Any]]:
        """Entries under `path`: path, name, is_dir, size, modification_time (epoch ms)."""
        return filesystem.list_dir(self.spark_session(), path, recursive)

    @available.parse_none
    def fs_exists(self, path: str) -> bool:
        return filesystem.exists(self.spark_session(), path)

    @available.parse_none
    def fs_summary(self, path: str) -> dict[str, int]:
        """{files, dirs, bytes} under `path`."""
        return filesystem.summary(self.spark_session(), path)

    @available.parse_none
    def fs_fingerprint(self, path: str) -> str:
        return filesystem.fingerprint(self.spark_session(), path)

    @available.parse_none
    def fs_mkdirs(self, path: str) -> bool:
        return filesystem.mkdirs(self.spark_session(), path)

    @available.parse_none
    def fs_move(self, source: str, destination: str) -> bool:
        return filesystem.move(self.spark_session(), source, destination)

    @available.parse_none
    def fs_delete(self, path: str, recursive: bool = True) -> dict[str, Any]:
        """Delete `path`; returns {deleted, files, bytes}."""
        return filesystem.delete(self.spark_session(), path, recursive)

    @available.parse_none
    def fs_qualify(self, path: str) -> str:
        return filesystem.qualify(self.spark_session(), path)

    @available.parse_none
    def fs_is_within(self, path: str, root: str) -> bool:
        return filesystem.is_within(self.spark_session(), path, root)

    # ---- partition specs ------------------------------------------------------------------
    @available
    def partition_values(self, spec: str) -> list[list[str]]:
        """`k=v%3A1/k2=v2` as `show partitions` prints it -> [[k, 'v:1'], [k2, 'v2']] (unescaped)."""
        return [list(pair) for pair in partitions.parse_spec(spec)]

    @available
    def partition_path(self, pairs: list[list[str]]) -> str:
        """[[k, v], ...] (unescaped) -> the escaped directory path Hive uses, `k=v/k2=v2`."""
        return partitions.spec_path([(str(k), str(v)) for k, v in pairs])
