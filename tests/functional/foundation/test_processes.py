"""Real dbt processes: the profile's environment variables, and one run per warehouse."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

DBT = str(Path(sys.executable).parent / "dbt")

HOLD_MODEL = """
import time


def model(dbt, spark):
    dbt.config(materialized="table")
    time.sleep(float(dbt.config.get("hold_seconds") or 0))
    return spark.range(3)
"""


def make_project(root: Path, hold_seconds: float) -> Path:
    project = root / "project"
    (project / "models").mkdir(parents=True, exist_ok=True)
    (project / "dbt_project.yml").write_text(
        "name: procs\nversion: '1.0'\nconfig-version: 2\nprofile: lakehouse\n"
        "models:\n  procs:\n    +file_format: parquet\n"
    )
    (project / "models" / "hold.py").write_text(HOLD_MODEL)
    (project / "models" / "hold.yml").write_text(
        f"version: 2\nmodels:\n  - name: hold\n    config:\n      hold_seconds: {hold_seconds}\n"
    )
    return project


def dbt_process(project: Path, warehouse: Path, metastore: Path, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "SPARK_WAREHOUSE_DIR": str(warehouse),
        "SPARK_METASTORE_DIR": str(metastore),
        "SPARK_DRIVER_MEMORY": "1g",
        "DBT_SCHEMA": "procs",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    env.pop("DBT_PROFILES_DIR", None)
    return subprocess.Popen(
        [DBT, "--no-use-colors", *args, "--profiles-dir", str(REPO), "--project-dir", str(project)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_lock(warehouse: Path, pid: int, timeout: float = 60) -> None:
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


@pytest.mark.slow
def test_profile_honours_environment_and_refuses_a_concurrent_run(tmp_path):
    warehouse, metastore = tmp_path / "wh", tmp_path / "ms"
    project = make_project(tmp_path, hold_seconds=12)

    first = dbt_process(project, warehouse, metastore, "run")
    wait_for_lock(warehouse, first.pid)

    started = time.time()
    second = dbt_process(project, warehouse, metastore, "run")
    out2, _ = second.communicate(timeout=120)
    refused_in = time.time() - started
    assert second.returncode != 0
    assert "Another dbt run holds the warehouse" in out2, out2
    assert f"pid {first.pid}" in out2
    assert "XJ040" not in out2 and "Another instance of Derby" not in out2
    assert refused_in < 30, f"the refusal took {refused_in:.0f}s"

    out1, _ = first.communicate(timeout=300)
    assert first.returncode == 0, out1
    assert "1 of 1 OK created python table model procs.hold" in out1

    # both environment variables were honoured: the table's files and the Derby database are there
    assert (warehouse / "procs.db" / "hold").is_dir()
    assert (metastore / "service.properties").is_file()
    assert (tmp_path / "derby.log").is_file() or (metastore.parent / "derby.log").is_file()
    assert not (project / "derby.log").exists() and not (project / "spark-warehouse").exists()
    assert not (project / "metastore_db").exists()


@pytest.mark.slow
def test_a_killed_run_does_not_block_the_next(tmp_path):
    warehouse, metastore = tmp_path / "wh", tmp_path / "ms"
    project = make_project(tmp_path, hold_seconds=120)
    victim = dbt_process(project, warehouse, metastore, "run")
    wait_for_lock(warehouse, victim.pid)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=60)

    (project / "models" / "hold.yml").write_text("version: 2\nmodels:\n  - name: hold\n")
    nxt = dbt_process(project, warehouse, metastore, "run")
    out, _ = nxt.communicate(timeout=300)
    assert nxt.returncode == 0, out
    assert "1 of 1 OK created python table model procs.hold" in out
