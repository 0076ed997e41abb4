"""Import what the on-run-end load needs while the command's models run, not after them.

pyarrow's parquet writer and JSON reader (the audit tables' files), sqlglot (column lineage) and
the OpenLineage client cost about 0.3 s to import.  on-run-start starts one daemon thread that
imports them while the models run: the process waits on Spark then, so the thread costs the
command little, and on-run-end finds them imported.  on-run-end joins the thread before it
imports anything itself, so the two never import at the same time.  A failure here changes nothing: the load
imports what it needs as before.
"""

from __future__ import annotations

import threading

_thread: threading.Thread | None = None


def _import_all() -> None:
    try:
        import pyarrow.json
        import pyarrow.parquet  # noqa: F401

        from python_hooks.audit import lineage, openlineage_export, workflow_graph  # noqa: F401
    except Exception:  # the load imports what it needs itself
        return


def start() -> None:
    """Start the imports in the background (once per process)."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_import_all, name="audit-warmup", daemon=True)
        _thread.start()


def wait(timeout: float = 60.0) -> None:
    """Let the background imports finish before the caller imports anything."""
    if _thread is not None:
        _thread.join(timeout)
