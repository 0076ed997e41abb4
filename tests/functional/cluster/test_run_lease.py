"""One run per warehouse across drivers: two dbt processes that share nothing but the cluster
(the metastore service and the warehouse) and the lease file on the warehouse's filesystem."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cluster_only
from tests.functional.processes import wait_until

# holds the warehouse for HOLD_SECONDS (Python models run in the driver, which has the environment)
HOLD_MODEL = """
import os
import time


def model(dbt, spark):
    dbt.config(materialized="table")
    time.sleep(float(os.environ.get("HOLD_SECONDS") or 0))
    return spark.range(3)
"""

pytestmark = [cluster_only, pytest.mark.slow]

TTL = 8


def make_project(root: Path, name: str) -> Path:
    project = root / name
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: procs\nversion: '1.0'\nconfig-version: 2\nprofile: lakehouse\n"
        "models:\n  procs:\n    +file_format: parquet\n"
    )
    (project / "models" / "hold.py").write_text(HOLD_MODEL)
    return project


def driver(project: Path, warehouse: Path, hold_seconds: float = 0) -> subprocess.Popen:
    """A dbt driver of its own (its own process group, JVM, project and target directory)."""
    env = {
        **os.environ,
        "DBT_TARGET": "cluster",
        "SPARK_WAREHOUSE_DIR": f"file:{warehouse}",
        "DBT_SCHEMA": "lease_procs",
        "SPARK_CORES_MAX": "1",
        "SPARK_DRIVER_MEMORY": "1g",
        "DBT_LAKEHOUSE_LEASE_SECONDS": str(TTL),
        "HOLD_SECONDS": str(hold_seconds),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "PYTHONPATH": str(REPO),
    }
    env.pop("DBT_PROFILES_DIR", None)
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dbt"),
            "--no-use-colors",
            "run",
            "--profiles-dir",
            str(REPO),
            "--project-dir",
            str(project),
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def lease_of(warehouse: Path) -> dict:
    try:
        return json.loads((warehouse / ".dbt-run.lease").read_text() or "{}")
    except (OSError, ValueError):
        return {}


def wait_for_lease(warehouse: Path, process: subprocess.Popen, timeout: float = 180) -> None:
    def taken() -> bool:
        assert process.poll() is None, process.communicate()[0][-4000:]
        return lease_of(warehouse).get("pid") == process.pid

    wait_until(taken, f"process {process.pid} to take the lease", timeout=timeout, poll=0.3)


def test_a_second_driver_is_refused_and_a_killed_holders_lease_expires(tmp_path, spark):
    spark.sql("drop database if exists lease_procs cascade")
    warehouse = tmp_path / "shared-warehouse"
    lease = warehouse / ".dbt-run.lease"
    holder = driver(make_project(tmp_path, "first"), warehouse, hold_seconds=300)
    try:
        wait_for_lease(warehouse, holder)

        refused = driver(make_project(tmp_path, "second"), warehouse)
        out, _ = refused.communicate(timeout=300)
        assert refused.returncode != 0, out
        assert "Another dbt run holds the warehouse" in out, out
        assert f"pid {holder.pid}" in out and "lease renewed" in out, out
        assert "Nothing was changed by this run" in out

        # the holder renews: its heartbeat carries the lease's time past the ttl, and it stays its own
        stamp = lease.stat().st_mtime
        wait_until(
            lambda: lease.stat().st_mtime >= stamp + TTL, "the holder to renew past the ttl", timeout=TTL * 6
        )
        assert lease_of(warehouse)["pid"] == holder.pid

        # the holder's host dies: the driver and its JVM, at once, without releasing anything
        os.killpg(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=60)
        assert lease_of(warehouse)["pid"] == holder.pid  # the file stays behind
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.communicate()

    # a successor that starts while the dead holder's lease is fresh is refused (shown above);
    # once the lease has gone unrenewed for longer than the ttl, the next driver takes it over
    wait_until(
        lambda: time.time() - lease.stat().st_mtime > TTL + 1, "the dead holder's lease to expire", poll=0.5
    )
    successor = driver(make_project(tmp_path, "third"), warehouse)
    out, _ = successor.communicate(timeout=300)
    assert successor.returncode == 0, out
    assert "Took over the expired run lease" in out and f"pid {holder.pid}" in out, out
    # not before the dead holder's lease expired
    assert int(re.search(r"not renewed for (\d+)s", out).group(1)) >= TTL, out
    assert "1 of 1 OK created python table model lease_procs.hold" in out
    spark.catalog.refreshTable("lease_procs.hold")
    assert spark.table("lease_procs.hold").count() == 3
    assert not lease.exists()  # released when the successor exited
    spark.sql("drop database if exists lease_procs cascade")
