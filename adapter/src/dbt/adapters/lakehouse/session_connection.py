"""dbt-spark's session connection, with its bound parameters written as Spark SQL literals."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.literals import sql_literal
from dbt.adapters.spark.session import SessionConnectionWrapper


class LiteralBindingConnectionWrapper(SessionConnectionWrapper):
    """Binds a seed's values as literals (literals.py) instead of dbt-spark's quoted `str()`,
    which loads a NULL cell as the string 'None' and breaks on a value holding a quote."""

    @classmethod
    def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
        return sql_literal(value)
