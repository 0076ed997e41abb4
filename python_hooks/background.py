"""SQL statements that run in the background of a macro while it goes on, then are waited for.

Jinja has no threads.  The purge records the old locations of the partitions it swapped (a small
Spark write into `stale_data_records`, about 0.1 s) while it drops its staging table and moves on
to the next table, and waits for every such write before the node ends:

    adapter.python_hook('python_hooks.background:start', key=..., statements=[...])
    adapter.python_hook('python_hooks.background:wait_all')   # {key: {ok, error, statement}}

The statements of one key run one after the other on their own thread; Spark runs jobs from
several threads of one session at once.  Nothing here raises: a failed statement stops its key
and is reported by `wait_all`.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pending: dict[str, Future] = {}


def _run(spark: Any, statements: list[str]) -> dict[str, Any]:
    for sql in statements:
        try:
            spark.sql(sql).collect()
        except Exception as exc:  # noqa: BLE001 - reported to whoever waits
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return {"ok": False, "error": message, "statement": sql}
    return {"ok": True, "error": None, "statement": None}


def start(spark: Any, key: str, statements: list[str]) -> str:
    """Run `statements` in order on a background thread; `wait_all` returns how it went."""
    global _executor
    with _lock:
        if key in _pending:
            raise ValueError(f"background statements {key!r} were started twice")
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="compliance-background")
        _pending[key] = _executor.submit(_run, spark, [str(sql) for sql in statements])
    return key


def wait_all(spark: Any) -> dict[str, dict[str, Any]]:
    """Wait for everything started so far: {key: {ok, error, statement}}."""
    with _lock:
        pending = dict(_pending)
        _pending.clear()
    return {key: future.result() for key, future in pending.items()}
