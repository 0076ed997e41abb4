"""`dbt build` of the demo project, the product installed in it as a package, as a user runs it.

A process of its own (`dbt deps`, then `dbt build` on a throwaway warehouse and metastore), run by
`make dbt-build` after the suite (`make test` leaves it out of its workers: a third JVM beside
them on two cores slowed every test).  Then the project checks (tools/manifest_checks.py: descriptions,
tests, no hard-coded tables) over the manifest it wrote, for both packages.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ON_CLUSTER, REPO
from tests.functional.processes import DBT
from tools.manifest_checks import check_manifest

DEMO = REPO / "demo"


@pytest.mark.skipif(ON_CLUSTER, reason="the demo's build is the local target's")
def test_the_demo_builds_whole_and_its_plain_build_deletes_nothing(tmp_path: Path) -> None:
    # the environment of `make dbt-build`: the repo's profile, its `local` target and default
    # schema (the demo's coverage exceptions name `lakehouse.*`), a warehouse of its own
    env = {
        k: v for k, v in os.environ.items() if k not in ("DBT_SCHEMA", "DBT_TARGET", "SPARK_DRIVER_MEMORY")
    }
    env.update(
        DBT_PROFILES_DIR=str(REPO),
        SPARK_WAREHOUSE_DIR=str(tmp_path / "warehouse"),
        SPARK_METASTORE_DIR=str(tmp_path / "metastore_db"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    logs = ["--log-path", str(tmp_path / "logs")]
    deps = subprocess.run([DBT, "deps", *logs], cwd=DEMO, env=env, capture_output=True, text=True)
    assert deps.returncode == 0, deps.stdout[-3000:] + deps.stderr[-3000:]

    build = subprocess.run(
        [DBT, "build", "--target-path", str(tmp_path / "target"), *logs],
        cwd=DEMO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout[-6000:]
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    statuses = {result["unique_id"]: result["status"] for result in results}
    assert {status for status in statuses.values()} <= {"success", "pass"}, {
        node: status for node, status in statuses.items() if status not in ("success", "pass")
    }
    built = {node.split(".")[1] for node in statuses if node.startswith("model.")}
    assert built >= {"compliance", "compliance_demo"}, built
    assert "model.compliance.purge" in statuses and "model.compliance.erasure_requests" in statuses
    # a build that does not name the purge only plans it, and says which command deletes
    assert "dbt run --select purge+" in build.stdout, build.stdout[-3000:]

    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text())
    for package in ("compliance", "compliance_demo"):
        assert [str(finding) for finding in check_manifest(manifest, package)] == [], package
