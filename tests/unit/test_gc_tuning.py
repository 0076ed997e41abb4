"""The adapter tunes Python's garbage collector when dbt loads it only when asked
(DBT_LAKEHOUSE_GC_TUNING=1, adapter gc_tuning.py); by default importing it changes nothing.  Each case is a fresh interpreter: the tuning is
process-wide and done once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = (
    "import gc, json; before = gc.get_threshold(); import dbt.adapters.lakehouse; "
    "print(json.dumps({'before': before, 'after': gc.get_threshold(), 'frozen': gc.get_freeze_count()}))"
)


def _probe(**env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_asked_for_loading_the_adapter_freezes_what_is_alive_and_raises_the_young_threshold() -> None:
    seen = _probe(DBT_LAKEHOUSE_GC_TUNING="1")
    assert seen["after"] == [10_000, seen["before"][1], seen["before"][2]]
    # dbt's and the adapter's modules are out of the collector's reach
    assert seen["frozen"] > 10_000


def test_by_default_importing_the_adapter_leaves_the_collector_alone() -> None:
    for value in ("", "0"):
        seen = _probe(DBT_LAKEHOUSE_GC_TUNING=value)
        assert seen["after"] == seen["before"]
        assert seen["frozen"] == 0
