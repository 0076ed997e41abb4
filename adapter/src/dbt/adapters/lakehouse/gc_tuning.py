"""Python's cyclic garbage collector, tuned for a dbt command.

dbt builds its manifest out of a few hundred thousand objects that live until the command ends
(every node, macro and their config), most of them while it reads `partial_parse.msgpack`.  With
Python's default thresholds (700, 10, 10) that load triggers a few full collections, each one
walking every object made so far: on this project a few full collections in a fresh process,
and one more in each later command of the same process.  None of them finds
much: the manifest is not garbage.

Opt-in (`DBT_LAKEHOUSE_GC_TUNING=1`): importing the adapter changes nothing outside it.  When
it is set and dbt loads this adapter (before it reads the manifest), the objects alive then
(dbt's and Spark's modules) are frozen out of the collector's reach (`gc.freeze`) and the young
generation's threshold is raised from 700 to 10,000 allocations, so that the load runs without
a full collection and young garbage (a node's Jinja contexts) is still collected as it goes.
Reference-counted objects are freed as always.  What it costs: cyclic garbage already alive at
that moment is never collected (frozen), and newer cyclic garbage lives a little longer, py4j
proxies in such cycles included (their JVM objects stay pinned until the next collection).

Unset (or anything but `1`), the collector stays as Python set it.
"""

from __future__ import annotations

import gc
import os

YOUNG_THRESHOLD = 10_000


def tune() -> bool:
    """Freeze what is alive and raise the young threshold, once per process, when
    DBT_LAKEHOUSE_GC_TUNING=1; False otherwise (or when already done)."""
    if os.environ.get("DBT_LAKEHOUSE_GC_TUNING", "").strip() != "1" or getattr(tune, "done", False):
        return False
    tune.done = True  # type: ignore[attr-defined]
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    return True
