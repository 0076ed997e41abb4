"""Small conversions of dbt's objects and artifacts into the audit tables' values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any


def describe_error(exc: BaseException) -> str:
    """One line naming what went wrong (for a JVM error, the Java exception, not py4j's wrapper)."""
    java = getattr(exc, "java_exception", None)
    text = str(java) if java is not None else str(getattr(exc, "msg", None) or exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}"[:500]


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def ts(value: Any) -> datetime | None:
    """A naive UTC datetime from a datetime or an ISO string (dbt's artifacts use both)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    text = str(value).replace("Z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed.astimezone(timezone.utc).replace(tzinfo=None) if parsed.tzinfo else parsed


def plain(value: Any) -> Any:
    """dbt objects (dataclasses, enums, agate rows) as plain JSON-able Python."""
    if hasattr(value, "to_dict"):
        try:
            return value.to_dict(omit_none=True)
        except TypeError:
            return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def json_text(value: Any) -> str | None:
    value = plain(value)
    if value in (None, {}, [], ""):
        return None
    return json.dumps(value, sort_keys=True, default=str)


def timing(result: Mapping[str, Any], name: str, edge: str) -> Any:
    """A result's `timing` step value (`compile`/`execute`, `started_at`/`completed_at`), as given."""
    for step in result.get("timing") or []:
        if step.get("name") == name:
            return step.get(edge)
    return None
