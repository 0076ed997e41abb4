"""The `session` submission method: a Python model runs in the dbt process's own Spark session."""

from __future__ import annotations

import textwrap
import traceback
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

_session: Any = None


def get_session(server_side_parameters: dict[str, str]) -> Any:
    """The process's SparkSession, built the way dbt-spark's session cursor builds it.

    Built once and then reused while its SparkContext runs: `getOrCreate()` on a running session
    sets every parameter again (a JVM round trip each), and macros call this
    for every hook and file-system method.
    """
    global _session
    from pyspark.sql import SparkSession

    if _session is not None and _session.sparkContext._jsc is not None:
        return _session
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in server_side_parameters.items():
        builder = builder.config(key, value)
    _session = builder.getOrCreate()
    return _session


def running_session() -> Any:
    """The process's SparkSession when it runs, else None (nothing is started)."""
    if _session is not None and _session.sparkContext._jsc is not None:
        return _session
    return None


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: dict[str, Any], credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> None:
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        spark = get_session(self.credentials.server_side_parameters)
        namespace: dict[str, Any] = {
            "spark": spark,
            "__name__": f"dbt_python_model_{self.parsed_model['alias']}",
        }
        try:
            exec(
                compile(textwrap.dedent(compiled_code).strip() + "\n", f"<python model {name}>", "exec"),
                namespace,
            )
        except DbtRuntimeError:
            raise
        except Exception as exc:
            detail = "".join(traceback.format_exception(exc)[-6:])
            raise DbtRuntimeError(f"Python model {name} failed: {exc}\n{detail}") from exc
