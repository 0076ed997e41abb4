"""SQL statements that run in the background of a macro while it goes on, then are waited for.

Jinja has no threads.  The purge records the old locations of the partitions it swapped (one
parquet file appended to `stale_data_records`, or a small Spark write, about 0.1 s, where that
cannot be done) while it moves on to the next table and
writes its results, and waits for every such write before the node ends (and, for any write a
failed node left behind, when the next purge node starts):

    adapter.python_hook('python_hooks.catalog.background:start', key=..., statements=[...])
    adapter.python_hook('python_hooks.catalog.background:wait_all')   # {key: {ok, error, statement}}

Everything runs on one background thread, in the order started: two appends to one table must
not run at once (they would share its `_temporary` directory), and the thread only has to keep
up with the node.  Spark runs its jobs alongside the node's own.  Nothing here raises: a failed
statement stops its key and is reported by `wait_all`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from python_hooks.catalog import tables
from python_hooks.errors import result

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pending: dict[str, Future] = {}


def _append(spark: Any, append: dict[str, Any]) -> bool:
    """`append`'s rows as one parquet file, without a Spark job (catalog.parquet_append).

    `append`: {database, table, columns, invocation_id, rows}; each row holds the values of
    `columns` after the first two, which are `recorded_at` (now) and `invocation_id`.  False,
    having written nothing, when the table is missing, laid out otherwise, or not one that
    parquet_append writes: the caller then runs its statements.
    """
    from datetime import datetime, timezone

    from python_hooks.catalog import metastore, parquet_append

    try:
        catalog = metastore.session_catalog(spark)
        ident = metastore.identifier(spark, append["database"], append["table"])
        if not catalog.tableExists(ident):
            return False
        meta = catalog.getTableMetadata(ident)
        fields = metastore.schema_fields(meta)
        if [str(f["name"]).lower() for f in fields] != [c.lower() for c in append["columns"]]:
            return False
        now = datetime.now(timezone.utc)
        rows = [(now, append["invocation_id"], *row) for row in append["rows"]]
        return parquet_append.append_rows(spark, meta, fields, rows)
    except Exception:  # noqa: BLE001 - nothing visible was written: the statements write the rows
        return False


def _run(spark: Any, statements: list[str], append: dict[str, Any] | None = None) -> dict[str, Any]:
    if append is not None and _append(spark, append):
        return result(statement=None)
    for sql in statements:
        try:
            spark.sql(sql).collect()
        except Exception as exc:  # noqa: BLE001 - reported to whoever waits
            return result(exc, statement=sql)
    return result(statement=None)


def start(spark: Any, key: str, statements: list[str], append: dict[str, Any] | None = None) -> str:
    """Run `statements` in order on a background thread; `wait_all` returns how it went.

    With `append` (see `_append`), the rows are first written as one parquet file without a
    Spark job, and the statements (which write the same rows) run only when that cannot be done.
    """
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compliance-background")
        unique, number = key, 1
        while unique in _pending:
            number += 1
            unique = f"{key} ({number})"
        _pending[unique] = _executor.submit(_run, spark, [str(sql) for sql in statements], append)
    return unique


def wait_all(spark: Any) -> dict[str, dict[str, Any]]:
    """Wait for everything started so far: {key: {ok, error, statement}}."""
    with _lock:
        pending = dict(_pending)
        _pending.clear()
    return {key: future.result() for key, future in pending.items()}


# ---- queries read ahead: the purge's per-table scans, several at a time ----------------------
_read_ahead: dict[str, Future] = {}
_read_ahead_executor: ThreadPoolExecutor | None = None


def read_ahead(spark: Any, queries: dict[str, str], workers: int) -> int:
    """Start `queries` ({key: sql}, small results) on `workers` threads, in the order given.

    The purge reads ahead the id scans of the tables it has not reached yet, so that Spark runs
    them while the node works on the current table (and several at once, where each is a small
    job): a scan's fixed cost (planning, job start, file listing) overlaps with the others' work.
    Returns how many were started.  `collect(key)` waits for one.
    """
    return read_ahead_calls(
        {key: (tables.execute, (spark, str(sql))) for key, sql in queries.items()}, workers
    )


def read_ahead_calls(calls: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]], workers: int) -> int:
    """`read_ahead` for calls ({key: (function, args)}, each returning {ok, error, ...} and never
    raising): the purge's scans, which read the files' footers before their query."""
    global _read_ahead_executor
    with _lock:
        if _read_ahead_executor is None or getattr(_read_ahead_executor, "_max_workers", 0) != workers:
            if _read_ahead_executor is not None:
                _read_ahead_executor.shutdown(wait=True)
            _read_ahead_executor = ThreadPoolExecutor(
                max_workers=max(1, workers), thread_name_prefix="compliance-read-ahead"
            )
        for key, (function, args) in calls.items():
            _read_ahead[key] = _read_ahead_executor.submit(function, *args)
    return len(calls)


_call_executor: ThreadPoolExecutor | None = None


def call_ahead(key: str, function: Callable[..., dict[str, Any]], *args: Any) -> str:
    """Run `function(*args)` (which returns {ok, error, ...} and never raises) on a thread of its
    own while the macro goes on; `collect(key)` waits for it and returns what it returned, and
    `forget_read_ahead` waits for it too if nobody collected it.  The purge copies the files
    without listed ids, and makes its backup (`statements_ahead`), this way while its rewrite
    runs."""
    global _call_executor
    with _lock:
        if _call_executor is None:
            # the purge's backup statements and its file copies run at once: they touch nothing in common
            _call_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="compliance-call")
        _read_ahead[key] = _call_executor.submit(function, *args)
    return key


def statements_ahead(spark: Any, key: str, steps: list[dict[str, str]]) -> str:
    """Run `steps` ([{name, sql}]) in order on the call thread (`call_ahead`), stopping at the
    first that fails; `collect(key)` gives {ok, error, step, done}: `step` the one that failed,
    `done` the names of those that ran.  The purge makes its backup table and backup partitions
    this way while its rewrite runs."""
    return call_ahead(key, _run_steps, spark, [{"name": str(s["name"]), "sql": str(s["sql"])} for s in steps])


def _run_steps(spark: Any, steps: list[dict[str, str]]) -> dict[str, Any]:
    done: list[str] = []
    for step in steps:
        outcome = tables.execute(spark, step["sql"])
        if not outcome["ok"]:
            return result(outcome["error"], step=step["name"], done=done)
        done.append(step["name"])
    return result(step=None, done=done)


def collect(spark: Any, key: str) -> dict[str, Any] | None:
    """The result of a query read ahead ({ok, error, rows}) or of a `call_ahead`, waiting for it;
    None when none was started."""
    with _lock:
        future = _read_ahead.pop(key, None)
    return future.result() if future is not None else None


def forget_read_ahead(spark: Any) -> int:
    """Wait for and drop every query read ahead that nobody collected (a node that stopped early)."""
    with _lock:
        pending = list(_read_ahead.values())
        _read_ahead.clear()
    for future in pending:
        future.result()
    return len(pending)
