"""Policy evaluation: the ages and roots retention compares against a table's policy."""

from __future__ import annotations

import re
from datetime import datetime, timezone

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
TS_SUFFIX = re.compile(r"/\d{10,}$")


def strip_ts(location: str) -> str:
    """The table's root: its location without the `/<ts>` levels a purge of an unpartitioned table adds."""
    while TS_SUFFIX.search(location):
        location = TS_SUFFIX.sub("", location)
    return location


def java_date_format(fmt: str) -> str:
    """`yyyy-MM-dd-HH` (the Java pattern users write in policies) as a strptime format."""
    for java, python in (
        ("yyyy", "%Y"),
        ("MM", "%m"),
        ("dd", "%d"),
        ("HH", "%H"),
        ("mm", "%M"),
        ("ss", "%S"),
    ):
        fmt = fmt.replace(java, python)
    return fmt


def partition_time_ms(value: str, fmt: str) -> int | None:
    """Epoch ms of a date partition value, or None when it does not parse (such partitions are kept)."""
    try:
        parsed = datetime.strptime(value, java_date_format(fmt))
    except (TypeError, ValueError):
        return None
    return int(parsed.replace(tzinfo=timezone.utc).timestamp() * 1000)
