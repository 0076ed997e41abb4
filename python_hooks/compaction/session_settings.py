"""A SQL compaction model's `session_conf`: Spark SQL settings set by its pre-hook for its own
statement and put back by its post-hook.

Python models get `session_conf` from the adapter (its python_model.sql sets the settings around
the model's job).  A SQL model's statement runs between its hooks, so the hourly compaction's
pre-hook sets them (`apply`) and its post-hook puts back what the session had (`restore`).

The shipped hourly model uses it to turn off Spark 3.5's per-group limit for `row_number() = 1`
(`spark.sql.optimizer.windowGroupLimitThreshold: -1`).  With it, each input split is sorted by
the window's keys and all but the first row of each key dropped before the shuffle, then the
survivors are sorted again.  That pays off when most rows are duplicates of a row in the same
split; compaction input is mostly distinct (at-least-once delivery repeats a few records), so
the first sort reads and sorts every row to drop a few (docs/compaction.md measures it).

The session's own values are kept in the session itself (under SAVED_KEY, as JSON), not in this
process: nothing outlives the node but the session's settings.  A run whose statement fails
skips its post-hook and leaves the settings in the session until the next `restore` (the next
hourly run's post-hook): later queries then plan differently, which changes how fast they run,
never what they return.

    apply(spark, {"spark.sql.optimizer.windowGroupLimitThreshold": "-1"})   # pre-hook
    restore(spark)                                                          # post-hook
"""

from __future__ import annotations

import json
from typing import Any

# the session's own value of each key `apply` changed (None: it was unset), as JSON
SAVED_KEY = "spark.lakehouse.session_conf.saved"


def _saved(spark: Any) -> dict[str, str | None]:
    return json.loads(spark.conf.get(SAVED_KEY, None) or "{}")


def apply(spark: Any, settings: dict[str, Any] | None = None) -> dict[str, str]:
    """Set `settings` ({key: value}) in the session, remembering the session's own values
    (those of the first `apply` since the last `restore`).  Returns what it set."""
    applied = {str(key): str(value) for key, value in (settings or {}).items()}
    saved = _saved(spark)
    for key, value in applied.items():
        if key not in saved:
            saved[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)
    spark.conf.set(SAVED_KEY, json.dumps(saved))
    return applied


def restore(spark: Any) -> dict[str, str | None]:
    """Put back every setting `apply` changed; returns {key: restored value} (None: unset)."""
    restored = _saved(spark)
    for key, value in restored.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
    spark.conf.unset(SAVED_KEY)
    return restored
