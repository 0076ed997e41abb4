"""Shared fixtures: every functional test runs dbt in-process against one real Spark session.

The session (a JVM, about 10 s to start) lives for the whole pytest process, with its own
throwaway warehouse and Derby metastore under a temporary directory.  With
`LAKEHOUSE_TEST_TARGET=cluster` (`make test-cluster`) the same tests run as the `cluster` target:
the session is a driver of the standalone master `SPARK_MASTER_URL`, its catalog the metastore
service `HIVE_METASTORE_URIS`, its warehouse under `TEST_WAREHOUSE_ROOT` (which every executor
sees), and the run lock is the warehouse lease.  Test projects are built by dbt's own
`dbt.tests.fixtures.project`, with this repo's macros copied in, so a test exercises the real
macros and materializations.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]

# pytest-xdist hands out whole files (`--dist loadfile`) in the order collected (pyproject.toml's
# `--no-loadscope-reorder`): the longest go first, so that no worker is left alone with a long file
# at the end (its own order, by number of tests, put the one-test files of several minutes last and
# left one worker idle for 7 of 33 minutes).  Seconds of one run on two workers; a file not
# listed keeps its place after these.
LONGEST_FILES = {
    "tests/functional/adopt/test_host_project.py": 1414,
    "tests/faults/test_interrupt_purge.py": 950,
    "tests/faults/test_kill_erasure.py": 740,
    "tests/faults/test_kill_snapshot.py": 720,
    "tests/functional/erasure/test_erasure_requests.py": 556,
    "tests/faults/test_kill_restore.py": 465,
    "tests/faults/test_kill_purge.py": 441,
    "tests/faults/test_kill_retention.py": 435,
    "tests/faults/test_kill_compaction.py": 412,
    "tests/functional/erasure/test_copy_kinds.py": 373,
    "tests/functional/retention/test_retention_property.py": 358,
    "tests/functional/erasure/test_verify_erasure.py": 301,
    "tests/functional/audit/test_two_warehouses.py": 277,
    "tests/functional/purge/test_data_skipping.py": 199,
    "tests/functional/purge/test_engine.py": 136,
    "tests/functional/purge/test_hostile_input.py": 118,
    "tests/functional/audit/test_refused_run.py": 110,
    "tests/functional/erasure/test_ledger_property.py": 109,
    "tests/functional/retention/test_retention.py": 107,
    "tests/functional/erasure/test_count_too_low.py": 92,
    "tests/functional/erasure/test_exemptions.py": 91,
    "tests/functional/storage/test_every_capability.py": 87,
    "tests/functional/purge/test_purge_failures.py": 86,
    "tests/functional/foundation/test_processes.py": 84,
}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The process's own warehouse directory (its Derby metastore, its tables) goes when every test
    passed: each run, and each xdist worker, would otherwise leave one behind in the temp dir."""
    if not OWN_WAREHOUSE_ROOT or not WAREHOUSE_ROOT.exists():
        return
    if session.testsfailed or exitstatus not in (0, 5):  # 5: no test collected
        print(f"\nthe tests' warehouse is kept for a look: {WAREHOUSE_ROOT}")
        return
    if "pyspark" in sys.modules:  # the session's JVM holds the metastore's files open
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
    shutil.rmtree(WAREHOUSE_ROOT, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (a stable sort: each file's tests keep their order)."""
    items.sort(key=lambda item: -LONGEST_FILES.get(item.nodeid.split("::", 1)[0], 0))


REPO = Path(__file__).resolve().parents[1]
# Delta Lake in the tests' sessions, as `make` puts it in every session (the adapter adds its
# jars, extension and catalog: docs/formats.md); `make setup` resolves the jars
if (REPO / ".jars" / "formats").is_dir():
    os.environ.setdefault("LAKEHOUSE_DELTA_JARS", str(REPO / ".jars" / "formats"))
# a directory of this process's own unless TEST_WAREHOUSE_ROOT names one: removed when the session
# passes (pytest_sessionfinish), kept for a look when a test failed
OWN_WAREHOUSE_ROOT = not os.environ.get("TEST_WAREHOUSE_ROOT")
WAREHOUSE_ROOT = Path(os.environ.get("TEST_WAREHOUSE_ROOT") or tempfile.mkdtemp(prefix="dbt-lakehouse-test-"))
ON_CLUSTER = os.environ.get("LAKEHOUSE_TEST_TARGET", "local") == "cluster"
# The warehouse's filesystem: `file` (a local directory under WAREHOUSE_ROOT), or `hdfs` / `s3a`,
# a fresh directory under LAKEHOUSE_TEST_WAREHOUSE (`make test-hdfs` / `make test-s3` start the
# loopback HDFS or object store and set both).  The metastore stays under WAREHOUSE_ROOT.
TEST_FS = os.environ.get("LAKEHOUSE_TEST_FS", "file")
if TEST_FS == "file":
    WAREHOUSE = str(WAREHOUSE_ROOT / "warehouse")
else:
    WAREHOUSE = f"{os.environ['LAKEHOUSE_TEST_WAREHOUSE'].rstrip('/')}/{WAREHOUSE_ROOT.name}/warehouse"


def beside_warehouse(name: str) -> str:
    """A directory beside the warehouse on its filesystem (outside every table's roots), such as
    where retention reaps backups to: under WAREHOUSE_ROOT on the local disk."""
    return f"{WAREHOUSE.rsplit('/', 1)[0]}/{name}"


# dbt reads DBT_TARGET as its --target: the in-process tests' profile has one target, `default`
# (the processes that run the repo's `cluster` target set it for themselves)
os.environ.pop("DBT_TARGET", None)

local_only = pytest.mark.skipif(ON_CLUSTER, reason="exercises the local target (embedded Derby, flock)")
# what needs the warehouse on the local disk (a file:-only fault, such as a directory made unreadable)
local_disk_only = pytest.mark.skipif(TEST_FS != "file", reason=f"needs a local-disk warehouse, not {TEST_FS}")
cluster_only = pytest.mark.skipif(
    not ON_CLUSTER, reason="needs the cluster: make test-cluster (LAKEHOUSE_TEST_TARGET=cluster)"
)


def cluster_parameters(root: Path, app_name: str = "dbt-lakehouse-tests") -> dict[str, str]:
    """The `cluster` target's Spark settings for a warehouse under `root` (one executor core, so a
    second application, such as a concurrent reader, gets the other)."""
    return {
        "spark.master": os.environ["SPARK_MASTER_URL"],
        "spark.app.name": app_name,
        "spark.hadoop.hive.metastore.uris": os.environ["HIVE_METASTORE_URIS"],
        "spark.sql.warehouse.dir": WAREHOUSE if TEST_FS != "file" else f"file:{root / 'warehouse'}",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.memory": "2g",
        "spark.executor.memory": "1g",
        "spark.executor.cores": "1",
        "spark.cores.max": os.environ.get("SPARK_CORES_MAX", "1"),
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # Delta's state of a version in 2 tasks, not 50, and VACUUM's listing in 2, not 10,000:
        # the tests' tables hold a few files
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    }


def spark_parameters(root: Path) -> dict[str, str]:
    """The test target's Spark settings for a warehouse under `root` (`local` unless on the cluster)."""
    if ON_CLUSTER:
        return cluster_parameters(root)
    return {
        "spark.master": "local[2]",
        "spark.app.name": "dbt-lakehouse-tests",
        "spark.driver.memory": "3g",
        "spark.sql.warehouse.dir": WAREHOUSE if TEST_FS != "file" else str(root / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # Delta's state of a version in 2 tasks, not 50, and VACUUM's listing in 2, not 10,000:
        # the tests' tables hold a few files
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    }


def repo_files(*parts: str) -> dict[str, Any]:
    """A directory of this repo as the nested dict that dbt's project fixture writes out."""

    def walk(path: Path) -> dict[str, Any]:
        files: dict[str, Any] = {}
        for child in sorted(path.iterdir()):
            if child.name.startswith((".", "__")):
                continue
            files[child.name] = walk(child) if child.is_dir() else child.read_text()
        return files

    return walk(REPO.joinpath(*parts))


@pytest.fixture(scope="session")
def warehouse_root() -> Path:
    return WAREHOUSE_ROOT


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    return {
        "type": "lakehouse",
        "method": "session",
        "host": "localhost",
        "threads": 1,
        "server_side_parameters": spark_parameters(WAREHOUSE_ROOT),
    }


@pytest.fixture(scope="class")
def macros() -> dict[str, Any]:
    """The project's real macros, in every test project."""
    return repo_files("macros")


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {"name": "compliance", "models": {"compliance": {"+file_format": "parquet"}}}


def assertion_session() -> Any:
    """The process's SparkSession on the tests' warehouse (started when no dbt command has yet)."""
    from dbt.adapters.lakehouse.connections import session_parameters
    from dbt.adapters.lakehouse.driver import DRIVER

    return DRIVER.session(session_parameters(spark_parameters(WAREHOUSE_ROOT)))


@pytest.fixture(scope="session")
def spark():
    """The process's SparkSession, for assertions (starts it when no dbt command has yet)."""
    return assertion_session()
