"""The evidence over Delta Lake tables: every version's bytes, the change data and the log.

Three tables, one request each, purged by the product's Delta purge (a MERGE, then a REORG where
deletion vectors are on):
- `visits`: partitioned, deletion vectors, statistics on the identifier (Delta's default);
- `orders`: the change data feed on, no statistics on the identifier;
- `clicks`: no statistics on the identifier, and a user's own `DELETE ... WHERE guestid = 7001`
  before the purge, whose predicate Delta's log keeps.

After the purge the current versions hold no id, and each request is `copies_remaining`, held by
what its table keeps: the older version's file (time travel), the change data, the log.
Retention's VACUUM, past `backup_retention_days`, is refused under Delta's own horizon unless the
run allows short retentions, and then logged.  After it the files are gone and `orders` is
`erased`; the log still holds the ids of the other two
(statistics, a predicate), and they stay `copies_remaining`.  Before that, a restore of `visits`
to its version before the purge brings its request's id back (`reintroduced`) until a new purge.  A hidden leftover in the log, which
Spark's readers skip, is reported unread and holds `erased` back.  The test reads the bytes itself
(pyarrow, the log's JSON) and agrees with the verifier at each step.
"""

from __future__ import annotations

import glob
import json
import os
from datetime import timedelta
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.functional.erasure.conftest import (
    ZERO,
    certificate_issued_and_verified,
    dbt_log,
    fresh_request,
    project_config,
)
from tests.functional.purge.conftest import descriptor

DB = "e_delta"
IDS = "e_delta_ids.requests"
REQUESTS = {"REQ-A": ("visits", 5001), "REQ-B": ("orders", 6001), "REQ-C": ("clicks", 7001)}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    fresh_request(spark, (DB, "e_delta_ids"), IDS, "REQ-A", [5001])
    spark.sql(
        f"insert into {IDS} select 6001, 'REQ-B', requested_at from {IDS}"
        f" union all select 7001, 'REQ-C', requested_at from {IDS}"
    )
    guest = descriptor("guestid")
    spark.sql(f"""create table {DB}.visits (guestid bigint, page string, ds string) using delta
        partitioned by (ds)
        tblproperties ('delta.enableDeletionVectors' = 'true', 'dataset.descriptor' = '{guest}')""")
    spark.sql(f"insert into {DB}.visits values (5001, 'a', 'd1'), (7, 'b', 'd1'), (8, 'c', 'd2')")
    spark.sql(f"""create table {DB}.orders (guestid bigint, item string) using delta
        tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'false',
        'delta.dataSkippingStatsColumns' = 'item', 'dataset.descriptor' = '{guest}')""")
    spark.sql(f"insert into {DB}.orders values (6001, 'x'), (9, 'y')")
    spark.sql(f"""create table {DB}.clicks (guestid bigint, url string) using delta
        tblproperties ('delta.enableDeletionVectors' = 'false', 'delta.dataSkippingStatsColumns' = 'url',
        'dataset.descriptor' = '{guest}')""")
    spark.sql(f"insert into {DB}.clicks values (7001, 'u'), (10, 'v')")
    spark.sql(f"delete from {DB}.clicks where guestid = 7001")  # a user's own, by a literal
    dbt_log(["seed"])
    yield
    for database in (DB, "e_delta_ids"):
        spark.sql(f"drop database if exists {database} cascade")


def run(select: str, expect_pass: bool = True, **more: Any) -> str:
    variables = {"purge_whitelist": DB, "retention_scope": DB, **more}
    return dbt_log(["run", "--select", select, "--vars", json.dumps(variables)], expect_pass=expect_pass)


def vacuums(spark: Any, schema: str) -> list[Any]:
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.retention_log where kind = 'delta_version' order by attempted_at, table_name"
    ).collect()


def ledger(spark: Any, schema: str) -> dict[str, Any]:
    spark.catalog.clearCache()
    return {r.request_id: r for r in spark.sql(f"select * from {schema}.erasure_requests").collect()}


def held_by(spark: Any, schema: str) -> dict[str, set[tuple[str, str]]]:
    """{request: {(kind, table)}} of the latest verification's findings."""
    rows = spark.sql(f"""select request_id, location_kind, table_name from {schema}.erasure_verification_findings
        where verification_id = (select max(verification_id) from {schema}.erasure_verification_runs)""")
    found: dict[str, set[tuple[str, str]]] = {}
    for row in rows.collect():
        found.setdefault(row.request_id, set()).add((row.location_kind, row.table_name))
    return found


def copies(spark: Any, schema: str) -> dict[tuple[str, str, str], list[Any]]:
    """{(request, table, copy kind): [erasure_copies rows]}."""
    spark.catalog.clearCache()
    found: dict[tuple[str, str, str], list[Any]] = {}
    for row in spark.sql(f"select * from {schema}.erasure_copies order by purged_at").collect():
        found.setdefault((row.request_id, row.table_name, row.copy_kind), []).append(row)
    return found


def directory(spark: Any, table: str) -> str:
    return str(spark.sql(f"describe detail {DB}.{table}").collect()[0].location).removeprefix("file:")


def ids_in_files(spark: Any, table: str, under: str = "") -> set[int]:
    """The ids in the bytes of every parquet file under the table's directory (or `under` it)."""
    found: set[int] = set()
    for path in glob.glob(os.path.join(directory(spark, table), under, "**", "*.parquet"), recursive=True):
        if "_delta_log" not in path:
            found.update(pq.read_table(path, columns=["guestid"]).column("guestid").to_pylist())
    return found


def log_text(spark: Any, table: str) -> str:
    parts = []
    for path in sorted(glob.glob(os.path.join(directory(spark, table), "_delta_log", "*.json"))):
        with open(path, encoding="utf-8") as handle:
            parts.append(handle.read())
    return "\n".join(parts)


class TestDeltaEvidence:
    def test_after_the_purge_older_versions_change_data_and_log_hold_the_ids(self, project, spark, lake):
        run("purge+")
        run("tag:erasure")
        schema = project.test_schema
        rows = ledger(spark, schema)
        for request, (table, guest) in REQUESTS.items():
            assert rows[request].status == "copies_remaining", rows[request]
            assert rows[request].live_rows == 0 and rows[request].unread_locations_count == 0, rows[
                request
            ].unread_locations
            # the current version holds no id, the files of older ones still do
            assert spark.sql(f"select count(*) from {DB}.{table} where guestid = {guest}").first()[0] == 0
            assert guest in ids_in_files(spark, table), table
        held = held_by(spark, schema)
        assert held["REQ-A"] == {("delta_version", "visits"), ("delta_log", "visits")}
        assert held["REQ-B"] == {("delta_version", "orders"), ("delta_change_data", "orders")}
        assert held["REQ-C"] == {("delta_version", "clicks"), ("delta_log", "clicks")}
        # what the log holds, read as text: visits' statistics, clicks' predicate, nothing of orders'
        assert r"\"minValues\":{\"guestid\":5001" in log_text(spark, "visits")  # a JSON string's
        assert "guestid#" in log_text(spark, "clicks") and "7001" in log_text(spark, "clicks")
        assert "6001" not in log_text(spark, "orders")
        assert 6001 in ids_in_files(spark, "orders", "_change_data")
        # the ledger's copies: each touched partition's older versions, due at the VACUUM horizon
        # (backup_retention_days, 7), and each table's log, due when Delta cleans it (30 days); one
        # run served the three requests, so each has the copies of the tables it purged (as a Hive
        # run's); the purge found no id in clicks (the user's own delete had removed it)
        listed = copies(spark, schema)
        purged = ("visits", "orders")
        assert set(listed) == {
            (r, t, k) for r in REQUESTS for t in purged for k in ("delta_version", "delta_log")
        }
        for request, table in ((r, t) for r in REQUESTS for t in purged):
            (version,) = listed[(request, table, "delta_version")]
            (log,) = listed[(request, table, "delta_log")]
            assert version.rows_purged == 1 and version.deleted_at is None, version
            assert version.will_delete_at == version.purged_at + timedelta(days=7), version
            assert version.location.rstrip("/").endswith("ds=d1" if table == "visits" else table), version
            assert log.location == f"file:{directory(spark, table).rstrip('/')}/_delta_log", log
            assert log.will_delete_at == log.purged_at + timedelta(days=30) and log.deleted_at is None, log
            assert "deleted by Delta, not by retention" in log.schedule_note, log
        # the product's own delete, a join, put no id into any commit
        for table, guest in REQUESTS.values():
            commits = [
                json.loads(line) for line in log_text(spark, table).splitlines() if "commitInfo" in line
            ]
            merges = [c["commitInfo"] for c in commits if c["commitInfo"]["operation"] == "MERGE"]
            assert all(str(guest) not in json.dumps(m) for m in merges), table

    def test_a_restore_to_the_version_before_the_purge_reintroduces_the_request(self, project, spark, lake):
        """Delta's RESTORE brings the purged rows back as live data: the next verification finds
        them and the request is `reintroduced` (a clean verification came before); the next purge
        removes them again."""
        history = spark.sql(f"describe history {DB}.visits").collect()
        before_purge = min(r.version for r in history if r.operation == "MERGE") - 1
        dbt_log(
            [
                "run-operation",
                "restore",
                "--args",
                json.dumps({"table": f"{DB}.visits", "version": before_purge}),
            ]
        )
        assert spark.sql(f"select count(*) from {DB}.visits where guestid = 5001").first()[0] == 1
        run("tag:erasure")
        row = ledger(spark, project.test_schema)["REQ-A"]
        assert row.status == "reintroduced" and row.live_rows == 1, row
        assert ("live", "visits") in held_by(spark, project.test_schema)["REQ-A"]
        run("purge+")
        assert spark.sql(f"select count(*) from {DB}.visits where guestid = 5001").first()[0] == 0

    def test_retention_vacuums_past_the_policy_only_when_delta_s_check_is_overridden(
        self, project, spark, lake
    ):
        schema = project.test_schema
        # a horizon of 0 hours, under Delta's own 7 days: refused without retention_allow_short
        said = run("retention+", expect_pass=False, backup_retention_days=0, retention_min_hours=0)
        for table in ("visits", "orders", "clicks"):
            assert (
                f"Delta refuses to VACUUM {DB}.{table} with a horizon of 0 hours (backup_retention_days 0), under"
                " the table's delta.deletedFileRetentionDuration: raise backup_retention_days, or set"
                " retention_allow_short: true"
            ) in said
        assert all(guest in ids_in_files(spark, table) for table, guest in REQUESTS.values())
        run("retention+", **ZERO)
        done = [r for r in vacuums(spark, schema) if r.succeeded and "overridden" in (r.note or "")]
        assert {r.table_name for r in done} == {"visits", "orders", "clicks"}, done
        assert all(r.files_deleted > 0 and not r.dry_run for r in done), done
        assert all("retentionDurationCheck overridden" in r.note for r in done), done

    def test_after_a_vacuum_only_the_log_keeps_ids_and_a_table_without_them_is_erased(
        self, project, spark, lake
    ):
        run("tag:erasure")
        schema = project.test_schema
        for table, guest in REQUESTS.values():
            assert guest not in ids_in_files(spark, table), table
        rows = ledger(spark, schema)
        assert rows["REQ-B"].status == "erased", rows["REQ-B"]
        held = held_by(spark, schema)
        assert held["REQ-A"] == {("delta_log", "visits")}
        assert held["REQ-C"] == {("delta_log", "clicks")}
        assert "REQ-B" not in held
        for request in ("REQ-A", "REQ-C"):
            assert rows[request].status == "copies_remaining", rows[request]
            assert "delta_log" in rows[request].copies_holding, rows[request]
        # the ledger dates each older version's deletion by the VACUUM whose horizon reached back
        # past its purge; a log is never dated by retention (Delta cleans it)
        done = {
            (r.table_name, r.attempted_at) for r in vacuums(spark, schema) if r.succeeded and not r.dry_run
        }
        for (request, table, kind), rows_of in copies(spark, schema).items():
            for row in rows_of:
                if kind == "delta_version":
                    assert (table, row.deleted_at) in done, (request, row)
                else:
                    assert kind == "delta_log" and row.deleted_at is None, (request, row)

    def test_the_certificate_names_the_version_read_and_verifies(self, project, spark, lake):
        doc, markdown = certificate_issued_and_verified(project, "REQ-B")
        live = {t["table"]: t for t in doc["verification"]["live_tables"]}
        current = spark.sql(f"describe history {DB}.orders limit 1").first().version
        assert live[f"{DB}.orders"]["delta_version"] == current, live
        assert {t["delta_version"] is not None for t in live.values()} == {True}, live
        assert f"| {DB}.orders | {current} |" in markdown

    def test_a_hidden_file_in_the_log_is_reported_unread_and_holds_erased_back(self, project, spark, lake):
        leftover = os.path.join(directory(spark, "orders"), "_delta_log", ".00000000000000000099.json.tmp")
        with open(leftover, "w", encoding="utf-8") as handle:
            handle.write(
                '{"add": {"path": "x.parquet", "stats": "{\\"minValues\\": {\\"guestid\\": 6001}}"}}\n'
            )
        try:
            run("tag:erasure")
            row = ledger(spark, project.test_schema)["REQ-B"]
            assert row.status == "live_clean" and row.unread_locations_count == 1, row
            assert ".00000000000000000099.json.tmp is a hidden file of the log" in row.unread_locations
        finally:
            os.remove(leftover)
