"""Erasure requests through their life, the ledger resting on the verifier's reading of the bytes:
pending -> unverified (purged, not verified since) -> copies_remaining (verified: the backups
hold its ids) -> reintroduced (a restore, then a verification) -> ... -> live_clean (retention
deleted the copies after the last verification) -> erased (a fresh verification found nothing
anywhere) -> a certificate whose digest verifies, and stops verifying when a purge_log or
retention_log row it rests on is changed.

A real partitioned and a real unpartitioned table, purged by `dbt run --select purge+`; the id
table carries `request_id` and `requested_at`.  Every status is checked against a direct read
of the files (pyarrow), outside the product's code: the ledger never says `live_clean` or
`erased` while a file holds the request's ids.  The certificate says what the ledger says.  A purge
no log attributes to a request (an unlogged journal intent, a registered backup) makes the listed
requests `unverified`; a request no longer listed keeps its status.  No table of the erasure models
holds an id."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from python_hooks.catalog.journal import Intent, Journal, PartitionSwap
from tests import warehouse_fs
from tests.conftest import TEST_FS
from tests.functional.erasure.conftest import ZERO, dbt_log, onboarded_outside, project_config
from tests.functional.erasure.files_scan import ids_in_files, warehouse
from tests.functional.purge.conftest import descriptor

DB = "e_req"
IDS = "e_ids.requests"
# an onboarded table outside the verification's scope (var erasure_verification_scope: DB)
ASIDE = "e_req_aside.kept"
# request -> (ids, days since it was requested)
REQUESTS = {"REQ-1": ([1001, 1002], 1), "REQ-2": ([1003], 100)}
ALL_IDS = {i for ids, _ in REQUESTS.values() for i in ids}


def run(select: str, expect_pass: bool = True, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    return dbt_log(
        ["run", "--select", select, "--vars", json.dumps({**base, **variables})], expect_pass=expect_pass
    )


def requests(spark: Any, schema: str) -> dict[str, Any]:
    spark.catalog.clearCache()
    return {r.request_id: r for r in spark.sql(f"select * from {schema}.erasure_requests").collect()}


def copies(spark: Any, schema: str, request_id: str) -> list[Any]:
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.erasure_copies where request_id = '{request_id}' order by table_name, partition_spec"
    ).collect()


def never_certified_too_early(spark: Any, found: dict[str, Any]) -> None:
    """The ledger's property, against the files: a request holding ids anywhere is not erased, and
    one holding ids in a live table is not live_clean (nor anything after it)."""
    for request_id, (ids, _) in REQUESTS.items():
        live, copies_held = ids_in_files(spark, [DB], set(ids))
        status = found[request_id].progress
        if live:
            assert status not in ("live_clean", "copies_remaining", "erased"), (request_id, status, live)
        if live or copies_held:
            assert status != "erased", (request_id, copies_held)


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


def listed_rows(now: dt.datetime, request_ids: list[str]) -> str:
    """The id table's rows of `request_ids`, as `values` of an insert."""
    return ", ".join(
        f"({i}, '{request}', timestamp'{(now - dt.timedelta(days=REQUESTS[request][1])):%Y-%m-%d %H:%M:%S}')"
        for request in request_ids
        for i in REQUESTS[request][0]
    )


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> dict[str, Any]:
    for database in (DB, "e_ids", ASIDE.split(".")[0]):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    now = dt.datetime.now()
    spark.sql(f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet")
    spark.sql(f"insert into {IDS} values {listed_rows(now, list(REQUESTS))}")
    spark.sql(
        f"create table {ASIDE} (guestid bigint) using parquet tblproperties ('dataset.descriptor' = '{descriptor('guestid')}')"
    )
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
        """A dry run says, per partition, what it would remove, the backup that would keep the
        pre-purge copy and the date retention would delete it from; the statuses do not move."""
        before = dt.datetime.now(dt.timezone.utc)
        log = run("purge+", purge_dry_run=True)
        after = dt.datetime.now(dt.timezone.utc)
        lines = re.findall(r"purge: dry run: .*$", log, re.M)
        assert len(lines) == 4, lines  # ds=a, ds=b, ds=c and profiles: what holds a listed id
        (line,) = [x for x in lines if x.startswith(f"purge: dry run: {DB}.events ds=a:")]
        shape = re.fullmatch(
            rf"purge: dry run: {DB}\.events ds=a: would remove 1 of 2 rows; its pre-purge copy would be kept by"
            rf" {DB}\.events_backup_(\d{{13}}) and deleted by retention from (\d{{4}}-\d\d-\d\d \d\d:\d\d) UTC"
            r" \(backup_retention_days 7, stale_retention_days 7\)",
            line,
        )
        assert shape, line
        minute = dt.timedelta(minutes=1)
        deleted_from = dt.datetime.strptime(shape[2], "%Y-%m-%d %H:%M").replace(tzinfo=dt.timezone.utc)
        week = dt.timedelta(days=7)
        assert before + week - minute < deleted_from <= after + week, (before, line)
        assert before.timestamp() * 1000 <= int(shape[1]) <= after.timestamp() * 1000, line
        found = requests(spark, project.test_schema)
        assert (found["REQ-1"].status, found["REQ-1"].purge_runs, found["REQ-1"].id_count) == (
            "pending",
            0,
            2,
        )
        assert found["REQ-1"].missing.startswith("no purge run has served it yet")
        # requested 100 days ago, deadline 30 days: overdue, and still pending underneath
        assert (found["REQ-2"].status, found["REQ-2"].progress) == ("overdue", "pending")
        never_certified_too_early(spark, found)

    def test_a_purge_alone_certifies_nothing_until_a_verification_reads_the_bytes(self, project, spark, lake):
        run("purge+")
        found = requests(spark, project.test_schema)
        one = found["REQ-1"]
        assert (one.status, one.purge_runs, one.verification_id) == ("unverified", 1, None)
        assert "dbt run --select erasure_verification" in one.missing
        assert one.live_clean_at is None and one.fully_erased_at is None
        # the copies the run made, scheduled by the policies in force
        listed = copies(spark, project.test_schema, "REQ-1")
        assert [(c.table_name, c.partition_spec) for c in listed] == [
            ("events", "ds=a"), ("events", "ds=b"), ("events", "ds=c"), ("profiles", None),
        ]  # fmt: skip
        assert all(
            c.deleted_at is None and c.will_delete_at == c.purged_at + dt.timedelta(days=7) for c in listed
        )
        never_certified_too_early(spark, found)

    def test_the_verification_finds_the_backups_holding_its_ids(self, project, spark, lake):
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        one = found["REQ-1"]
        assert (one.status, one.live_rows, one.copy_rows) == ("copies_remaining", 0, 3)
        assert one.verified_at > one.last_purge_at and one.live_clean_at == one.verified_at
        assert "backup e_req.events" in one.copies_holding and "backup e_req.profiles" in one.copies_holding
        assert one.missing.startswith("copies hold its ids until retention deletes them")
        assert (found["REQ-2"].status, found["REQ-2"].progress) == ("overdue", "copies_remaining")
        never_certified_too_early(spark, found)

    def test_a_restore_then_a_verification_reintroduces_the_request(self, project, spark, lake):
        backup = copies(spark, project.test_schema, "REQ-1")[0].backup_table
        run_dbt(
            ["run-operation", "restore", "--args",
             json.dumps({"table": f"{DB}.events", "partition": "ds=a", "backup": backup})]
        )  # fmt: skip
        # the restore alone: the last verification predates it
        run("erasure_requests")
        found = requests(spark, project.test_schema)
        assert found["REQ-1"].status == "unverified" and found["REQ-1"].last_restore_at is not None
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert (found["REQ-1"].status, found["REQ-1"].live_rows) == (
            "reintroduced",
            1,
        )  # 1001 is back in ds=a
        assert found["REQ-1"].live_holding == "e_req.events: 1"
        assert found["REQ-2"].live_rows == 0
        never_certified_too_early(spark, found)

        run("purge+")
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert (found["REQ-1"].status, found["REQ-1"].purge_runs, found["REQ-1"].live_rows) == (
            "copies_remaining",
            2,
            0,
        )
        never_certified_too_early(spark, found)

    def test_a_rebuild_writing_an_id_back_reintroduces_the_request(self, project, spark, lake):
        """No event, no log: a job writes a purged id back into an onboarded table; the verifier
        alone finds it."""
        spark.sql(f"insert into {DB}.profiles values (1003, 'rebuilt')")
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert (found["REQ-2"].status, found["REQ-2"].live_rows) == ("reintroduced", 1)
        assert found["REQ-2"].live_holding == "e_req.profiles: 1"
        assert found["REQ-1"].status == "copies_remaining"  # 1003 is not one of REQ-1's ids
        never_certified_too_early(spark, found)
        run("purge+")
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert (found["REQ-2"].status, found["REQ-2"].progress) == ("overdue", "copies_remaining")

    def test_a_certificate_is_refused_before_the_request_is_erased(self, project, spark, lake):
        log = dbt_log(["run-operation", "erasure_certificate", "--args", '{"request_id": "REQ-1"}'])
        target = Path(project.project_root) / "target" / "erasure"
        assert not (target / "REQ-1.json").exists()
        report = json.loads((target / "REQ-1.status.json").read_text())
        assert report["document"] == "erasure status report"
        assert any("copies hold its ids" in reason for reason in report["not_certified_because"])
        assert "No certificate for request REQ-1 (status copies_remaining)" in log
        assert "(not a certificate)" in (target / "REQ-1.status.md").read_text()

    def test_retention_alone_does_not_erase_a_fresh_verification_does(self, project, spark, lake):
        before = copies(spark, project.test_schema, "REQ-1")
        run("retention+", **ZERO)
        found = requests(spark, project.test_schema)
        after = copies(spark, project.test_schema, "REQ-1")
        assert len(after) == len(before) >= 5 and all(c.deleted_at is not None for c in after)
        one = found["REQ-1"]
        # the copies are gone, but the last verification predates their deletion
        assert (one.status, one.copies_remaining) == ("live_clean", 0)
        assert (
            one.last_deletion_at > one.verified_at
            and "a copy was deleted after the last verification" in one.missing
        )
        never_certified_too_early(spark, found)

        run("tag:erasure")
        found = requests(spark, project.test_schema)
        one = found["REQ-1"]
        assert (one.status, one.live_rows, one.copy_rows, one.unread_locations_count) == ("erased", 0, 0, 0)
        assert one.verified_at > one.last_deletion_at and one.missing is None
        assert one.fully_erased_at == max(one.last_purge_at, max(c.deleted_at for c in after))
        assert found["REQ-2"].status == "erased"  # overdue, then erased: erased
        # and the files agree: no byte under the tables holds the ids
        for request_id, (ids, _) in REQUESTS.items():
            assert ids_in_files(spark, [DB], set(ids)) == ({}, {}), request_id

    def test_the_certificate_names_what_it_rests_on_and_no_id(self, project, spark, lake):
        """The certificate: the request as the ledger `erasure_requests` gives it for the same
        state (the same macro computes both), the verification with its scope and the onboarded
        tables it left out, the runs, the copies, the product, the evidence's digest; no id."""
        log = dbt_log(["run-operation", "erasure_certificate", "--args", '{"request_id": "REQ-1"}'])
        target = Path(project.project_root) / "target" / "erasure"
        doc = json.loads((target / "REQ-1.json").read_text())
        text = (target / "REQ-1.md").read_text()
        evidence = (target / "REQ-1.evidence.txt").read_bytes()
        assert doc["document"] == "erasure certificate" and "status erased" in log
        assert doc["request"]["status"] == "erased" and doc["request"]["fully_erased_at"].endswith("Z")
        ledger = requests(spark, project.test_schema)["REQ-1"].asDict()
        assert doc["request"] == {key: _as_certified(ledger[key]) for key in doc["request"]}
        assert {"last_purge_at", "last_deletion_at", "live_clean_at", "copies_total"} <= set(doc["request"])
        verification = doc["verification"]
        (verification_run,) = spark.sql(
            f"select * from {project.test_schema}.erasure_verification_runs"
            f" where verification_id = '{verification['verification_id']}'"
        ).collect()
        outside = onboarded_outside(spark, {DB})
        assert ASIDE in outside.split("; ") or outside.endswith(" more")
        assert (verification_run.scope, verification_run.out_of_scope_tables) == (DB, outside)
        assert (verification["scope"], verification["onboarded_tables_outside_scope"]) == (DB, outside)
        assert f"- Scope: {DB}; onboarded tables outside it: {outside}" in text
        assert (
            verification["started_at"] > doc["request"]["last_deletion_at"] > doc["request"]["last_purge_at"]
        )
        assert {t["table"] for t in verification["live_tables"]} == {f"{DB}.events", f"{DB}.profiles"}
        assert verification["read"]["partitions"] == 4 and verification["read"]["files"] > 0
        assert len(doc["purge_runs"]) == 3 and all(r["ended_at"].endswith("Z") for r in doc["purge_runs"])
        assert all(c["table"].startswith(f"{DB}.") and c["deleted_at"] for c in doc["copies"])
        product = doc["product"]
        assert product["distribution"] == "dbt-lakehouse" and product["dbt_package"] == "compliance"
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", product["revision"])
        # the digest is the SHA-256 of the evidence file, in the documented order of parts
        assert doc["evidence"]["sha256"] == hashlib.sha256(evidence).hexdigest()
        parts = [line.split("\t", 1)[0] for line in evidence.decode().splitlines()]
        assert parts == sorted(parts, key=doc["evidence"]["canonical_order"].index)
        assert (
            doc["evidence"]["parts"]["purge_log"]["rows"] > 0
            and doc["evidence"]["parts"]["retention_log"]["rows"] > 0
        )
        assert "**Erased.**" in text and doc["evidence"]["sha256"] in text
        for listed in ALL_IDS:
            assert not re.search(
                rf"(?<![0-9a-f-]){listed}(?![0-9a-f-])", evidence.decode() + json.dumps(doc["copies"])
            )
        log = dbt_log(
            [
                "run-operation",
                "verify_certificate",
                "--args",
                json.dumps({"file": "target/erasure/REQ-1.json"}),
            ]
        )
        assert "verifies: the evidence of request REQ-1" in log

    @pytest.mark.parametrize(
        "table, key, change",
        [
            ("purge_log", "purge_log_id", "rows_purged = rows_purged + 1"),
            ("retention_log", "attempt_id", "files_deleted = files_deleted + 1"),
        ],
    )
    def test_the_digest_fails_when_a_row_it_rests_on_changes(self, project, spark, lake, table, key, change):
        schema = project.test_schema
        doc = json.loads((Path(project.project_root) / "target" / "erasure" / "REQ-1.json").read_text())
        selection = doc["evidence"]["selection"]
        where = (
            f"invocation_id = '{selection['purge_invocation_ids'][0]}' and state = 'COMMITTED'"
            if table == "purge_log"
            else f"attempt_id = '{selection['retention_attempt_ids'][0]}'"
        )
        (victim,) = spark.sql(f"select {key} from {schema}.{table} where {where} limit 1").collect()
        column, expression = change.split(" = ")
        columns = [f.name for f in spark.table(f"{schema}.{table}").schema.fields]
        changed = ", ".join(
            f"case when {key} = '{victim[0]}' then {expression} else {c} end as {c}" if c == column else c
            for c in columns
        )
        spark.sql(f"create table {schema}.tampered using parquet as select {changed} from {schema}.{table}")
        spark.sql(f"create table {schema}.original using parquet as select * from {schema}.{table}")
        try:
            spark.sql(f"insert overwrite table {schema}.{table} select * from {schema}.tampered")
            log = dbt_log(
                [
                    "run-operation",
                    "verify_certificate",
                    "--args",
                    json.dumps({"file": "target/erasure/REQ-1.json"}),
                ],
                expect_pass=False,
            )
            assert "does NOT verify" in log and f"changed: {table}." in log
            assert re.search(rf"{table}\s+CHANGED", log)
        finally:
            spark.sql(f"insert overwrite table {schema}.{table} select * from {schema}.original")
            spark.sql(f"drop table {schema}.tampered")
            spark.sql(f"drop table {schema}.original")
        log = dbt_log(
            [
                "run-operation",
                "verify_certificate",
                "--args",
                json.dumps({"file": "target/erasure/REQ-1.json"}),
            ]
        )
        assert "verifies" in log

    @pytest.mark.parametrize(
        "tamper, named, detail",
        [
            ("purge_log added", "purge_log", None),
            ("purge_log deleted", "purge_log", None),
            ("retention_log deleted", "retention_log", None),
            ("journal edited", "journal", "the journal cannot be read"),
            ("journal edited, its checksum too", "journal", None),
            ("verification_run changed", "verification_run", None),
            ("verification_locations deleted", "verification_locations", None),
            ("verification_findings added", "verification_findings", None),
            ("verification_request changed", "verification_request", None),
            (".json edited", "json", "section(s) copies edited"),
            (".evidence.txt edited", "evidence_file", "REQ-1.evidence.txt: sha256"),
            (".md edited", "markdown", "REQ-1.md: sha256"),
            ("moved to another warehouse", "warehouse", "written for file:/elsewhere/warehouse"),
        ],
    )
    def test_verify_certificate_names_each_part_that_changed(
        self, project, spark, lake, tamper, named, detail
    ):
        """Every part of the certificate, a row added, changed or deleted, each file, and the
        warehouse it was written for: `verify_certificate` fails naming that part alone."""
        schema = project.test_schema
        target = Path(project.project_root) / "target" / "erasure"
        doc = json.loads((target / "REQ-1.json").read_text())
        selection = doc["evidence"]["selection"]
        verification = selection["verification_id"]
        restore = _tamper(spark, schema, target, selection, tamper)
        try:
            log = dbt_log(
                [
                    "run-operation",
                    "verify_certificate",
                    "--args",
                    json.dumps({"file": "target/erasure/REQ-1.json"}),
                ],
                expect_pass=False,
            )
        finally:
            restore()
        assert "does NOT verify" in log and f"changed: {named}." in log, (tamper, log[-3000:])
        assert re.search(rf"{named}\s+CHANGED", log), tamper
        if detail:
            assert detail in log, (tamper, log[-3000:])
        assert verification in json.dumps(doc)

    def test_the_certificate_verifies_once_everything_is_put_back(self, project, spark, lake):
        log = dbt_log(
            [
                "run-operation",
                "verify_certificate",
                "--args",
                json.dumps({"file": "target/erasure/REQ-1.json"}),
            ]
        )
        assert "verifies" in log and "CHANGED" not in log

    def test_verified_then_written_then_verified(self, project, spark, lake):
        """An erased request, then a write to an onboarded table (no id in it): the ledger alone,
        without a verification, says `unverified`; the next verification says `erased` again."""
        assert {r: v.status for r, v in requests(spark, project.test_schema).items()} == {
            "REQ-1": "erased",
            "REQ-2": "erased",
        }
        spark.sql(f"insert into {DB}.events partition (ds = 'd') values (12, 'a late row')")
        run("erasure_requests")
        found = requests(spark, project.test_schema)
        for request_id in REQUESTS:
            row = found[request_id]
            # REQ-2 is past its deadline: `overdue`, with `unverified` underneath
            assert row.progress == "unverified" and row.last_write_at > row.verified_at, (request_id, row)
            assert row.status != "erased"
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert {r: v.status for r, v in found.items()} == {"REQ-1": "erased", "REQ-2": "erased"}
        never_certified_too_early(spark, found)

    def test_verified_then_a_file_copied_in_by_hand(self, project, spark, lake):
        """A parquet file holding a purged id, copied into a partition's directory with no Spark,
        no dbt and no log: `unverified` at once, `reintroduced` once verified; removed, the next
        verification says `erased`."""
        import pyarrow as pa

        directory = (
            spark.sql(f"describe formatted {DB}.events partition (ds = 'd')")
            .where("col_name = 'Location'")
            .collect()[0][1]
        )
        copied = f"{warehouse_fs.qualify(spark, directory)}/copied-by-hand.parquet"
        warehouse_fs.write_parquet(
            spark, copied, pa.table({"guestid": pa.array([1001], pa.int64()), "page": ["by hand"]})
        )
        assert sum(ids_in_files(spark, [DB], {1001})[0].values()) == 1  # where readers read it
        try:
            run("erasure_requests")
            found = requests(spark, project.test_schema)
            assert found["REQ-1"].status == "unverified", found["REQ-1"]
            run("tag:erasure")
            found = requests(spark, project.test_schema)
            one = found["REQ-1"]
            assert (one.status, one.live_rows, one.live_holding) == ("reintroduced", 1, f"{DB}.events: 1")
            assert found["REQ-2"].status == "erased"  # 1001 is not one of REQ-2's ids
            never_certified_too_early(spark, found)
        finally:
            warehouse_fs.delete(spark, copied)
        run("tag:erasure")
        found = requests(spark, project.test_schema)
        assert found["REQ-1"].status == "erased", found["REQ-1"]
        assert ids_in_files(spark, [DB], ALL_IDS) == ({}, {})

    def test_a_purge_no_log_names_is_the_last_purge_of_every_listed_request(self, project, spark, lake):
        """A request's last purge includes the runs no log attributes to any request: an
        interrupted run seen through its journal intent (no logged mark), or through a registered
        backup table.  Each makes the listed request `unverified`, its last_purge_at that run's
        time.  A request whose ids are no longer listed is not verified again: `still_listed` is
        false and it keeps the status its last verification and its own runs gave.  Once the
        run's traces are gone, the next verification says `erased` again."""
        schema = project.test_schema
        before = requests(spark, schema)
        assert {r: v.status for r, v in before.items()} == {"REQ-1": "erased", "REQ-2": "erased"}
        spark.sql(f"truncate table {IDS}")
        spark.sql(f"insert into {IDS} values {listed_rows(lake['now'], ['REQ-1'])}")
        events = warehouse_fs.qualify(
            spark,
            spark.sql(f"describe formatted {DB}.events").where("col_name = 'Location'").collect()[0][1],
        )
        ts = int(time.time() * 1000)
        started = dt.datetime.now(dt.timezone.utc).replace(microsecond=0, tzinfo=None)
        intent = Intent(
            invocation_id="unlogged-run", purge_ts=ts, database=DB, table="events", identifier_field="guestid",
            staging_table=f"{DB}.events_staging_{ts}", staging_location=f"{events}/{ts}",
            backup_table=f"{DB}.events_backup_{ts}",
            partitions=[PartitionSwap("ds=d", [["ds", "d"]], f"{events}/ds=d", f"{events}/{ts}/ds=d")],
            started_at=f"{started:%Y-%m-%d %H:%M:%S.%f}",
        )  # fmt: skip
        journal = Journal(spark)
        entry = f"{journal.root.toString()}/{intent.run}"
        backup = f"{DB}.events_backup_{ts + 1}"

        def unchanged(two: Any) -> None:
            old = before["REQ-2"]
            assert (two.still_listed, two.status, two.verification_id) == (
                False,
                "erased",
                old.verification_id,
            )
            assert (two.last_purge_at, two.last_write_at) == (old.last_purge_at, None)

        try:
            journal.record_intent(intent)
            run("erasure_requests")
            found = requests(spark, schema)
            one = found["REQ-1"]
            assert (one.status, one.last_purge_at) == ("unverified", _local(started)), one
            assert one.missing.startswith("no verification since the last purge or restore (")
            unchanged(found["REQ-2"])

            warehouse_fs.delete(spark, entry)
            created = int(time.time() * 1000)
            spark.sql(f"""create table {backup} (guestid bigint, page string) partitioned by (ds string)
                stored as parquet tblproperties ('lakehouse.side_table' = 'backup',
                    'lakehouse.side_table.of' = '{DB}.events', 'lakehouse.side_table.created_at' = '{created}',
                    'lakehouse.side_table.invocation_id' = 'unlogged-backup')""")
            run("erasure_requests")
            found = requests(spark, schema)
            one = found["REQ-1"]
            expected = _local(dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=created))
            assert (one.status, one.last_purge_at) == ("unverified", expected), one
            unchanged(found["REQ-2"])

            spark.sql(f"drop table {backup}")
            run("erasure_verification erasure_requests")
            found = requests(spark, schema)
            assert (
                found["REQ-1"].status == "erased" and found["REQ-1"].verified_at > before["REQ-1"].verified_at
            )
            assert found["REQ-1"].last_purge_at == before["REQ-1"].last_purge_at
            unchanged(found["REQ-2"])
        finally:
            warehouse_fs.delete(spark, entry)
            spark.sql(f"drop table if exists {backup}")
            spark.sql(f"truncate table {IDS}")
            spark.sql(f"insert into {IDS} values {listed_rows(lake['now'], list(REQUESTS))}")

    def test_an_unknown_request_is_named(self, project, spark, lake):
        log = dbt_log(
            ["run-operation", "erasure_certificate", "--args", json.dumps({"request_id": "REQ-9"})],
            expect_pass=False,
        )
        assert "no request 'REQ-9'" in log and "known: REQ-1, REQ-2" in log

    def test_no_erasure_table_holds_an_id(self, project, spark, lake):
        tables = (
            "erasure_request_log", "erasure_copies", "erasure_requests", "erasure_verification",
            "erasure_verification_runs", "erasure_verification_locations", "erasure_verification_findings",
        )  # fmt: skip
        for table in tables:
            for row in spark.table(f"{project.test_schema}.{table}").collect():
                for value in row:
                    assert not (
                        isinstance(value, int) and not isinstance(value, bool) and value in ALL_IDS
                    ), (table, row)
                    assert not (isinstance(value, str) and value.strip() in {str(i) for i in ALL_IDS}), (
                        table,
                        row,
                    )

    def test_no_log_line_target_file_or_certificate_holds_an_id(self, project, spark, lake, logs_dir):
        """After the whole life of the requests (purges, restores, retention, verifications,
        certificates and status reports): every file of dbt's log directory and of `target/`
        (run results, compiled and run SQL, manifests, every certificate file) is searched for
        every listed id, as text: 0 hits."""
        listed = "|".join(str(i) for i in sorted(ALL_IDS))
        pattern = re.compile(rf"(?<![0-9A-Za-z])(?:{listed})(?![0-9A-Za-z])")
        searched, hits = 0, []
        for root in (Path(logs_dir), Path(project.project_root) / "target"):
            for path in sorted(root.rglob("*")):
                if not path.is_file():
                    continue
                searched += 1
                text = path.read_bytes().decode("utf-8", errors="replace")
                hits += [
                    (str(path), text[max(0, m.start() - 80) : m.end() + 80]) for m in pattern.finditer(text)
                ]
        assert searched > 10 and any(
            (Path(project.project_root) / "target" / "erasure").glob("*.evidence.txt")
        )
        assert not hits, hits[:5]


def _local(utc: dt.datetime) -> dt.datetime:
    """A naive UTC time as Spark gives a timestamp to Python: naive, in local time."""
    return utc.replace(tzinfo=dt.timezone.utc).astimezone().replace(tzinfo=None)


def _as_certified(value: Any) -> Any:
    """A ledger value as a certificate writes it: a time as its UTC instant
    (`2026-11-26T04:22:53.123456Z`; Spark gives naive local times), a decimal as a number."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _rewrite(spark: Any, schema: str, table: str, select: str) -> Any:
    """Overwrite `schema.table` with `select` (over the table as `t`); returns what puts it back."""
    spark.sql(f"create table {schema}.original_{table} using parquet as select * from {schema}.{table}")
    spark.sql(
        f"create table {schema}.tampered_{table} using parquet as {select.format(t=f'{schema}.{table}')}"
    )
    spark.sql(f"insert overwrite table {schema}.{table} select * from {schema}.tampered_{table}")

    def restore() -> None:
        spark.sql(f"insert overwrite table {schema}.{table} select * from {schema}.original_{table}")
        spark.sql(f"drop table {schema}.tampered_{table}")
        spark.sql(f"drop table {schema}.original_{table}")
        spark.catalog.clearCache()

    return restore


def _changed(spark: Any, schema: str, table: str, column: str, expression: str, where: str) -> Any:
    columns = [f.name for f in spark.table(f"{schema}.{table}").schema.fields]
    select = ", ".join(
        f"case when {where} then {expression} else {c} end as {c}" if c == column else c for c in columns
    )
    return _rewrite(spark, schema, table, f"select {select} from {{t}}")


def _file_edit(path: Path, edit: Any) -> Any:
    original = path.read_bytes()
    path.write_bytes(edit(original))
    return lambda: path.write_bytes(original)


def _journal_edit(spark: Any, run: str, with_checksum: bool) -> Any:
    """Edit an outcome file of the purge run `run` in the journal, on the warehouse's filesystem;
    returns what puts it back.

    Without `with_checksum` the file can no longer be read as the journal it was: on the local
    disk its bytes are changed behind the filesystem's back (written past Hadoop's checksummed
    view, its `.crc` left stale, so reading it fails); HDFS and an object store keep no checksum a
    writer can leave stale, so there the file is cut in half (it no longer parses).  With
    `with_checksum` the file is edited as a writer would (on the local disk its `.crc` removed
    too): it is read, and its bytes differ."""
    journal = f"{warehouse(spark)}/_lakehouse_journal/purge"
    (directory,) = [f"{journal}/{n}" for n in warehouse_fs.listdir(spark, journal) if n.endswith(f"-{run}")]
    name = sorted(
        n
        for n in warehouse_fs.listdir(spark, directory)
        if n.startswith(f"{DB}.") and n.endswith(".outcome.json")
    )[0]
    outcome, checksum = f"{directory}/{name}", f"{directory}/.{name}.crc"
    original = warehouse_fs.read_bytes(spark, outcome)
    kept = (
        warehouse_fs.read_bytes(spark, checksum)
        if with_checksum and warehouse_fs.exists(spark, checksum)
        else None
    )
    assert (kept is not None) == (with_checksum and TEST_FS == "file"), "a local journal file has its .crc"
    if kept is not None:
        warehouse_fs.delete(spark, checksum)
    if with_checksum or TEST_FS == "file":
        edited = original.replace(b'"recorded_at": "', b'"recorded_at": "1')
    else:
        edited = original[: len(original) // 2]
    assert edited != original
    if TEST_FS == "file" and not with_checksum:
        # behind the local filesystem's back, as an editor would: its .crc left stale
        Path(outcome.removeprefix("file:")).write_bytes(edited)
    else:
        warehouse_fs.write_bytes(spark, outcome, edited)

    def restore() -> None:
        warehouse_fs.write_bytes(spark, outcome, original)
        if kept is not None:
            warehouse_fs.write_bytes(spark, checksum, kept)
        assert warehouse_fs.read_bytes(spark, outcome) == original

    return restore


def _tamper(spark: Any, schema: str, target: Path, selection: dict[str, Any], tamper: str) -> Any:
    """One change to what the certificate REQ-1 rests on; returns what undoes it."""
    run = selection["purge_invocation_ids"][0]
    attempt = selection["retention_attempt_ids"][0]
    verification = f"verification_id = '{selection['verification_id']}'"
    if tamper == "purge_log added":
        return _rewrite(
            spark, schema, "purge_log",
            f"select * from {{t}} union all (select * from {{t}} where invocation_id = '{run}' limit 1)",
        )  # fmt: skip
    if tamper == "purge_log deleted":
        (victim,) = spark.sql(
            f"select purge_log_id from {schema}.purge_log where invocation_id = '{run}' limit 1"
        ).collect()
        return _rewrite(
            spark, schema, "purge_log", f"select * from {{t}} where purge_log_id != '{victim[0]}'"
        )
    if tamper == "retention_log deleted":
        return _rewrite(
            spark, schema, "retention_log", f"select * from {{t}} where attempt_id != '{attempt}'"
        )
    if tamper.startswith("journal edited"):
        return _journal_edit(spark, run, with_checksum="checksum" in tamper)
    if tamper == "verification_run changed":
        return _changed(
            spark, schema, "erasure_verification_runs", "files_read", "files_read + 1", verification
        )
    if tamper == "verification_locations deleted":
        (victim,) = spark.sql(
            f"select location from {schema}.erasure_verification_locations where {verification} limit 1"
        ).collect()
        return _rewrite(
            spark, schema, "erasure_verification_locations",
            f"select * from {{t}} where not ({verification} and location = '{victim[0]}')",
        )  # fmt: skip
    if tamper == "verification_findings added":
        fields = spark.table(f"{schema}.erasure_verification_findings").schema.fields
        planted = {"verification_id": f"'{selection['verification_id']}'", "request_id": "'REQ-1'"}
        planted["location"] = "'file:/planted'"
        values = ", ".join(
            f"cast({planted.get(f.name, 'null')} as {f.dataType.simpleString()}) as {f.name}" for f in fields
        )
        return _rewrite(
            spark, schema, "erasure_verification_findings", f"select * from {{t}} union all select {values}"
        )
    if tamper == "verification_request changed":
        return _changed(
            spark, schema, "erasure_verification", "live_rows", "live_rows + 1",
            f"{verification} and request_id = 'REQ-1'",
        )  # fmt: skip
    if tamper == ".json edited":

        def edit(data: bytes) -> bytes:
            doc = json.loads(data)
            doc["copies"][0]["deleted_at"] = "2000-01-01T00:00:00.000000Z"
            return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()

        return _file_edit(target / "REQ-1.json", edit)
    if tamper == ".evidence.txt edited":
        return _file_edit(target / "REQ-1.evidence.txt", lambda b: b.replace(b"COMMITTED", b"SKIPPED", 1))
    if tamper == ".md edited":
        return _file_edit(target / "REQ-1.md", lambda b: b + b"\nErased, trust me.\n")
    if tamper == "moved to another warehouse":
        from python_hooks.erasure import certificate

        def elsewhere(data: bytes) -> bytes:
            # a certificate sealed as it would be on another warehouse: only the warehouse differs
            doc = json.loads(data)
            doc["warehouse"]["directory"] = "file:/elsewhere/warehouse"
            doc["evidence"]["seal"] = certificate.seal(doc)
            return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()

        return _file_edit(target / "REQ-1.json", elsewhere)
    raise AssertionError(tamper)
