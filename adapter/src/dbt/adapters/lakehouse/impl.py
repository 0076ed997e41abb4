"""The adapter: SparkAdapter with a session submission method and filesystem methods for macros."""

from __future__ import annotations

import builtins
import importlib
import os
import sys
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.lakehouse import filesystem, partitions, relations
from dbt.adapters.lakehouse.compliance import ComplianceMethods
from dbt.adapters.lakehouse.connections import (
    LakehouseConnectionManager,
    lock_warehouse,
    session_parameters,
)
from dbt.adapters.lakehouse.python_job import SessionPythonJobHelper, get_session
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter


def _empty_list(*args: Any, **kwargs: Any) -> list[Any]:
    return []


class LakehouseAdapter(ComplianceMethods, SparkAdapter):
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]

    @classmethod
    def type(cls) -> str:
        return "lakehouse"

    # ---- Python models -------------------------------------------------------------------
    @property
    def default_python_submission_method(self) -> str:
        if self.config.credentials.method == SparkConnectionMethod.SESSION:
            return "session"
        return super().default_python_submission_method

    @property
    def python_submission_helpers(self) -> dict[str, builtins.type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    # ---- the session ---------------------------------------------------------------------
    def spark_session(self) -> Any:
        """The process's SparkSession (started, under the run lock, when it is not yet)."""
        params = session_parameters(self.config.credentials.server_side_parameters)
        lock_warehouse(params)
        return get_session(params)

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

    # ---- Python hooks --------------------------------------------------------------------
    def _python_roots(self) -> list[str]:
        """The project root and the root of every installed package (`dbt_packages/<name>`,
        a local package's symlink resolved), so that a package's hook modules import when it
        is installed in another project (the demo installs the product this way)."""
        root = os.path.abspath(self.config.project_root)
        roots = [root]
        install_path = getattr(self.config, "packages_install_path", None) or "dbt_packages"
        packages = os.path.join(root, install_path)
        if os.path.isdir(packages):
            for name in sorted(os.listdir(packages)):
                path = os.path.realpath(os.path.join(packages, name))
                if os.path.isdir(path) and path not in roots:
                    roots.append(path)
        return roots

    @available.parse_none
    def guarded(self, macro: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Call a macro (or any callable) and catch what it raises: {ok, value, error}.

        Jinja has no try/except; a materialization that must go on past one item's failure (the
        purge, one table at a time) calls each item through this.  `error` is the first line of
        the exception's message (a Java stack trace follows it in Py4J errors).
        """
        try:
            return {"ok": True, "value": macro(*args, **kwargs), "error": None}
        except Exception as exc:  # noqa: BLE001 - any failure of the item is reported, not raised
            text = str(getattr(exc, "msg", None) or exc).strip()
            return {"ok": False, "value": None, "error": text.splitlines()[0] if text else type(exc).__name__}

    @available.parse_none
    def python_hook(self, target: str, **kwargs: Any) -> Any:
        """Call `module:function(spark, **kwargs)` from the project's Python packages.

        The project root is put on sys.path so that `python_hooks.<module>` imports; the
        function receives the SparkSession first and returns plain Python for Jinja.
        """
        module_name, _, function_name = target.partition(":")
        if not function_name:
            raise ValueError(f"python_hook target {target!r} must look like 'package.module:function'.")
        for root in self._python_roots():
            if root not in sys.path:
                sys.path.append(root)
        module = importlib.import_module(module_name)
        return getattr(module, function_name)(self.spark_session(), **kwargs)
