"""The error hierarchy the product's Python raises (defined with the adapter, which raises them
too): see dbt.adapters.lakehouse.errors.

`result` builds the `{ok, error, **fields}` shape that the last callers not yet raising still
return; new code raises.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.errors import (
    CancelledError,
    ConcurrentChangeError,
    ConfigError,
    LakehouseError,
    NotFoundError,
    RefusedError,
    StatementError,
    did_you_mean,
    first_line,
)

__all__ = [
    "CancelledError",
    "ConcurrentChangeError",
    "ConfigError",
    "LakehouseError",
    "NotFoundError",
    "RefusedError",
    "StatementError",
    "did_you_mean",
    "error_message",
    "first_line",
    "result",
]

error_message = first_line


def result(error: BaseException | str | None = None, **fields: Any) -> dict[str, Any]:
    """`{ok, error, **fields}`: ok when there is no error; an exception becomes its first line."""
    if isinstance(error, BaseException):
        error = first_line(error)
    return {"ok": error is None, "error": error, **fields}
