"""Render the project's SQL-building macros without a warehouse (dbt-spark's test_macros pattern).

Every file under `macros/` is compiled with dbt's own Jinja environment; the macros are exposed
as `compliance.<name>` (the project's dispatch namespace) and as plain names.  `return(x)` gives
`x` back to the caller, as in dbt, and `adapter.dispatch` resolves lakehouse__ > spark__ >
default__.  A test passes plain Python values and asserts on the SQL text.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, Optional

import jinja2
from dbt_common.clients.jinja import get_environment

from python_hooks.catalog import partitions

REPO = Path(__file__).resolve().parents[2]


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _raise_return(value: Any) -> None:
    raise _Return(value)


class CompilerError(Exception):
    pass


def _raise_compiler_error(message: str) -> None:
    raise CompilerError(message)


class FakeAdapter:
    """The pure (warehouse-free) adapter methods the SQL-building macros use."""

    def __init__(self, registry: Dict[str, Callable[..., Any]]) -> None:
        self._registry = registry

    def dispatch(self, name: str, macro_namespace: Optional[str] = None) -> Callable[..., Any]:
        for prefix in ("lakehouse__", "spark__", "default__"):
            if prefix + name in self._registry:
                return self._registry[prefix + name]
        raise KeyError(f"no implementation of {name}")

    def raise_config_error(self, message: str) -> None:
        """compliance.config_error: the adapter raises ConfigError; here the harness's error."""
        raise CompilerError(message)

    def partition_values(self, spec: str) -> list:
        return [list(p) for p in partitions.parse_spec(spec)]

    def partition_path(self, pairs: list) -> str:
        return partitions.spec_path([(str(k), str(v)) for k, v in pairs])

    def quote(self, identifier: str) -> str:
        return f"`{identifier}`"


class MacroRenderer:
    def __init__(self, variables: Optional[Dict[str, Any]] = None, target_schema: str = "lakehouse") -> None:
        self.env = get_environment()
        self.registry: Dict[str, Callable[..., Any]] = {}
        self.adapter = FakeAdapter(self.registry)
        self.variables = dict(variables or {})
        self.globals: Dict[str, Any] = {
            "return": _raise_return,
            "exceptions": SimpleNamespace(raise_compiler_error=_raise_compiler_error, warn=lambda m: None),
            "adapter": self.adapter,
            "var": self._var,
            "target": SimpleNamespace(schema=target_schema, name="local", type="lakehouse"),
            "modules": SimpleNamespace(re=re, datetime=__import__("datetime")),
            "tojson": json.dumps,
            "fromjson": json.loads,
            "log": lambda *a, **k: "",
            "run_started_at": datetime(2026, 1, 1),
            "invocation_id": "00000000-0000-0000-0000-000000000000",
            "compliance": SimpleNamespace(),
        }
        for path in sorted((REPO / "macros").rglob("*.sql")):
            try:
                template = self.env.from_string(path.read_text(), globals=self.globals)
                module = template.make_module(vars=self.globals)
            except (jinja2.TemplateError, TypeError, KeyError):
                continue  # files with materializations or run-time-only code are tested on Spark
            for name in dir(module):
                macro = getattr(module, name)
                if isinstance(macro, jinja2.runtime.Macro):
                    self.registry[name.removeprefix("dbt_macro__")] = self._wrap(macro)
        for name, fn in self.registry.items():
            setattr(self.globals["compliance"], name, fn)
            self.globals.setdefault(name, fn)

    def _var(self, name: str, default: Any = None) -> Any:
        return self.variables.get(name, default)

    @staticmethod
    def _wrap(macro: jinja2.runtime.Macro) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return str(macro(*args, **kwargs))
            except _Return as returned:
                return returned.value

        return call

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.registry[name](*args, **kwargs)


def squash(sql: str) -> str:
    """Whitespace-insensitive SQL for comparisons."""
    return re.sub(r"\s+", " ", str(sql)).strip()
