"""Spark settings for the hourly dedup statement, set by its pre-hook and put back by its post-hook.

The dedup keeps `row_number() = 1` per key.  For such a filter Spark 3.5 plans a per-group
limit before the shuffle (`spark.sql.optimizer.windowGroupLimitThreshold`): each input split is
sorted by the window's keys and all but the first row of each key dropped, then the survivors
are shuffled and sorted again.  That pays off when most rows are duplicates of a row in the same
split.  Compaction input is mostly distinct (at-least-once delivery repeats a few records), so
the first sort reads and sorts every row to drop a few: at 5M rows with 20% duplicates the
statement took 5.3-5.7 s with it and 4.5-4.7 s without (2-core machine, warm session).

`dedup_statement` turns it off unless the model asks for it (`meta.compaction.partial_dedup:
true`); `restore` puts back the value the session had.  A run whose statement fails skips its
post-hook and leaves the setting off in that process: later queries then plan no such limit,
which changes how fast a `row_number()` filter runs, never what it returns.

    dedup_statement(spark, partial_dedup=False)   # pre-hook
    restore(spark)                                # post-hook
"""

from __future__ import annotations

import threading
from typing import Any

WINDOW_GROUP_LIMIT = "spark.sql.optimizer.windowGroupLimitThreshold"

_lock = threading.Lock()
# the session's own value of each key this module changed (None: it was unset)
_saved: dict[str, str | None] = {}


def _override(spark: Any, key: str, value: str) -> None:
    with _lock:
        if key not in _saved:
            _saved[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)


def restore(spark: Any) -> dict[str, str | None]:
    """Put back every setting `dedup_statement` changed; returns {key: restored value}."""
    with _lock:
        restored = dict(_saved)
        for key, value in restored.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        _saved.clear()
    return restored


def dedup_statement(spark: Any, partial_dedup: bool = False) -> dict[str, str]:
    """Settings for the dedup statement that runs next; returns {key: value} of what it set."""
    if partial_dedup:
        restore(spark)
        return {}
    _override(spark, WINDOW_GROUP_LIMIT, "-1")
    return {WINDOW_GROUP_LIMIT: "-1"}
