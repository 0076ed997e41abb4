"""The `session` submission method: a Python model runs in the dbt process's own Spark session."""

from __future__ import annotations

import textwrap
import traceback
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.lakehouse.driver import Command
from dbt_common.exceptions import DbtRuntimeError


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: dict[str, Any], credentials: Any, command: Command) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        self.command = command

    def submit(self, compiled_code: str) -> None:
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        spark = self.command.session()
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
