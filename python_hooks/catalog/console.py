"""Lines for the person running dbt, from Python: the same events Jinja's `log()` and
`exceptions.warn()` fire, so they look the same, reach dbt.log, and carry the node's info.

Outside a dbt process (a script, a test of a module) they are printed.
"""

from __future__ import annotations

import sys


def _fire(level: str, message: str) -> None:
    try:
        from dbt.events.types import JinjaLogDebug, JinjaLogInfo, JinjaLogWarning
        from dbt_common.events.contextvars import get_node_info
        from dbt_common.events.functions import fire_event, warn_or_error
    except ImportError:  # not in a dbt process
        if level != "debug":
            print(message, file=sys.stderr)
        return
    if level == "info":
        fire_event(JinjaLogInfo(msg=message, node_info=get_node_info()))
    elif level == "warn":
        warn_or_error(JinjaLogWarning(msg=message, node_info=get_node_info()))
    else:
        fire_event(JinjaLogDebug(msg=message, node_info=get_node_info()))


def say(message: str) -> None:
    """A line on the console and in dbt.log (Jinja's `log(..., info=true)`)."""
    _fire("info", message)


def debug(message: str) -> None:
    """A line in dbt.log only (Jinja's `log(...)`)."""
    _fire("debug", message)


def warn(message: str) -> None:
    """A warning (Jinja's `exceptions.warn`): an error under `--warn-error`."""
    _fire("warn", message)
