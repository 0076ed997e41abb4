"""Real dbt processes: the profile's environment variables, and one run per warehouse."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.functional.processes import HOLD_MODEL, dbt_process, environment, wait_for_lock, wait_until


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


def start(project: Path, warehouse: Path, metastore: Path, *args: str) -> subprocess.Popen:
    return dbt_process(project, environment(warehouse, metastore), *args)


@pytest.mark.slow
def test_profile_honours_environment_and_refuses_a_concurrent_run(tmp_path):
    warehouse, metastore = tmp_path / "wh", tmp_path / "ms"
    project = make_project(tmp_path, hold_seconds=12)

    first = start(project, warehouse, metastore, "run")
    wait_for_lock(warehouse, first.pid)

    started = time.time()
    second = start(project, warehouse, metastore, "run")
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
    victim = start(project, warehouse, metastore, "run")
    wait_for_lock(warehouse, victim.pid)
    # the lock is taken before dbt parses: kill it once its Spark session has booted Derby
    wait_until(lambda: (metastore / "service.properties").is_file(), "the victim's metastore")
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=60)

    (project / "models" / "hold.yml").write_text("version: 2\nmodels:\n  - name: hold\n")
    nxt = start(project, warehouse, metastore, "run")
    out, _ = nxt.communicate(timeout=300)
    assert nxt.returncode == 0, out
    assert "1 of 1 OK created python table model procs.hold" in out
