"""A Delta Lake table's log as the purge records it: how long Delta keeps its entries
(`delta.logRetentionDuration`) and the words of purge_log's reason that name the log, which the
erasure ledger reads (macros/erasure/copies.sql, erasure_copy_swaps_sql)."""

from __future__ import annotations

import re

from python_hooks.purge.plan import TablePlan

LOG_RETENTION = "delta.logRetentionDuration"
LOG_RETENTION_DEFAULT = "interval 30 days"
_INTERVAL = re.compile(r"^(?:interval\s+)?(\d+(?:\.\d+)?)\s*(week|day|hour|minute|second)s?$")
_UNIT_HOURS = {"week": 168.0, "day": 24.0, "hour": 1.0, "minute": 1 / 60, "second": 1 / 3600}


def log_retention_hours(text: str | None) -> float | None:
    """Hours of a `delta.logRetentionDuration` (Delta's default, 30 days, when unset), or None when
    the text is not a plain `interval <n> <unit>`."""
    found = _INTERVAL.match(str(text or LOG_RETENTION_DEFAULT).strip().lower())
    if not found:
        return None
    return float(found.group(1)) * _UNIT_HOURS[found.group(2)]


def log_note(table: TablePlan) -> str:
    """Where the table's log is and how long Delta keeps its entries: the ledger reads both
    (macros/erasure/copies.sql, erasure_copy_swaps_sql), so keep the words."""
    kept = (
        f"{table.log_retention_hours:g} hours"
        if table.log_retention_hours is not None
        else "a duration this product cannot read"
    )
    return (
        f"its log ({table.location.rstrip('/')}/_delta_log) is cleaned by Delta at a checkpoint"
        f" past {LOG_RETENTION} ({kept})"
    )
