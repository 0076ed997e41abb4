"""The one error hierarchy of the product's Python (`python_hooks`) and of the adapter, which
imports it from here (the adapter depends on python_hooks, never the other way).

Every error a user can act on is raised as one of these, with a message that names the input
(the table, the var, the partition, the file) and says what to do.  They are dbt runtime errors,
so dbt reports them as `Runtime Error` of the node or operation that raised them, never as a
compilation error.  Code catches `Exception` only where an error becomes a table's FAILED row
or a node's failure.

    LakehouseError
    ├── ConfigError          a var, an argument or an input file is not usable
    ├── NotFoundError        a database, table, column, partition or backup does not exist
    ├── RefusedError         a safety rule refuses the operation (live data, a held lock)
    ├── StatementError       a statement or metastore call failed (names the step and table)
    │   └── ConcurrentChangeError   the files changed under the operation (Gobblin's commit check)
    └── CancelledError       the run was cancelled (Ctrl-C, SIGTERM) and stopped at a safe point

`result` builds the `{ok, error, **fields}` shape that the last callers not yet raising still
return; new code raises.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from dbt_common.exceptions import DbtRuntimeError


class LakehouseError(DbtRuntimeError):
    """An operation that cannot be done as asked; the message names the input and what to do."""


class ConfigError(LakehouseError):
    """A var, an argument or an input file is not usable; nothing was changed."""


class NotFoundError(LakehouseError):
    """Something named does not exist: the message lists the nearest existing names."""

    @classmethod
    def named(cls, kind: str, name: str, known: Iterable[str], hint: str = "") -> NotFoundError:
        """`<kind> <name> does not exist (did you mean x?)`, plus `hint`."""
        return cls(f"{kind} {name} does not exist{did_you_mean(name, known)}.{' ' + hint if hint else ''}")


class RefusedError(LakehouseError):
    """A safety rule refuses the operation; nothing was changed."""


class StatementError(LakehouseError):
    """A statement or a metastore call failed; the message names the step and the table."""


class ConcurrentChangeError(StatementError):
    """The files of a partition changed between the start of an operation and its commit."""


class CancelledError(LakehouseError):
    """The run was cancelled (SIGINT, SIGTERM) and stopped at a safe point."""


def did_you_mean(name: str, known: Iterable[str], limit: int = 3) -> str:
    """` (did you mean a, b?)` for the names of `known` closest to `name`, ignoring case; ''
    when none is close."""
    names = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(names), n=limit, cutoff=0.6)
    return f" (did you mean {', '.join(names[c] for c in close)}?)" if close else ""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type; for dbt's errors the message
    itself, without dbt's heading; for a Java error raised through py4j (a failed Spark job), the
    message of its root cause (`[USER_RAISED_EXCEPTION] ...`, not `An error occurred while
    calling o123.collectToPython`)."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            cause, depth = java, 0
            while cause.getCause() is not None and depth < 10:
                cause, depth = cause.getCause(), depth + 1
            text = str(cause.getMessage() or cause.toString()).strip()
            if text:
                return text.splitlines()[0]
        except Exception:  # noqa: BLE001 - the JVM is gone: the Python message below
            pass
    text = str(getattr(exc, "msg", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


error_message = first_line


def result(error: BaseException | str | None = None, **fields: Any) -> dict[str, Any]:
    """`{ok, error, **fields}`: ok when there is no error; an exception becomes its first line."""
    if isinstance(error, BaseException):
        error = first_line(error)
    return {"ok": error is None, "error": error, **fields}
