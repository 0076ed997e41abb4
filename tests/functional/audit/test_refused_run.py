"""A run refused by the warehouse lock writes nothing, and is recorded in dbt_invocations by the
next run (real processes)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, TEST_FS, beside_warehouse, local_only
from tests.functional.processes import HOLD_MODEL, dbt_process, environment, wait_for_lock, wait_until

PROJECT_YML = """
name: compliance
version: '1.0'
config-version: 2
profile: lakehouse
on-run-start: ["{{ compliance.audit_on_run_start() }}"]
on-run-end: ["{{ compliance.audit_on_run_end(results) }}"]
models:
  compliance:
    +file_format: parquet
    audit:
      +materialized: incremental
      +incremental_strategy: append
      +full_refresh: false
"""

# the third run loads the refusal in its on-run-start, then reads the audit table in-process
READ_BACK = textwrap.dedent(
    """
    import json, sys
    from dbt.cli.main import dbtRunner
    from pyspark.sql import SparkSession
    result = dbtRunner().invoke(["run", "--select", "hold", "--project-dir", sys.argv[1], "--profiles-dir", sys.argv[2]])
    rows = SparkSession.builder.getOrCreate().sql(
        "select invocation_id, command, status, message, loaded_from from procs.dbt_invocations"
    ).collect()
    print("AUDIT_ROWS " + json.dumps([r.asDict() for r in rows]))
    sys.exit(0 if result.success else 1)
    """
)


def tree(directory: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under `directory`: its size, modification time (ns) and content hash."""
    return {
        str(path.relative_to(directory)): (
            path.stat().st_size,
            path.stat().st_mtime_ns,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def make_project(root: Path) -> Path:
    project = root / "project"
    for folder in ("common", "audit"):
        shutil.copytree(REPO / "macros" / folder, project / "macros" / folder)
    shutil.copytree(REPO / "models" / "audit", project / "models" / "audit")
    (project / "dbt_project.yml").write_text(PROJECT_YML)
    (project / "models" / "hold.py").write_text(HOLD_MODEL)
    (project / "models" / "hold.yml").write_text(
        "version: 2\nmodels:\n  - name: hold\n    config:\n      hold_seconds: \"{{ env_var('HOLD_SECONDS', '0') }}\"\n"
    )
    return project


# its processes run the `local` target (flock, Derby): on the cluster the lease test covers refusals
@local_only
@pytest.mark.slow
def test_a_refused_run_appears_in_dbt_invocations(tmp_path):
    metastore = tmp_path / "ms"
    if TEST_FS == "file":
        warehouse = lock_dir = tmp_path / "wh"  # the run lock and the refusals in the warehouse
    else:  # on HDFS or S3: the warehouse there, the lock and the refusals beside the Derby metastore
        warehouse, lock_dir = beside_warehouse(f"refused-{tmp_path.name}"), tmp_path
    project = make_project(tmp_path)

    marker = tmp_path / "holding"

    def dbt(*args: str, hold: float = 0) -> subprocess.Popen:
        env = environment(warehouse, metastore, HOLD_SECONDS=str(hold), HOLD_MARKER=str(marker))
        return dbt_process(project, env, *args)

    first = dbt("run", "--select", "hold", hold=20)
    wait_for_lock(lock_dir, first.pid)
    # the first run is inside its model: its manifest and compiled code are written (whole: the
    # model runs after dbt wrote them), its run results are not yet
    target = project / "target"
    wait_until(marker.exists, "the first run's model")
    before = tree(target)
    first_manifest = json.loads((target / "manifest.json").read_text())["metadata"]["invocation_id"]
    second = dbt("run", "--select", "hold")
    out2, _ = second.communicate(timeout=120)
    assert second.returncode != 0 and "Another dbt run holds the warehouse" in out2, out2
    assert "Nothing was changed by this run" in out2
    # refused before parsing: the running command's target/ is as it wrote it, file for file
    assert first.poll() is None, "the first run ended before the refusal was checked"
    assert tree(target) == before
    assert json.loads((target / "manifest.json").read_text())["metadata"]["invocation_id"] == first_manifest
    records = list((lock_dir / ".dbt-refusals").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["pid"] == second.pid and f"pid {first.pid}" in record["holder"]
    out1, _ = first.communicate(timeout=300)
    assert first.returncode == 0, out1

    third = subprocess.run(
        [sys.executable, "-c", READ_BACK, str(project), str(REPO)],
        cwd=project,
        env=environment(warehouse, metastore, HOLD_SECONDS="0"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert third.returncode == 0, third.stdout + third.stderr
    line = next(x for x in third.stdout.splitlines() if x.startswith("AUDIT_ROWS "))
    rows = json.loads(line[len("AUDIT_ROWS ") :])
    refused = [r for r in rows if r["status"] == "refused"]
    assert len(refused) == 1
    assert refused[0]["invocation_id"] == record["invocation_id"]
    assert refused[0]["command"] == "run" and refused[0]["loaded_from"] == "refusal record"
    assert f"pid {first.pid}" in refused[0]["message"]
    # the first run is there too, and the record was consumed
    assert any(r["status"] == "success" and r["loaded_from"] == "on-run-end" for r in rows)
    assert not list((lock_dir / ".dbt-refusals").glob("*.json"))
