"""Readers never break: a second Spark application reads every purged table while the purge runs.

The purge (`dbt run --select purge+`, the product's own project, a driver of its own on the
cluster) and the reader (another application on the same metastore, tests/functional/cluster/
reader.py) share nothing but the cluster.  Every query of the reader must succeed, and each
partition it reads must hold either all of its old rows or all of its new rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from tests.conftest import REPO, TEST_FS, WAREHOUSE_ROOT, beside_warehouse, cluster_only
from tests.functional.cluster.reader import scans

pytestmark = [cluster_only, pytest.mark.slow]

DB, IDS = "rd_data", "rd_ids.ids"
DESCRIPTOR = '{"complianceSpec": {"identifierField": "%s"}}'
# table -> (partition columns, identifier)
TABLES = {
    f"{DB}.events": (["ds"], "metadata.guestid"),
    f"{DB}.hours": (["ds", "hr"], "guestid"),
    f"{DB}.flat": ([], "guestid"),
}


def build_tables(spark) -> None:
    for database in (DB, "rd_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {DB}.events (metadata struct<guestid: bigint, note: string>, payload string)
        partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "metadata.guestid"}')""")
    spark.sql(f"""
        insert into {DB}.events partition (ds)
        select named_struct('guestid', id, 'note', concat('n', id % 13)), repeat('x', 30),
               concat('2030-01-0', cast(id % 6 + 1 as string))
        from range(30000)""")
    spark.sql(f"""
        create table {DB}.hours (guestid bigint, payload string) partitioned by (ds string, hr int)
        stored as orc tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "guestid"}')""")
    spark.sql(f"""
        insert into {DB}.hours partition (ds, hr)
        select id, repeat('y', 20), '2030-01-01', cast(id % 4 as int) from range(12000)""")
    spark.sql(f"""
        create table {DB}.flat (guestid bigint, payload string) stored as parquet
        tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "guestid"}')""")
    spark.sql(f"insert into {DB}.flat select id, 'z' from range(5000)")
    # ids in some partitions only: events ds 2030-01-01..03, hours hr 0 and 2, and the flat table
    spark.sql(f"create table {IDS} (guestid bigint) using parquet")
    spark.sql(f"insert into {IDS} select id from range(30000) where id % 6 in (0, 1, 2) and id % 50 < 5")


def expected(spark) -> dict[str, tuple[dict, dict]]:
    """Each table's partitions before the purge and after it: {key: [rows, hash sum]}."""
    states = {}
    for table, (partition_columns, identifier) in TABLES.items():
        data_columns = [f.name for f in spark.table(table).schema if f.name not in partition_columns]
        old = scans(spark, table, partition_columns, data_columns)
        spark.sql(
            f"select a.* from {table} a left anti join {IDS} b on a.{identifier} = b.guestid"
        ).createOrReplaceTempView("purged_view")
        new = scans(spark, "purged_view", partition_columns, data_columns)
        new = {k: new.get(k, [0, 0]) for k in old}
        states[table] = (old, new)
        assert old != new, f"the ids touch no row of {table}: the test would prove nothing"
    return states


def dbt_environment(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DBT_TARGET": "cluster",
        "DBT_PROFILES_DIR": str(REPO),
        "DBT_SCHEMA": "rd_audit",
        # its own warehouse (and so its own run lease): the test session holds the default one;
        # on the filesystem of the tables it purges, as a user's is (S3A's jars come with an s3a one)
        "SPARK_WAREHOUSE_DIR": f"file:{tmp_path / 'purge-warehouse'}"
        if TEST_FS == "file"
        else beside_warehouse(f"purge-warehouse-{tmp_path.name}"),
        "SPARK_CORES_MAX": "1",
        "SPARK_DRIVER_MEMORY": "1g",
        "SPARK_SHUFFLE_PARTITIONS": "2",
        "PYTHONPATH": str(REPO),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


def run_dbt(tmp_path: Path, *args: str, background: bool = False):
    variables = {
        "purge_whitelist": DB,
        "compliance_id_table": IDS,
        "compliance_id_column": "guestid",
        "retention_scope": DB,
        "audit_enabled": False,  # the audit's hooks are not what this test is about
    }
    command = [
        str(Path(sys.executable).parent / "dbt"),
        "--no-use-colors",
        *args,
        "--vars",
        json.dumps(variables),
        "--target-path",
        str(tmp_path / "target"),
        "--log-path",
        str(tmp_path / "logs"),
    ]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=dbt_environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if background:
        return process
    out, _ = process.communicate(timeout=600)
    assert process.returncode == 0, out
    return out


def reachable_totals(old: dict, new: dict) -> set[int]:
    keys = sorted(old)
    return {sum(choice) for choice in product(*[(old[k][0], new[k][0]) for k in keys])}


def test_a_concurrent_reader_sees_whole_partitions_and_no_errors(spark, tmp_path):
    build_tables(spark)
    states = expected(spark)
    run_dbt(tmp_path, "seed", "--select", "retention_policies")

    out_file, stop_file = tmp_path / "reads.jsonl", tmp_path / "stop"
    table_args = [f"{t}:{','.join(cols)}" for t, (cols, _) in TABLES.items()]
    reader = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.functional.cluster.reader",
            str(out_file),
            str(stop_file),
            str(WAREHOUSE_ROOT),
            *table_args,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 180
        while not out_file.exists() or len(out_file.read_text().splitlines()) < 2 * len(TABLES):
            assert reader.poll() is None, reader.communicate()[0][-4000:]
            assert time.time() < deadline, "the reader never completed a first round"
            time.sleep(0.5)

        purge_started = time.time()
        purge = run_dbt(tmp_path, "run", "--select", "purge+", background=True)
        purge_out, _ = purge.communicate(timeout=600)
        purge_ended = time.time()
        assert purge.returncode == 0, purge_out
        time.sleep(3)  # a few more rounds after the run
    finally:
        stop_file.touch()
        reader_out, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0, reader_out[-4000:]

    reads = [json.loads(line) for line in out_file.read_text().splitlines()]
    errors = [r for r in reads if "error" in r]
    assert not errors, f"{len(errors)} of {len(reads)} reads failed, the first: {errors[0]}"

    during = [
        r for r in reads if r["kind"] == "loop" and r["ended"] > purge_started and r["started"] < purge_ended
    ]
    assert len(during) >= 4 * len(TABLES), f"only {len(during)} reads overlapped the purge run"

    seen_new = set()
    for read in reads:
        old, new = states[read["table"]]
        if read["query"] == "count":
            assert read["count"] in reachable_totals(old, new), read
            continue
        got = read["partitions"]
        assert set(got) <= set(old), read
        for key in old:
            value = got.get(key, [0, 0])
            assert value in (old[key], new[key]), (
                f"{read['table']} partition {key!r} read {value}: neither all old rows {old[key]} "
                f"nor all new rows {new[key]}"
            )
            if value == new[key] != old[key]:
                seen_new.add(read["table"])
        if read["kind"] == "after_refresh":
            # after `refresh table` every reader sees the purged data
            assert {k: got.get(k, [0, 0]) for k in old} == new, read

    # the partitioned tables' new locations reach a running reader without any refresh
    assert {f"{DB}.events", f"{DB}.hours"} <= seen_new

    # and the purge really swapped: one committed row per partition that held a listed id
    committed = spark.sql(
        "select table_name, old_location, new_location from rd_audit.purge_log"
        f" where state = 'COMMITTED' and database_name = '{DB}'"
    ).collect()
    changed = {
        table.split(".")[1]: sum(1 for k in old if old[k] != new[k]) for table, (old, new) in states.items()
    }
    assert Counter(r.table_name for r in committed) == changed

    # every swap reached the metastore's event listeners (what the notification log would carry):
    # an ALTER_PARTITION (ALTER_TABLE when unpartitioned) from the old location to the new one
    events_log = Path(os.environ["CLUSTER_DIR"]) / "logs" / "metastore-events.log"
    events = [line.split("\t") for line in events_log.read_text().splitlines()]
    swaps = {
        (e[2].split(".", 1)[1], e[4], e[5])
        for e in events
        if e[1] in ("ALTER_PARTITION", "ALTER_TABLE") and e[2].startswith(f"{DB}.") and e[4] != e[5]
    }
    for row in committed:
        assert (row.table_name, row.old_location, row.new_location) in swaps, (row, sorted(swaps))
