"""Two targets, two warehouses, one project directory: each warehouse's dbt_invocations holds
exactly the commands started against it, each once, with its true status (real processes, one
of them killed with SIGKILL, one stopped with SIGINT, two of them at once).

The two targets share `target/` (run_results.json, the hooks' files), as a `dev` and a `prod`
target of one project do: what the audit adopts from it must be what ran on its own warehouse.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import local_only
from tests.functional.audit.test_refused_run import make_project
from tests.functional.processes import DBT, environment, wait_until

TARGET = """
      type: lakehouse
      method: session
      host: localhost
      schema: procs
      threads: 1
      server_side_parameters:
        spark.master: "local[1]"
        spark.driver.memory: 1g
        spark.sql.warehouse.dir: "{warehouse}"
        spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={metastore};create=true"
        spark.sql.shuffle.partitions: "2"
"""

# the last command of a warehouse runs in-process, then reads its dbt_invocations
READ_BACK = textwrap.dedent(
    """
    import json, sys
    from dbt.cli.main import dbtRunner
    from pyspark.sql import SparkSession
    args = ["run", "--no-partial-parse", "--select", "hold", "--target", sys.argv[2]]
    args += ["--project-dir", sys.argv[1], "--profiles-dir", sys.argv[1]]
    result = dbtRunner().invoke(args)
    rows = SparkSession.builder.getOrCreate().sql(
        "select invocation_id, status, target_name, loaded_from from procs.dbt_invocations"
    ).collect()
    print("AUDIT_ROWS " + json.dumps([r.asDict() for r in rows]))
    sys.exit(0 if result.success else 1)
    """
)


def write_profiles(project: Path, root: Path) -> dict[str, Path]:
    """profiles.yml with a `dev` and a `prod` target, each its own warehouse and Derby metastore."""
    warehouses = {name: root / f"wh-{name}" for name in ("dev", "prod")}
    outputs = "".join(
        f"    {name}:{TARGET.format(warehouse=warehouse, metastore=root / f'ms-{name}')}"
        for name, warehouse in warehouses.items()
    )
    (project / "profiles.yml").write_text(f"lakehouse:\n  target: dev\n  outputs:\n{outputs}")
    return warehouses


class Commands:
    """dbt processes on one project directory; each command's invocation id, from its run record."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.started: dict[str, list[str]] = {"dev": [], "prod": []}  # invocation ids, per target
        self.runs = project / "target" / "_audit_runs"

    def _record(self, target: str, known: set[str], phase: str) -> str | None:
        for path in self.runs.glob("*.json") if self.runs.is_dir() else []:
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            ours = f"wh-{target}" in str((record.get("warehouse") or {}).get("warehouse"))
            if ours and record["invocation_id"] not in known and record.get("phase") in phase:
                return str(record["invocation_id"])
        return None

    def start(self, target: str, hold: float) -> subprocess.Popen:
        env = {**self.env, "HOLD_SECONDS": str(hold)}
        # no partial parsing: the hold time is an env var in a yml config, which it keeps
        args = ["run", "--no-partial-parse", "--select", "hold", "--target", target]
        return subprocess.Popen(
            [
                DBT,
                "--no-use-colors",
                *args,
                "--profiles-dir",
                str(self.project),
                "--project-dir",
                str(self.project),
            ],
            cwd=self.project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, with its Spark JVM: killed together
        )

    def running(self, target: str) -> str:
        """The invocation id of the new command of `target`, once its on-run-start has run."""
        known = {i for ids in self.started.values() for i in ids}
        found = wait_until(
            lambda: self._record(target, known, "running ended"), f"a {target} command running", 240
        )
        self.started[target].append(found)
        return found

    def read_back(self, target: str) -> list[dict[str, str]]:
        known = {i for ids in self.started.values() for i in ids}
        done = subprocess.run(
            [sys.executable, "-c", READ_BACK, str(self.project), target],
            cwd=self.project,
            env={**self.env, "HOLD_SECONDS": "0"},
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        last = self._record(target, known, "ended")
        assert last, f"the last {target} command left no run record"
        self.started[target].append(last)
        line = next(x for x in done.stdout.splitlines() if x.startswith("AUDIT_ROWS "))
        return json.loads(line[len("AUDIT_ROWS ") :])


def finish(process: subprocess.Popen, expect_success: bool | None = True) -> str:
    out, _ = process.communicate(timeout=400)
    if expect_success is not None:
        assert (process.returncode == 0) == expect_success, out
    return out


@local_only
@pytest.mark.slow
def test_each_warehouse_records_exactly_its_own_commands(tmp_path):
    project = make_project(tmp_path)
    write_profiles(project, tmp_path)
    env = environment(tmp_path / "unused-wh", tmp_path / "unused-ms")
    commands = Commands(project, env)

    first = commands.start("dev", hold=0)
    commands.running("dev")
    finish(first)
    # a dev command killed after its on-run-start while a prod command runs at once on the other
    # warehouse (both write the one target/)
    beside = commands.start("prod", hold=0)
    killed = commands.start("dev", hold=300)
    killed_id = commands.running("dev")
    os.killpg(killed.pid, signal.SIGKILL)  # dbt and its JVM, as a lost host
    finish(killed, expect_success=None)
    assert killed.returncode == -signal.SIGKILL
    commands.running("prod")
    finish(beside)
    # a prod command stopped with Ctrl-C inside its model: its on-run-end records `cancelled`
    stopped = commands.start("prod", hold=15)
    stopped_id = commands.running("prod")
    os.killpg(stopped.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the process group
    out = finish(stopped, expect_success=None)
    assert "SIGINT: cancelling" in out, out
    # run_results.json is now the cancelled prod command's: the next dev command must not adopt it
    assert json.loads((project / "target" / "run_results.json").read_text())["metadata"]["invocation_id"] == (
        stopped_id
    )
    dev_rows = commands.read_back("dev")
    prod_rows = commands.read_back("prod")

    dev = {r["invocation_id"]: r for r in dev_rows}
    prod = {r["invocation_id"]: r for r in prod_rows}
    assert sorted(r["invocation_id"] for r in dev_rows) == sorted(commands.started["dev"]), dev_rows
    assert sorted(r["invocation_id"] for r in prod_rows) == sorted(commands.started["prod"]), prod_rows
    assert {i: r["status"] for i, r in dev.items()} == {
        commands.started["dev"][0]: "success",
        killed_id: "interrupted",
        commands.started["dev"][2]: "success",
    }
    assert (dev[killed_id]["loaded_from"], dev[killed_id]["target_name"]) == ("run record", "dev")
    assert {i: r["status"] for i, r in prod.items()} == {
        commands.started["prod"][0]: "success",
        stopped_id: "cancelled",
        commands.started["prod"][2]: "success",
    }
    assert prod[stopped_id]["loaded_from"] == "on-run-end"
    assert {r["target_name"] for r in dev_rows} == {"dev"} and {r["target_name"] for r in prod_rows} == {
        "prod"
    }
