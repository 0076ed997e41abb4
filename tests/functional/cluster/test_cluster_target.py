"""The repo's `cluster` target (profiles.yml) as a user runs it: settings from the environment,
the catalog in the metastore service, executors doing the work, Python models in the driver."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, cluster_only

pytestmark = [cluster_only, pytest.mark.slow]

WHERE_IT_RUNS = """
import os


def model(dbt, spark):
    dbt.config(materialized="table")
    sc = spark.sparkContext
    # a job of 4 tasks: each reports the process it ran in
    task_pids = sorted(set(sc.parallelize(range(4), 4).map(lambda _: os.getpid()).collect()))
    return spark.createDataFrame(
        [(os.getpid(), sc.master, spark.conf.get("spark.hadoop.hive.metastore.uris"),
          spark.conf.get("spark.sql.catalogImplementation"), ",".join(map(str, task_pids)))],
        "driver_pid long, master string, metastore string, catalog string, task_pids string",
    )
"""


def test_the_cluster_target_runs_sql_and_python_models_on_the_cluster(tmp_path, spark):
    # a database survives in the metastore with the location it was created with: start afresh
    spark.sql("drop database if exists target_check cascade")
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: target_check\nversion: '1.0'\nconfig-version: 2\nprofile: lakehouse\n"
        "models:\n  target_check:\n    +file_format: parquet\n    +materialized: table\n"
    )
    (project / "models" / "where_it_runs.py").write_text(WHERE_IT_RUNS)
    (project / "models" / "squares.sql").write_text("select id, id * id as square from range(1000)")
    warehouse = tmp_path / "cluster-warehouse"
    env = {
        **os.environ,
        "DBT_TARGET": "cluster",
        "DBT_SCHEMA": "target_check",
        "SPARK_WAREHOUSE_DIR": f"file:{warehouse}",
        "SPARK_CORES_MAX": "1",
        "SPARK_DRIVER_MEMORY": "1g",
        "PYTHONPATH": str(REPO),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    env.pop("SPARK_METASTORE_DIR", None)
    result = subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), "--no-use-colors", "run", "--profiles-dir", str(REPO)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "target='cluster'" in out

    # another application (this test's session) sees both tables through the metastore service
    spark.catalog.refreshTable("target_check.squares")
    assert spark.table("target_check.squares").count() == 1000
    row = spark.table("target_check.where_it_runs").collect()[0]
    assert row.master == os.environ["SPARK_MASTER_URL"]
    assert row.metastore == os.environ["HIVE_METASTORE_URIS"]
    assert row.catalog == "hive"
    # the Python model ran in the driver; its tasks ran in executors, other processes
    task_pids = {int(p) for p in row.task_pids.split(",")}
    assert row.driver_pid not in task_pids and task_pids
    # the table's files are in SPARK_WAREHOUSE_DIR, and no embedded Derby was created anywhere
    assert list((warehouse / "target_check.db" / "squares").glob("*.parquet"))
    assert not (project / "metastore_db").exists() and not (project / "derby.log").exists()
    assert not (project / "spark-warehouse").exists()
    assert "Derby" not in out
    spark.sql("drop database if exists target_check cascade")


def metastore_sql(query: str) -> str:
    """One query of the cluster's metastore database (PostgreSQL), as the metastore's own user."""
    psql = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    port = os.environ.get("CLUSTER_PG_PORT", "5433")
    command = [psql, "-h", "127.0.0.1", "-p", port, "-U", "hive", "-d", "metastore", "-Atc", query]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def test_iceberg_commits_under_the_metastore_s_lock(spark):
    # the schema is Hive's own, made by its schematool at pyspark's Hive version, lock tables included
    assert metastore_sql('select "SCHEMA_VERSION" from "VERSION"') == "2.3.0"
    # the session keeps Iceberg's lock: it is turned off on an embedded Derby metastore only
    assert spark.conf.get("spark.sql.catalog.iceberg.hadoop.iceberg.engine.hive.lock-enabled", None) is None
    spark.sql("create database if not exists lock_check")
    spark.sql("drop table if exists iceberg.lock_check.t")
    before = int(metastore_sql("select nl_next from next_lock_id"))
    spark.sql(
        "create table iceberg.lock_check.t (id bigint) using iceberg tblproperties ('format-version' = '2')"
    )
    spark.sql("insert into iceberg.lock_check.t values (1), (2)")
    spark.sql("delete from iceberg.lock_check.t where id = 1")
    # each of the three commits took a lock of the table in the metastore, and gave it back
    assert int(metastore_sql("select nl_next from next_lock_id")) - before >= 3
    assert metastore_sql("select count(*) from hive_locks where hl_db = 'lock_check'") == "0"
    assert [r.id for r in spark.table("iceberg.lock_check.t").collect()] == [2]
    spark.sql("drop table iceberg.lock_check.t purge")
    spark.sql("drop database lock_check cascade")
