"""dbt-spark's session connection, with its bound parameters written as Spark SQL literals."""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark.session import SessionConnectionWrapper

from python_hooks.catalog.literals import sql_literal


class LiteralBindingConnectionWrapper(SessionConnectionWrapper):
    """Binds a seed's values as literals (python_hooks.catalog.literals) instead of dbt-spark's quoted `str()`,
    which loads a NULL cell as the string 'None' and breaks on a value holding a quote."""

    @classmethod
    def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
        return sql_literal(value)
