"""The one error type, and the one result shape for Jinja callers.

Jinja has no try/except: a Python call that must not stop a macro returns
`{ok, error, **fields}` (built by `result`) instead of raising; everything else raises
`LakehouseError` (the adapter's, so macros and hooks see one type).
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.errors import LakehouseError

__all__ = ["LakehouseError", "error_message", "result"]


def error_message(exc: BaseException) -> str:
    """The first line of an exception's message (a Java stack trace follows it), or its type.

    For dbt's errors (LakehouseError among them) the message itself, without dbt's
    `Runtime Error` heading.
    """
    text = str(getattr(exc, "msg", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def result(error: BaseException | str | None = None, **fields: Any) -> dict[str, Any]:
    """`{ok, error, **fields}`: ok when there is no error; an exception becomes its first line."""
    if isinstance(error, BaseException):
        error = error_message(error)
    return {"ok": error is None, "error": error, **fields}
