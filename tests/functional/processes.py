"""Real dbt processes against a warehouse of their own, for the tests that need more than one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import REPO

DBT = str(Path(sys.executable).parent / "dbt")

# A Python model that holds the warehouse for env HOLD_SECONDS, or its `hold_seconds` config.
# The env var is read by the model itself (it runs in the dbt process): a yml config that renders
# `env_var('HOLD_SECONDS')` never reached the model's `dbt.config.get` (its compiled config_dict
# was empty, and the model held for 0 s), which left the tests that need a command to wait
# depending on timing.
HOLD_MODEL = """
import os
import time


def model(dbt, spark):
    dbt.config(materialized="table")
    if os.environ.get("HOLD_MARKER"):  # the model runs: dbt wrote its compiled code before it
        open(os.environ["HOLD_MARKER"], "w").close()
    time.sleep(float(os.environ.get("HOLD_SECONDS") or dbt.config.get("hold_seconds") or 0))
    return spark.range(3)
"""


def environment(warehouse: Path | str, metastore: Path, **extra: str) -> dict[str, str]:
    """The `local` target of the repo's profiles.yml, on this warehouse and metastore."""
    env = {
        **os.environ,
        "SPARK_WAREHOUSE_DIR": str(warehouse),
        "SPARK_METASTORE_DIR": str(metastore),
        "SPARK_DRIVER_MEMORY": "1g",
        "DBT_SCHEMA": "procs",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "PYTHONPATH": str(REPO),
        **extra,
    }
    env.pop("DBT_PROFILES_DIR", None)
    return env


def dbt_process(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [DBT, "--no-use-colors", *args, "--profiles-dir", str(REPO), "--project-dir", str(project)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_until(condition: Callable[[], Any], what: str, timeout: float = 120, poll: float = 0.1) -> Any:
    """Poll `condition` until it returns something true (returned); fail naming `what` after
    `timeout` seconds.  Tests wait on what they can observe, never for a fixed time."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(poll)


def wait_for_lock(warehouse: Path, pid: int, timeout: float = 90) -> None:
    """Wait until process `pid` holds the warehouse's run lock."""
    lock = warehouse / ".dbt-run.lock"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if json.loads(lock.read_text() or "{}").get("pid") == pid:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"process {pid} never took the run lock {lock}")
