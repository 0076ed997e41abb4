"""Python values as Spark SQL literals, for the session cursor's parameter binding.

dbt-spark's session cursor binds a seed's values by formatting them into the statement
(`sql % parameters`), each one wrapped in quotes as `str()` prints it: None becomes the string
'None', and a quote inside a value ends the literal (PARSE_SYNTAX_ERROR).  Here every value is
written as the literal Spark parses back to it; dbt's seed statement casts it to the column's type.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

# Spark's decimal literals hold at most 38 digits; a longer number goes through a string cast.
_MAX_DECIMAL_DIGITS = 38


def string_literal(text: str) -> str:
    """`text` as a Spark SQL string literal that reads back exactly.

    Backslashes and quotes are escaped (Spark unescapes string literals), and `$` is written as
    `\\u0024`: Spark substitutes `${...}` in a statement's text (spark.sql.variable.substitute)
    before it parses the literals.
    """
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024")
    return f"'{escaped}'"


def _number_literal(value: Decimal | float | int) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return string_literal(str(value).replace("inf", "Infinity").replace("nan", "NaN"))
        value = Decimal(repr(value))
    if not value.is_finite():
        return string_literal("NaN" if value.is_nan() else ("-Infinity" if value < 0 else "Infinity"))
    text = format(value, "f")
    if sum(char.isdigit() for char in text) > _MAX_DECIMAL_DIGITS:
        return string_literal(text)
    return text


def sql_literal(value: Any) -> str:
    """A bound parameter as a Spark SQL literal: NULL, true/false, a number, or a quoted string
    (dates and timestamps in the ISO form Spark's casts read)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal)):
        return _number_literal(value)
    if isinstance(value, dt.datetime):
        return string_literal(value.isoformat(sep=" "))
    if isinstance(value, dt.date):
        return string_literal(value.isoformat())
    return string_literal(str(value))
