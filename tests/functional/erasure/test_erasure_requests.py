"""Erasure requests through their life: pending -> live_clean -> reintroduced (a restore) ->
live_clean (the next purge) -> erased (retention deletes the last pre-purge copy), and overdue.

A real partitioned and a real unpartitioned table, purged by `dbt run --select purge+`; the id
table carries `request_id` and `requested_at`.  The status, the copies and their dates are read
back from the models, and no table of the erasure models may hold an id."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.conftest import repo_files
from tests.functional.erasure.conftest import SEED_HEADER, SEED_TYPES, ZERO
from tests.functional.purge.conftest import descriptor, location

DB = "e_req"
IDS = "e_ids.requests"
# request -> (ids, days since it was requested)
REQUESTS = {"REQ-1": ([1001, 1002], 1), "REQ-2": ([1003], 100)}
ALL_IDS = {i for ids, _ in REQUESTS.values() for i in ids}
REQUEST_MODELS = {
    "_erasure__requests.yml",
    "erasure_request_log.sql",
    "erasure_live_findings.sql",
    "erasure_copies.sql",
    "erasure_requests.sql",
}


def run(select: str, expect_pass: bool = True, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    _, log = run_dbt_and_capture(
        ["run", "--select", select, "--vars", json.dumps({**base, **variables})], expect_pass=expect_pass
    )
    return log


def requests(spark: Any, schema: str) -> dict[str, Any]:
    spark.catalog.clearCache()
    return {r.request_id: r for r in spark.sql(f"select * from {schema}.erasure_requests").collect()}


def copies(spark: Any, schema: str, request_id: str) -> list[Any]:
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.erasure_copies where request_id = '{request_id}' order by table_name, partition_spec"
    ).collect()


def verification(spark: Any, schema: str, request_id: str) -> list[Any]:
    """The latest verify_erasure rows of a request."""
    spark.catalog.clearCache()
    return spark.sql(f"""
        select * from {schema}.erasure_verification
        where request_id = '{request_id}' and invocation_id = (
            select max_by(invocation_id, verified_at) from {schema}.erasure_verification where request_id = '{request_id}')
    """).collect()


@pytest.fixture(scope="class")
def macros() -> dict[str, Any]:
    return repo_files("macros")


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {
        "purge": repo_files("models", "purge"),
        "retention": repo_files("models", "retention"),
        "erasure": {
            name: text for name, text in repo_files("models", "erasure").items() if name in REQUEST_MODELS
        },
    }


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"retention": {"retention_policies.csv": SEED_HEADER}}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet", "erasure": {"+tags": ["erasure"]}}},
        "seeds": {"compliance": {"+column_types": SEED_TYPES}},
        "vars": {
            "purge_whitelist": DB,
            "compliance_id_table": IDS,
            "compliance_id_column": "guestid",
            "audit_enabled": False,
        },
    }


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> dict[str, Any]:
    for database in (DB, "e_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    now = dt.datetime.now()
    rows = ", ".join(
        f"({i}, '{request}', timestamp'{(now - dt.timedelta(days=days)):%Y-%m-%d %H:%M:%S}')"
        for request, (ids, days) in REQUESTS.items()
        for i in ids
    )
    spark.sql(f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet")
    spark.sql(f"insert into {IDS} values {rows}")
    spark.sql(f"""
        create table {DB}.events (guestid bigint, page string) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    # 1001 in a, 1002 in b, 1003 in c, nothing to purge in d
    spark.sql(f"""insert into {DB}.events partition (ds) values
        (1001, 'p1', 'a'), (7, 'p2', 'a'), (1002, 'p3', 'b'), (8, 'p4', 'b'),
        (1003, 'p5', 'c'), (9, 'p6', 'c'), (10, 'p7', 'd')""")
    spark.sql(f"""
        create table {DB}.profiles (guestid bigint, name string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.profiles values (1001, 'x'), (1003, 'y'), (11, 'z')")
    run_dbt(["seed"])
    return {"now": now}


class TestErasureRequests:
    def test_a_dry_run_serves_no_request(self, project, spark, lake):
        log = run("purge+", purge_dry_run=True)
        # what it would remove, per partition, and when retention would then delete the copy
        assert "dry run: e_req.events ds=a: would remove 1 of 2 rows" in log
        assert "dry run: e_req.profiles (unpartitioned): would remove 2 of 3 rows" in log
        assert (
            "deleted by retention from " in log and "(backup_retention_days 7, stale_retention_days 7)" in log
        )
        found = requests(spark, project.test_schema)
        assert found["REQ-1"].status == "pending"
        assert found["REQ-1"].purge_runs == 0
        assert found["REQ-1"].id_count == 2
        # requested 100 days ago, deadline 30 days: overdue before anything was purged
        assert found["REQ-2"].status == "overdue"
        assert found["REQ-2"].deadline_at < dt.datetime.now()

    def test_a_purge_makes_the_request_live_clean_with_its_copies_scheduled(self, project, spark, lake):
        run("purge+")
        found = requests(spark, project.test_schema)
        one = found["REQ-1"]
        assert one.status == "live_clean"
        assert (one.purge_runs, one.live_rows, one.tables_checked, one.tables_clean) == (1, 0, 2, 2)
        assert one.live_clean_at is not None and one.fully_erased_at is None
        # REQ-1's run swapped every partition that held any listed id (a, b, c) and profiles
        listed = copies(spark, project.test_schema, "REQ-1")
        assert [(c.table_name, c.partition_spec) for c in listed] == [
            ("events", "ds=a"),
            ("events", "ds=b"),
            ("events", "ds=c"),
            ("profiles", None),
        ]
        for copy in listed:
            assert copy.deleted_at is None
            # the defaults: backup 7 days, stale 7 days
            assert copy.will_delete_at == copy.purged_at + dt.timedelta(days=7)
        assert one.copies_remaining == 4
        assert one.copies_deleted_by == max(c.will_delete_at for c in listed)
        # past its deadline with copies left: still overdue
        assert found["REQ-2"].status == "overdue"

    def test_a_restore_reintroduces_the_request_until_the_next_purge(self, project, spark, lake):
        backup = copies(spark, project.test_schema, "REQ-1")[0].backup_table
        run_dbt(
            [
                "run-operation",
                "restore",
                "--args",
                json.dumps({"table": f"{DB}.events", "partition": "ds=a", "backup": backup}),
            ]
        )
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        events = spark.sql(f"select * from {project.test_schema}.erasure_events").collect()
        assert [(e.event, e.table_name, e.partition_spec, e.backup_table) for e in events] == [
            ("restore", "events", "ds=a", backup)
        ]
        assert found["REQ-1"].live_rows == 1, found["REQ-1"]  # 1001 is back in ds=a
        assert found["REQ-1"].status == "reintroduced"
        assert found["REQ-2"].live_rows == 0

        run("purge+")
        found = requests(spark, project.test_schema)
        assert found["REQ-1"].status == "live_clean"
        assert found["REQ-1"].purge_runs == 2
        assert found["REQ-1"].live_rows == 0

    def test_the_bytes_of_the_request_are_in_the_backups_only(self, project, spark, lake):
        """verify_erasure with a request_id column: REQ-1's ids (1001, 1002) are in no live file, and
        the pre-purge copies hold them: 1001 in ds=a (the directory both purges' backups point at,
        since the restore made it live again) and in profiles, 1002 in ds=b."""
        run_dbt(["run-operation", "verify_erasure", "--args", json.dumps({"request_id": "REQ-1"})])
        found = verification(spark, project.test_schema, "REQ-1")
        assert sum(r.rows_holding_ids for r in found if r.location_kind == "live") == 0
        holding = {r.location: r.rows_holding_ids for r in found if r.rows_holding_ids}
        assert sum(holding.values()) == 3, found
        assert set(holding) <= {c.location for c in copies(spark, project.test_schema, "REQ-1")}

    def test_a_rebuild_writing_an_id_back_reintroduces_the_request(self, project, spark, lake):
        """No event: a job (a recompaction from unpurged input, a rebuild) writes a purged id back
        into an onboarded table; the live check alone finds it."""
        spark.sql(f"insert into {DB}.profiles values (1003, 'rebuilt')")
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert (found["REQ-2"].status, found["REQ-2"].live_rows) == ("reintroduced", 1)
        assert found["REQ-1"].status == "live_clean"  # 1003 is not one of REQ-1's ids
        findings = spark.sql(
            f"select table_name, remaining_rows from {project.test_schema}.erasure_live_findings "
            "where request_id = 'REQ-2' order by table_name"
        ).collect()
        assert [(f.table_name, f.remaining_rows) for f in findings] == [("events", 0), ("profiles", 1)]
        run("purge+")
        found = requests(spark, project.test_schema)
        assert (found["REQ-2"].status, found["REQ-2"].live_rows) == ("overdue", 0)  # clean, past its deadline

    def test_retention_deleting_the_last_copy_erases_the_request(self, project, spark, lake):
        before = copies(spark, project.test_schema, "REQ-1")
        run("retention+", **ZERO)
        found = requests(spark, project.test_schema)
        after = copies(spark, project.test_schema, "REQ-1")
        assert len(after) == len(before) >= 5  # the second run's copy of ds=a too
        assert all(c.deleted_at is not None for c in after), [(c.location, c.deleted_at) for c in after]
        one = found["REQ-1"]
        assert one.status == "erased"
        assert one.copies_remaining == 0
        assert one.fully_erased_at == max(c.deleted_at for c in after)
        # an overdue request that is erased is erased
        assert found["REQ-2"].status == "erased"
        # and the pre-purge files are really gone
        jvm = spark._jvm
        conf = spark._jsc.hadoopConfiguration()
        for copy in after:
            path = jvm.org.apache.hadoop.fs.Path(copy.location)
            fs = path.getFileSystem(conf)
            if copy.partition_spec is None:
                # an unpartitioned table's copy is its old directory <L>, which holds the live
                # <L>/_purge_<ts>: the copy's own files are gone
                assert [str(s.getPath()) for s in fs.listStatus(path) if s.isFile()] == [], copy.location
            else:
                assert not fs.exists(path), copy.location
        assert location(spark, DB, "events", [["ds", "a"]]) not in {c.location for c in after}

    def test_after_retention_no_byte_holds_the_request(self, project, spark, lake):
        run_dbt(["run-operation", "verify_erasure", "--args", json.dumps({"request_id": "REQ-1"})])
        found = verification(spark, project.test_schema, "REQ-1")
        assert found and sum(r.rows_holding_ids for r in found) == 0, found

    def test_the_certificate_holds_the_evidence_and_no_id(self, project, spark, lake):
        _, log = run_dbt_and_capture(
            ["run-operation", "erasure_certificate", "--args", json.dumps({"request_id": "REQ-1"})]
        )
        target = Path(project.project_root) / "target" / "erasure"
        doc = json.loads((target / "REQ-1.json").read_text())
        text = (target / "REQ-1.md").read_text()
        assert "REQ-1.md" in log and "status erased" in log
        assert doc["request"]["status"] == "erased"
        assert doc["request"]["fully_erased_at"]
        assert len(doc["runs"]) == 3 and all(r["partitions_failed"] == 0 for r in doc["runs"])
        assert {r["invocation_id"] for r in doc["runs"]} == set(
            doc["request"]["purge_invocation_ids"].split(",")
        )
        assert {t["table_id"] for t in doc["tables"]} == {f"{DB}.events", f"{DB}.profiles"}
        assert all(c["deleted_at"] for c in doc["copies"]) and len(doc["copies"]) >= 5
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", doc["git_revision"])
        assert "**Status: erased.**" in text and "## Pre-purge copies and their deletion" in text
        for run_id in doc["request"]["purge_invocation_ids"].split(","):
            assert run_id in text
        for listed in ALL_IDS:
            assert not re.search(
                rf"(?<![0-9a-f-]){listed}(?![0-9a-f-])", text + json.dumps(doc["runs"] + doc["tables"])
            )

    def test_an_unknown_request_is_named(self, project, spark, lake):
        _, log = run_dbt_and_capture(
            ["run-operation", "erasure_certificate", "--args", json.dumps({"request_id": "REQ-9"})],
            expect_pass=False,
        )
        assert "no request 'REQ-9'" in log and "known: REQ-1, REQ-2" in log

    def test_no_erasure_table_holds_an_id(self, project, spark, lake):
        for table in ("erasure_request_log", "erasure_live_findings", "erasure_copies", "erasure_requests"):
            frame = spark.table(f"{project.test_schema}.{table}")
            for row in frame.collect():
                for value in row:
                    assert not (isinstance(value, int) and value in ALL_IDS), (table, row)
                    assert not (isinstance(value, str) and value.strip() in {str(i) for i in ALL_IDS}), (
                        table,
                        row,
                    )
