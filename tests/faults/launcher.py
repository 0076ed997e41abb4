"""`dbt` with fault points: the dbt CLI, run in this process, that stops itself at a chosen step.

    python -m tests.faults.launcher run --select purge+ ...

The product is not changed.  Every *marker* this process produces is matched against the
environment's fault spec:

- every dbt event, as `event <EventType>: <message>`: the purge's `purge step <name>:` debug
  lines (`log(..., info=false)` in macros/purge/purge_table.sql), the SQL dbt logs for every
  `statement()` / `run_query` (`event SQLQuery: On <node>: <sql>`), node starts and ends;
- every call of a function of the project's `python_hooks` package (its filesystem module,
  `python_hooks.catalog.filesystem`, among them), as `call <module>.<function> <string
  arguments>`: the steps that log nothing (retention's drops and deletes, the catalog calls of
  the purge).

Environment:
- `FAULT_CENSUS=<file>`: append every marker to the file (one JSON line each), to list the steps;
- `FAULT_AT=<regex>` (matched with re.search, DOTALL), `FAULT_NTH=<n>` (default 1),
  `FAULT_HIT=<file>`: at the n-th matching marker, write the marker to `FAULT_HIT` and stop this
  process (SIGSTOP) before the step runs.  The harness, which watches for the file, then kills the
  whole process group (this process and its Spark JVM) with SIGKILL; or, with `FAULT_THEN=continue`,
  sends the group SIGINT (Ctrl-C) and lets it go on;
- `FAULT_AFTER=<regex>`: count only the markers after the first one matching it, so that a step
  several phases of a command take is hit in the phase it names (the audit's table writes: the
  on-run-start makes them too when an earlier command left something to load).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import pkgutil
import re
import signal
import sys
import time
from typing import Any

CENSUS = os.environ.get("FAULT_CENSUS")
AT = re.compile(os.environ["FAULT_AT"], re.DOTALL) if os.environ.get("FAULT_AT") else None
NTH = int(os.environ.get("FAULT_NTH") or 1)
HIT = os.environ.get("FAULT_HIT")
AFTER = re.compile(os.environ["FAULT_AFTER"], re.DOTALL) if os.environ.get("FAULT_AFTER") else None
_seen = {"markers": 0, "matches": 0, "armed": AFTER is None}


LEAVES = frozenset(
    f"python_hooks.catalog.{name}" for name in ("jvm", "scala", "partitions", "literals", "console")
)


def marker(text: str) -> None:
    """One step this process is about to take (or has just logged that it takes)."""
    _seen["markers"] += 1
    if CENSUS:
        with open(CENSUS, "a", encoding="utf-8") as out:
            out.write(json.dumps({"n": _seen["markers"], "marker": text[:4000]}) + "\n")
    if AT is None:
        return
    if not _seen["armed"]:
        _seen["armed"] = bool(AFTER is not None and AFTER.search(text))
        return
    if not AT.search(text):
        return
    _seen["matches"] += 1
    if _seen["matches"] != NTH:
        return
    if HIT:
        partial = HIT + ".part"
        with open(partial, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, HIT)
    # Frozen here until the harness kills the process group; if nobody does, die anyway, unless
    # the harness interrupts instead (FAULT_THEN=continue: it sent SIGINT, then SIGCONT)
    os.kill(os.getpid(), signal.SIGSTOP)
    if os.environ.get("FAULT_THEN") == "continue":
        return
    time.sleep(5)
    os.killpg(os.getpgid(0), signal.SIGKILL)


def _strings(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    parts = []
    for value in list(args) + list(kwargs.values()):
        try:
            shown = _string(value)
        except Exception:  # noqa: BLE001 - a marker never breaks the run (Jinja's Undefined raises on a look)
            continue
        if shown is not None:
            parts.append(shown)
    return " ".join(parts)


def _string(value: Any) -> str | None:
    """One argument as a marker shows it; None for what it does not show."""
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        try:
            return json.dumps(value, default=str)[:1000]
        except (TypeError, ValueError):
            return None
    if type(value).__module__.startswith("py4j"):
        return None  # a JVM object (a CatalogTable, a Path): its attributes are JVM calls
    if hasattr(value, "database") and hasattr(value, "name"):  # a metastore Table
        return f"{value.database}.{value.name}"
    return None


def _wrap(module: Any, wrapped: dict[Any, Any]) -> None:
    """Replace the module's own functions by wrappers that print a marker; `wrapped` gets
    original -> wrapper."""
    for name, function in list(vars(module).items()):
        if (
            not inspect.isfunction(function)
            or function.__module__ != module.__name__
            or name.startswith("__")
        ):
            continue
        if getattr(function, "__fault_wrapped__", False):
            continue

        def wrapper(
            *args: Any, __f: Any = function, __label: str = f"{module.__name__}.{name}", **kwargs: Any
        ) -> Any:
            marker(f"call {__label} {_strings(args[1:] if args and _is_session(args[0]) else args, kwargs)}")
            return __f(*args, **kwargs)

        functools.update_wrapper(wrapper, function)
        wrapper.__fault_wrapped__ = True  # type: ignore[attr-defined]
        setattr(module, name, wrapper)
        wrapped[function] = wrapper


def _is_session(value: Any) -> bool:
    return type(value).__name__ == "SparkSession"


def instrument() -> None:
    """Markers for dbt's events and for the calls of the project's Python."""
    from dbt_common.events.event_manager import EventManager

    original = EventManager.fire_event

    def fire_event(self: Any, e: Any, *args: Any, **kwargs: Any) -> None:
        original(self, e, *args, **kwargs)
        try:
            text = e.message()
        except Exception:  # noqa: BLE001 - a marker never breaks the run
            text = ""
        marker(f"event {type(e).__name__}: {text}")

    EventManager.fire_event = fire_event  # type: ignore[method-assign]

    import python_hooks

    modules, wrapped = [], {}
    for info in pkgutil.walk_packages(python_hooks.__path__, "python_hooks."):
        try:
            modules.append(importlib.import_module(info.name))
        except Exception:  # noqa: BLE001 - a module that does not import here is not called either
            continue
    for module in modules:
        _wrap(module, wrapped)
    # a module that imported a function by name (`from .records import append`) before it was
    # wrapped holds the original: give it the wrapper, whatever the import order; not the JVM and
    # spec helpers, called thousands of times a run and never a step to stop at
    for module in modules:
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and value in wrapped and value.__module__ not in LEAVES:
                setattr(module, name, wrapped[value])


def main() -> int:
    instrument()
    from dbt.cli.main import cli

    sys.argv = ["dbt", *sys.argv[1:]]
    return cli()


if __name__ == "__main__":
    sys.exit(main())
