"""The erasure verifier: what it reads comes from the metastore and the filesystem, never from the
purge's logs; what it finds is checked against a direct read of the files (pyarrow), outside the
product's code.

After a real `dbt run --select purge+`: every partition of every onboarded table is read (not only
the rewritten ones), the backups hold exactly the rows their partitions lost, and after retention
at zero nothing holds an id.  Then what no log knows about: ids written into a partition after the
purge (what a wrong fast count that SKIPPED it leaves), an onboarded table outside the whitelist,
an onboarded table named like a side table, a directory only the purge journal names, files under
a table's directory that no partition references, and locations that cannot be read (a file that is
not parquet, a partition-column identifier, a text table, a copy in progress).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt_and_capture

from python_hooks.catalog import files as catalog_files
from python_hooks.catalog.journal import Intent, Journal, PartitionSwap
from python_hooks.erasure import footers
from tests import warehouse_fs
from tests.conftest import beside_warehouse
from tests.functional.erasure.conftest import (
    SEED_TYPES,
    committed,
    descriptor,
    purge,
    purge_runs,
    retention_at_zero,
    run_dbt,
    verify,
)
from tests.functional.erasure.files_scan import Hadoop, scan

IDS = (1001, 1002, 1003)


def _config(id_table: str, scope: str, whitelist: str = "") -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet"}},
        "seeds": {"compliance": {"+file_format": "parquet", "+column_types": SEED_TYPES}},
        "vars": {
            "purge_depends_on": [],
            "purge_whitelist": whitelist,
            "compliance_id_table": id_table,
            "compliance_id_column": "guestid",
            "retention_scope": scope,
            "erasure_verification_scope": scope,
            "audit_enabled": False,
        },
    }


def _files(spark: Any, location: str) -> list[str]:
    return [str(s.getPath().toString()) for s in catalog_files.data_files(spark, location)]


def direct_count(spark: Any, location: str, field: list[str], ids: set[int]) -> int:
    """Rows under a directory whose identifier is one of `ids`, read with pyarrow from the bytes
    the warehouse's filesystem gives (the tests' scanner, not the product)."""
    return sum(scan(Hadoop(spark), [location], set(), ids, field)[1].values())


def latest(spark: Any, schema: str, request_id: str) -> tuple[Any, list[Any], list[Any], Any]:
    """(the request's row, the run's locations, the request's findings, the run) of its latest verification."""
    spark.catalog.clearCache()
    (row,) = spark.sql(f"""
        select * from {schema}.erasure_verification where request_id = '{request_id}'
        order by started_at desc, verification_id desc limit 1""").collect()
    vid = row.verification_id
    locations = spark.sql(
        f"select * from {schema}.erasure_verification_locations where verification_id = '{vid}'"
    ).collect()
    findings = spark.sql(
        f"select * from {schema}.erasure_verification_findings where verification_id = '{vid}' and request_id = '{request_id}'"
    ).collect()
    (run,) = spark.sql(
        f"select * from {schema}.erasure_verification_runs where verification_id = '{vid}'"
    ).collect()
    return row, locations, findings, run


class TestVerifyErasure:
    """A partitioned Hive parquet table with a nested identifier and partition values holding a
    space and a colon, and an unpartitioned one; the id table has no request_id column, so the
    request is the purge run (its invocation_id)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _config("e_ids.ids", "e_verify")

    @pytest.fixture(scope="class")
    def purged(self, project: Any, spark: Any) -> dict[str, Any]:
        for database in ("e_verify", "e_ids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        spark.sql("create table e_ids.ids (guestid bigint) using parquet")
        spark.sql("insert into e_ids.ids values " + ", ".join(f"({i})" for i in IDS) + ", (null)")
        spark.sql(f"""
            create table e_verify.events (metadata struct<guestid: bigint, note: string>, payload string)
            partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("metadata.guestid")}')""")
        for ds, low, high in (
            ("2024-01-01 10:00", 1000, 1010),
            ("2024-01-02", 1002, 1006),
            ("2024-01-03", 2000, 2010),
        ):
            spark.sql(f"""
                insert into e_verify.events partition (ds = '{ds}')
                select named_struct('guestid', id, 'note', 'n'), concat('p', id) from range({low}, {high})""")
        spark.sql(f"""
            create table e_verify.flat (guestid bigint, payload string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql("insert into e_verify.flat select id, 'x' from range(995, 1010)")
        before = {
            "events": {ds: _files(spark, loc) for ds, loc in self._partitions(spark)},
            "flat": _files(spark, self._location(spark, "flat")),
        }
        purge("e_verify", "e_verify")
        (run,) = purge_runs(spark, project.test_schema)
        return {"run": run, "rows": committed(spark, project.test_schema, run), "before": before}

    @staticmethod
    def _partitions(spark: Any) -> list[tuple[str, str]]:
        from python_hooks.catalog import tables

        return [
            (p["values"][0][1], p["location"]) for p in tables.list_partitions(spark, "e_verify", "events")
        ]

    @staticmethod
    def _location(spark: Any, table: str) -> str:
        from python_hooks.catalog import tables

        return tables.describe_table(spark, "e_verify", table)["location"]

    def test_every_partition_is_read_and_the_backups_hold_exactly_the_purged_rows(
        self, project, spark, purged
    ):
        log = verify(purged["run"])
        row, locations, findings, run = latest(spark, project.test_schema, purged["run"])
        live = {r.location: r for r in locations if r.location_kind == "live"}
        # every partition of events (the one the purge never touched too) and flat
        assert set(live) >= {loc for _, loc in self._partitions(spark)} | {self._location(spark, "flat")}
        assert all(r.files_total > 0 and r.error is None for r in live.values())
        assert (row.live_rows, row.unread_live, row.unread_copies) == (0, 0, 0)
        # the backups: each pre-purge copy holds exactly the rows its partition lost
        purged_by_location = {r.old_location: r.rows_purged for r in purged["rows"]}
        found = {f.location: f.rows_holding_ids for f in findings}
        assert found == purged_by_location and all(f.location_kind == "backup" for f in findings)
        assert row.copy_rows == sum(purged_by_location.values()) == 3 + 2 + 3
        # ... and so does a direct read of the files
        for location, n in found.items():
            field = ["guestid"] if "flat" in location else ["metadata", "guestid"]
            assert direct_count(spark, location, field, set(IDS)) == n, location
        assert row.verdict == "COPIES_HOLD_IDS" and "copies hold 8 row(s)" in log
        # the journal names each swap's old and new location too: each location is listed once,
        # with the first kind of the verifier's order (live, then backup, before journal)
        kinds = {warehouse_fs.qualify(spark, r.location): r.location_kind for r in locations}
        assert len(kinds) == len(locations)
        swaps = [
            swap
            for entry in Journal(spark).read_entries()
            if entry.intent.invocation_id == purged["run"]
            for swap in entry.intent.partitions
        ]
        assert sorted(warehouse_fs.qualify(spark, s.old_location) for s in swaps) == sorted(
            warehouse_fs.qualify(spark, r.old_location) for r in purged["rows"]
        )
        for swap in swaps:
            assert kinds[warehouse_fs.qualify(spark, swap.new_location)] == "live", swap
            assert kinds[warehouse_fs.qualify(spark, swap.old_location)] == "backup", swap
        # what it read, recorded
        assert (run.tables_read, run.partitions_read, run.scope) == (2, 3, "e_verify")
        assert run.files_total == sum(r.files_total for r in locations) and run.bytes_total > 0
        assert run.started_at <= run.ended_at
        # counts and locations only: no id is in the result tables
        # (an id as a whole token: a timestamp's microseconds or a file's uuid may hold its digits)
        text = json.dumps([r.asDict() for r in [row, run, *locations, *findings]], default=str)
        text = text.replace(purged["run"], "")
        assert not [i for i in IDS if re.search(rf"(?<![0-9A-Za-z]){i}(?![0-9A-Za-z])", text)], text

    def test_the_model_appends_the_same_result(self, project, spark, purged):
        run_dbt(["run", "--select", "erasure_verification"])
        row, _, findings, run = latest(spark, project.test_schema, purged["run"])
        assert (row.live_rows, row.copy_rows, run.trigger) == (0, 8, "model")
        assert sum(f.rows_holding_ids for f in findings if f.location_kind == "backup") == 8

    def test_an_older_result_table_refuses_the_run_before_anything_is_written(self, project, spark, purged):
        """One of the four result tables made by an older version (other columns): the
        verification names it and how to keep its history, and appends to none of the four."""
        schema = project.test_schema
        findings = f"{schema}.erasure_verification_findings"
        verify(purged["run"])  # the four tables, as this version makes them
        runs_before = spark.sql(f"select count(*) from {schema}.erasure_verification_runs").collect()[0][0]
        spark.sql(f"alter table {findings} rename to {findings}_now")
        try:
            spark.sql(f"create table {findings} (verification_id string, location string) using parquet")
            _, log = run_dbt_and_capture(
                ["run-operation", "verify_erasure", "--args", json.dumps({"request_id": purged["run"]})],
                expect_pass=False,
            )
            assert f"{findings} exists with the columns verification_id string, location string" in log
            assert f"alter table {findings} rename to {findings}_v1" in log
            spark.catalog.clearCache()
            runs = spark.sql(f"select count(*) from {schema}.erasure_verification_runs").collect()[0][0]
            assert runs == runs_before
        finally:
            spark.sql(f"drop table if exists {findings}")
            spark.sql(f"alter table {findings}_now rename to {findings}")

    def test_ids_written_back_into_a_partition_no_log_names_are_found(self, project, spark, purged):
        """What a wrong fast count leaves: a partition the purge SKIPPED that holds ids (here the
        untouched 2024-01-03, written to after the purge); no log names it, the verifier reads it."""
        spark.sql("""insert into e_verify.events partition (ds = '2024-01-03')
            select named_struct('guestid', 1002L, 'note', 'late'), 'late'""")
        verify(purged["run"])
        row, _, findings, _ = latest(spark, project.test_schema, purged["run"])
        (where,) = [f for f in findings if f.location_kind == "live"]
        assert (row.live_rows, row.verdict, where.table_name) == (1, "LIVE_ROWS", "events")
        assert row.live_holding == "e_verify.events: 1"
        spark.sql("""insert overwrite table e_verify.events partition (ds = '2024-01-03')
            select named_struct('guestid', id, 'note', 'n'), concat('p', id) from range(2000, 2010)""")

    def test_after_retention_nothing_holds_an_id_and_the_pre_purge_copies_are_gone(
        self, project, spark, purged
    ):
        retention_at_zero("e_verify")
        verify(purged["run"])
        row, locations, findings, _ = latest(spark, project.test_schema, purged["run"])
        assert findings == [] and (row.live_rows, row.copy_rows, row.verdict) == (0, 0, "NONE_FOUND")
        # retention dropped the backups and deleted the old directories (and forgot their stale
        # records): nothing names them any more, and no data file is left in them
        assert not [r for r in locations if r.location_kind in ("backup", "stale")]
        for old in {r.old_location for r in purged["rows"]}:
            assert not catalog_files.data_files(spark, old), old
        for ds, paths in purged["before"]["events"].items():
            if ds != "2024-01-03":
                assert not any(catalog_files.data_files(spark, p) for p in paths), ds
        assert not any(catalog_files.data_files(spark, p) for p in purged["before"]["flat"])


class TestWhatNoLogNames:
    """Nothing is purged here: the copies are made by hand, as an interrupted run, a rename or a
    forgotten directory leave them, and the verifier must find each from the metastore and the
    filesystem alone."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _config("e_nl_ids.ids", "e_nolog*", whitelist="e_nolog")

    @pytest.fixture(scope="class")
    def lake(self, project: Any, spark: Any) -> dict[str, Any]:
        for database in ("e_nolog", "e_nolog_other", "e_nl_ids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        spark.sql("create table e_nl_ids.ids (guestid bigint, request_id string) using parquet")
        spark.sql("insert into e_nl_ids.ids values (7001, 'R-1'), (7002, 'R-1'), (7003, 'R-2')")
        onboarded = f"tblproperties ('dataset.descriptor' = '{descriptor('guestid')}')"
        # outside the whitelist, onboarded: the purge never touches it, the verifier reads it
        spark.sql(
            f"create table e_nolog_other.visits (guestid bigint, page string) stored as parquet {onboarded}"
        )
        spark.sql("insert into e_nolog_other.visits values (7001, 'a'), (7001, 'b'), (5, 'c')")
        # a user's onboarded table named like a side table, not registered: live data
        spark.sql(
            f"create table e_nolog.orders_backup_202401151200 (guestid bigint, amount double) stored as parquet {onboarded}"
        )
        spark.sql("insert into e_nolog.orders_backup_202401151200 values (7003, 1.0), (6, 2.0)")
        # a partitioned table, and files under its directory that no partition references
        spark.sql(
            f"create table e_nolog.events (guestid bigint, page string) partitioned by (ds string) stored as parquet {onboarded}"
        )
        spark.sql("insert into e_nolog.events partition (ds = 'a') values (8, 'x'), (9, 'y')")
        spark.sql("insert into e_nolog.events partition (ds = 'b') values (7002, 'x'), (10, 'y')")
        from python_hooks.catalog import tables

        root = warehouse_fs.qualify(spark, tables.describe_table(spark, "e_nolog", "events")["location"])
        part_b = warehouse_fs.qualify(
            spark, tables.partition_location(spark, "e_nolog", "events", [["ds", "b"]])
        )
        # a rewrite an interrupted run left under the table: ds=b's files in <L>/1700000000000/ds=b
        orphan = f"{root}/1700000000000/ds=b"
        warehouse_fs.copy_tree(spark, part_b, orphan)
        # a directory only the purge journal names (a pre-purge copy whose backup is gone), beside
        # the warehouse on its filesystem
        copy = warehouse_fs.qualify(spark, beside_warehouse("e_nolog_copies/events_ds_b_old"))
        warehouse_fs.delete(spark, copy)
        warehouse_fs.copy_tree(spark, part_b, copy)
        assert warehouse_fs.data_files(spark, copy) == warehouse_fs.data_files(spark, part_b) != {}
        intent = Intent(
            invocation_id="journal-only-run", purge_ts=1700000000001, database="e_nolog", table="events",
            identifier_field="guestid", staging_table="e_nolog.events_staging_1700000000001",
            staging_location=f"{root}/1700000000001", backup_table="e_nolog.events_backup_1700000000001",
            partitions=[PartitionSwap("ds=b", [["ds", "b"]], copy, part_b)],
        )  # fmt: skip
        journal = Journal(spark)
        journal.record_intent(intent)
        return {"root": root, "orphan": orphan, "copy": copy, "journal": journal, "intent": intent}

    def test_every_onboarded_table_and_every_copy_is_read(self, project, spark, lake):
        run_dbt(["run-operation", "verify_erasure"])
        one, locations, findings, run = latest(spark, project.test_schema, "R-1")
        two, _, findings_two, _ = latest(spark, project.test_schema, "R-2")
        kinds = {(f.location_kind, f.database_name, f.table_name): f.rows_holding_ids for f in findings}
        assert kinds[("live", "e_nolog_other", "visits")] == 2  # outside the whitelist
        assert kinds[("live", "e_nolog", "events")] == 1
        assert one.live_rows == 3 and one.verdict == "LIVE_ROWS"
        by_location = {warehouse_fs.qualify(spark, f.location): f for f in findings}
        # the orphaned rewrite is counted under the table's own directory
        assert by_location[lake["root"]].location_kind == "table_dir"
        assert by_location[lake["copy"]].location_kind == "journal"
        assert by_location[lake["root"]].rows_holding_ids == by_location[lake["copy"]].rows_holding_ids == 1
        # the look-alike is an onboarded table like any other: live, and R-2's id is found in it
        assert [(f.location_kind, f.table_name) for f in findings_two] == [
            ("live", "orders_backup_202401151200")
        ]
        assert two.live_rows == 1
        # what a direct read of the files says
        assert direct_count(spark, lake["orphan"], ["guestid"], {7001, 7002}) == 1
        assert run.requests_verified == 2 and run.tables_read == 3

    def test_a_location_that_cannot_be_read_is_never_counted_as_clean(self, project, spark, lake):
        from python_hooks.catalog import tables

        part_a = warehouse_fs.qualify(
            spark, tables.partition_location(spark, "e_nolog", "events", [["ds", "a"]])
        )
        bad = f"{part_a}/part-99999-not-parquet.parquet"
        warehouse_fs.write_bytes(spark, bad, b"this is not a parquet file")
        try:
            run_dbt(["run-operation", "verify_erasure", "--args", json.dumps({"request_id": "R-2"})])
            row, locations, _, _ = latest(spark, project.test_schema, "R-2")
            (unread,) = [r for r in locations if r.error]
            assert warehouse_fs.qualify(spark, unread.location) == part_a and unread.location_kind == "live"
            assert "could not read" in unread.error
            assert (row.unread_live, row.verdict) == (1, "INCOMPLETE")
            assert unread.location in row.unread_locations
        finally:
            warehouse_fs.delete(spark, bad)
        assert not warehouse_fs.exists(spark, bad)

    def test_a_partition_column_identifier_a_text_table_and_a_copy_in_progress_are_never_clean(
        self, project, spark, lake
    ):
        """An onboarded table whose identifier is a partition column, one stored as text, and a
        copy in progress (`x._COPYING_`, which Spark does not read) in a partition, each holding
        R-2's id: each location is reported unread with the reason, never counted clean, and R-2
        is INCOMPLETE."""
        from python_hooks.catalog import tables

        onboarded = f"tblproperties ('dataset.descriptor' = '{descriptor('guestid')}')"
        part_a = warehouse_fs.qualify(
            spark, tables.partition_location(spark, "e_nolog", "events", [["ds", "a"]])
        )
        copying = f"{part_a}/part-99998.parquet._COPYING_"
        try:
            spark.sql(
                "create table e_nolog.by_guest (page string) partitioned by (guestid bigint)"
                f" stored as parquet {onboarded}"
            )
            spark.sql("insert into e_nolog.by_guest partition (guestid = 7003) values ('x')")
            spark.sql(
                f"create table e_nolog.texts (guestid bigint, page string) stored as textfile {onboarded}"
            )
            spark.sql("insert into e_nolog.texts values (7003, 't')")
            warehouse_fs.write_parquet(
                spark, copying, pa.table({"guestid": pa.array([7003], pa.int64()), "page": ["copying"]})
            )
            spark.sql("refresh table e_nolog.events")
            # Spark's readers skip the copy in progress
            assert spark.sql("select count(*) from e_nolog.events where guestid = 7003").collect()[0][0] == 0
            run_dbt(["run-operation", "verify_erasure", "--args", json.dumps({"request_id": "R-2"})])
            row, locations, findings, _ = latest(spark, project.test_schema, "R-2")
            unread = {r.table_name: r for r in locations if r.error}
            assert sorted(unread) == ["by_guest", "events", "texts"], unread
            assert unread["by_guest"].error == (
                "e_nolog.by_guest: its identifier guestid is a partition column, which data files do not hold"
                " (its partitions' directory names hold the ids)"
            )
            # those directory names are never recorded: the table's own location stands for them
            assert [r.location for r in locations if r.table_name == "by_guest"] == [
                warehouse_fs.qualify(spark, tables.describe_table(spark, "e_nolog", "by_guest")["location"])
            ]
            assert "7003" not in json.dumps([r.asDict() for r in [row, *locations]], default=str)
            assert unread["texts"].error == (
                "e_nolog.texts is not a parquet or ORC table: its files cannot be read here"
            )
            assert unread["events"].error == (
                "could not read: part-99998.parquet._COPYING_ is a copy in progress, which Spark does not"
                " read; its bytes may hold ids: verify again once the copy has ended (or delete the file)"
            )
            assert warehouse_fs.qualify(spark, unread["events"].location) == part_a
            for r in unread.values():
                assert r.location_kind == "live" and r.files_read + r.files_skipped < r.files_total, r
                assert f"live {r.location}: {r.error}" in row.unread_locations
            assert not [f for f in findings if f.location in {r.location for r in unread.values()}]
            assert (row.unread_live, row.verdict) == (3, "INCOMPLETE")
        finally:
            spark.sql("drop table if exists e_nolog.by_guest")
            spark.sql("drop table if exists e_nolog.texts")
            warehouse_fs.delete(spark, copying)


# The clustered partition of TestFooterSkipping: one file per insert, (label, first id, last id)
# or an explicit list of ids.  The ids are 150, 250 and 399.
CLUSTERED_IDS = (150, 250, 399)
CLUSTERED_FILES = [
    ("below", "range(0, 100)"),  # [0, 99]: skipped
    ("holds_150", "range(100, 200)"),
    ("holds_250", "range(200, 300)"),
    ("max_is_399", "range(300, 400)"),  # the id is the file's max: read
    ("above", "range(400, 500)"),  # skipped
    (
        "straddles_150",
        "(select explode(array(140L, 160L)) as id)",
    ),  # min 140 max 160 around 150: read, holds none
    ("nulls_only", "(select explode(array(cast(null as bigint), cast(null as bigint))) as id)"),  # read
    ("far_above", "range(600, 700)"),  # skipped
]
# The sampled table of TestFooterSkipping: per partition, how many files and their ids.  Each of
# p=a's 32 files spans the ids without holding one (its footers cannot rule them out); p=b's
# footers could rule out every id, but come after 32 files of the table none of which was skipped.
SAMPLED_FILES = {"a": (32, "range(100, 500)"), "b": (2, "range(1000, 1200)")}


class TestFooterSkipping:
    """Files with clustered ids: the footers skip the ones that cannot hold an id, and never one
    that may (an id at a file's max, a min/max range straddling an id, a null-only file)."""

    @pytest.fixture(scope="class", params=["parquet", "orc"])
    def storage(self, request: Any) -> str:
        return request.param

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _config("e_fids.ids", "e_foot")

    @pytest.fixture(scope="class")
    def clustered(self, project: Any, spark: Any, storage: str) -> dict[str, Any]:
        """The clustered table's files by label, purged; the sampled table's partition locations (made
        after the purge, which it would leave as it is: it holds no id)."""
        for database in ("e_foot", "e_fids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        spark.sql("create table e_fids.ids (guestid bigint) using parquet")
        spark.sql("insert into e_fids.ids values " + ", ".join(f"({i})" for i in CLUSTERED_IDS))
        spark.sql(f"""
            create table e_foot.clustered (guestid bigint, payload string)
            partitioned by (p string) stored as {storage}
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        from python_hooks.catalog import tables

        named: dict[str, Any] = {}
        seen: set[str] = set()
        for label, source in CLUSTERED_FILES:
            spark.sql(f"""
                insert into e_foot.clustered partition (p = 'a')
                select /*+ COALESCE(1) */ id, 'x' from {source} as ids""")
            location = tables.partition_location(spark, "e_foot", "clustered", [["p", "a"]])
            new = [s for s in catalog_files.data_files(spark, location) if str(s.getPath()) not in seen]
            assert len(new) == 1, (label, new)
            named[label] = new[0]
            seen.add(str(new[0].getPath()))
        purge("e_foot", "e_foot")
        run = purge_runs(spark, project.test_schema)[-1]  # one project for both formats
        spark.sql(f"""
            create table e_foot.sampled (guestid bigint, payload string)
            partitioned by (p string) stored as {storage}
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        listed = ", ".join(str(i) for i in CLUSTERED_IDS)
        for part, (files, source) in SAMPLED_FILES.items():
            spark.sql(f"""
                insert into e_foot.sampled partition (p = '{part}')
                select /*+ REPARTITION({files}) */ id, 'x' from {source} as ids where id not in ({listed})""")
        sampled = {
            part: tables.partition_location(spark, "e_foot", "sampled", [["p", part]])
            for part in SAMPLED_FILES
        }
        return {"run": run, "files": named, "location": location, "sampled": sampled}

    @pytest.fixture(scope="class")
    def verified(
        self, project: Any, spark: Any, clustered: dict[str, Any]
    ) -> tuple[Any, list[Any], list[Any], Any]:
        """`latest` after a verification of the purge's request."""
        verify(clustered["run"])
        return latest(spark, project.test_schema, clustered["run"])

    def test_the_footers_skip_only_files_that_cannot_hold_an_id(
        self, project, spark, clustered, verified, storage
    ):
        _, locations, findings, _ = verified
        (backup,) = [r for r in locations if r.location == clustered["location"]]
        assert backup.location_kind == "backup"
        assert backup.files_total == len(CLUSTERED_FILES)
        assert backup.files_skipped == 3  # below, above, far_above
        assert backup.files_read == len(CLUSTERED_FILES) - 3
        # nothing hidden: the same as reading every file of the partition
        every_row = spark.read.format(storage).load([str(s.getPath()) for s in clustered["files"].values()])
        (held,) = [f.rows_holding_ids for f in findings if f.location == clustered["location"]]
        assert held == every_row.where(every_row[0].isin(*CLUSTERED_IDS)).count() == 3

    def test_a_file_that_may_hold_an_id_is_never_skipped(self, spark, clustered, storage):
        ids = sorted(CLUSTERED_IDS)
        decided = {
            label: footers.may_hold(spark, status, storage, ["guestid"], "int", ids)
            for label, status in clustered["files"].items()
        }
        assert decided == {
            "below": False,
            "holds_150": True,
            "holds_250": True,
            "max_is_399": True,
            "above": False,
            "straddles_150": True,
            "nulls_only": True,
            "far_above": False,
        }
        # no pruning where the types do not allow it, or for a path that is not the identifier's leaf
        status = clustered["files"]["below"]
        assert footers.may_hold(spark, status, storage, ["guestid"], None, ids)
        assert footers.may_hold(spark, status, storage, ["payload"], "int", ids)
        assert footers.may_hold(spark, status, storage, ["guestid", "x"], "int", ids)

    def test_once_32_files_of_a_table_skipped_none_the_rest_is_read_unchecked(
        self, spark, clustered, verified, storage
    ):
        """Once 32 files of a table were checked without one being skipped, the rest of the table is
        read without checking its footers: p=b's files are read, although their footers rule every
        id out."""
        ids = sorted(CLUSTERED_IDS)
        decided = {
            part: [
                footers.may_hold(spark, status, storage, ["guestid"], "int", ids)
                for status in catalog_files.data_files(spark, location)
            ]
            for part, location in clustered["sampled"].items()
        }
        assert decided == {"a": [True] * 32, "b": [False] * 2}
        _, locations, findings, _ = verified
        by_location = {r.location: r for r in locations}
        a, b = (by_location[clustered["sampled"][part]] for part in ("a", "b"))
        assert (a.files_total, a.files_read, a.files_skipped, a.error) == (32, 32, 0, None)
        assert (b.files_total, b.files_read, b.files_skipped, b.error) == (2, 2, 0, None)
        assert not [f for f in findings if f.table_name == "sampled"]


def test_nested_and_string_identifiers_use_only_their_own_leaf(spark, tmp_path):
    """A struct leaf's statistics prune by exact path (case-insensitively, as Spark resolves it);
    a repeated path (inside an array) is always read.  The file is beside the warehouse, on its
    filesystem: the footers are read through it."""
    frame = spark.sql(
        "select named_struct('guestid', concat('g', cast(id as string)), 'n', id) as metadata,"
        " array(named_struct('guestid', 'zzz')) as events from range(100, 110)"
    )
    directory = warehouse_fs.qualify(spark, beside_warehouse(f"nested-{tmp_path.name}"))
    frame.coalesce(1).write.parquet(directory)
    (status,) = catalog_files.data_files(spark, directory)
    kind = footers.id_kind("string", "string")
    outside = footers.sortable_ids(["a1", "zz"], kind)
    inside = footers.sortable_ids(["g105"], kind)
    straddling = footers.sortable_ids(["g100x"], kind)  # between g100 and g109, held by no row
    assert not footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, outside)
    assert not footers.may_hold(spark, status, "parquet", ["Metadata", "GUESTID"], kind, outside)
    assert footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, inside)
    assert footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, straddling)
    assert footers.may_hold(spark, status, "parquet", ["events", "guestid"], kind, outside)
    assert footers.may_hold(spark, status, "parquet", ["metadata"], kind, outside)
    warehouse_fs.delete(spark, directory)


def test_a_directory_is_read_as_one_root_only_when_spark_lists_exactly_its_files(spark):
    """The verifier hands Spark a directory instead of its files when every listed file of it is
    to be read (one root, listed on the driver); Spark's own listing must then be those files,
    else it reads them file by file."""
    from python_hooks.erasure import verification
    from python_hooks.erasure.locations import Reader

    location = beside_warehouse("verify_roots")
    warehouse_fs.delete(spark, location)
    spark.range(0, 10, 1, 2).selectExpr("id as guestid").write.parquet(location)
    files = sorted(_files(spark, location))
    assert len(files) == 2
    reader = Reader("any", "table", "parquet", spark.read.parquet(location).schema)
    decoded = sorted(verification._decoded(f) for f in files)

    def read(paths: list[str], listed: int) -> tuple[list[str], list[str]]:
        directory = paths[0].rsplit("/", 1)[0]
        frame = verification._frame(spark, reader, paths, {directory: listed})
        return verification._roots(paths, {directory: listed}), sorted(
            verification._decoded(f) for f in frame.inputFiles()
        )

    try:
        # both files listed, both to read: the directory, and Spark lists exactly them
        roots, read_files = read(files, 2)
        assert roots == [files[0].rsplit("/", 1)[0]] and read_files == decoded
        # one of the two to read (the footers ruled the other out): file by file
        roots, read_files = read(files[:1], 2)
        assert roots == files[:1] and read_files == decoded[:1]
        # a listing that missed a file Spark sees (written since): Spark's listing differs, so
        # the directory is not read as a whole, only the listed file is
        roots, read_files = read(files[:1], 1)
        assert roots == [files[0].rsplit("/", 1)[0]] and read_files == decoded[:1]
    finally:
        warehouse_fs.delete(spark, location)


@pytest.mark.parametrize(
    "id_type, values",
    [
        ("bigint", ["9223372036854775807", "-9223372036854775808", "0", "0", "1001"]),
        ("int", ["2147483647", "-2147483648", "7", "7"]),
        ("tinyint", ["127", "-128", "127"]),
        # what a collation or a trim would merge, Spark keeps apart: so must the pairs
        ("string", ["'é'", "'e\u0301'", "'a '", "'a'", "'A'", "'😀'", "'😀'", "''"]),
        # floats: Spark makes -0.0 and 0.0, and NaNs, one value each; they stay Spark's to merge
        ("double", ["0.0", "-0.0", "double('NaN')", "double('NaN')", "1.5"]),
        ("decimal(10,2)", ["1.50", "1.5", "2"]),
    ],
)
def test_the_listed_pairs_are_exactly_spark_s_distinct_rows(spark, id_type, values):
    """The verifier collects the listed (id, request) pairs through Arrow and makes them distinct
    in Python for an integer or string id: the pairs (values and Python types) must be the ones
    Spark's own `distinct` and rows give, duplicates and a null request included."""
    from python_hooks.erasure import verification

    rows = ", ".join(f"(cast({v} as {id_type}), {r})" for v in values for r in ("'r1'", "'r2'", "null"))
    listed = spark.sql(f"select * from values {rows} as listed(erasure_id, request_id)")
    listed = listed.union(listed)  # every pair twice
    pairs = verification._distinct_pairs(listed)
    expected = [(r[0], r[1]) for r in listed.distinct().collect()]
    assert len(pairs) == len(expected)
    assert sorted(map(repr, pairs)) == sorted(map(repr, expected))
    assert {type(v) for v, _ in pairs} == {type(v) for v, _ in expected}
