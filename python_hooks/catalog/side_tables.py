"""The side tables purge and restore make, `<table>_<kind>_<ts>`, and the clock that stamps them."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Any

# `<table>_<kind>_<ts>`: the names purge and restore give to their side tables (ts in epoch ms).
SIDE_TABLE = re.compile(r"^(?P<base>.+)_(?P<kind>backup|staging|trash)_(?P<ts>\d{10,})$")


def side_table(name: str) -> tuple[str, str, int] | None:
    """(base table, kind, ts) for `<base>_<kind>_<ts>`, or None for any other name."""
    match = SIDE_TABLE.match(name)
    if not match:
        return None
    return match.group("base"), match.group("kind"), int(match.group("ts"))


def now_ms(value: Any) -> int:
    """`retention_now` (epoch ms, or an ISO timestamp in UTC), or the current time."""
    if value in (None, ""):
        return int(time.time() * 1000)
    if isinstance(value, (int, float)) or str(value).isdigit():
        return int(value)
    parsed = datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)
