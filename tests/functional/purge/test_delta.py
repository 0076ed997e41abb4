"""Delta Lake tables in the same `dbt run --select purge+` as the Hive ones (python_hooks/purge/delta.py).

A partitioned Delta table with deletion vectors and the change data feed on, an unpartitioned one
onboarded on a nested identifier, and a Hive table beside them.  Held to the bytes: the current
version's data files (read with pyarrow, outside the product) hold no listed id once the REORG
has run, the log's commitInfo names no id, and the older versions still do (time travel), which
is what docs/formats.md tells the user.  Then a restore takes the table back to its version before
the purge (the ids return, and the next purge removes them again), and one whose files VACUUM has
deleted is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests import warehouse_fs
from tests.functional.purge.conftest import PURGED_IDS, descriptor, last_run, log_rows, purge, remaining_ids

DB = "p_delta"
ID_PATTERN = re.compile(r"\b(" + "|".join(str(i) for i in sorted(PURGED_IDS)) + r")\b")


def ids_in_live_files(spark: Any, table: str, field: str = "guestid") -> set[int]:
    """The listed ids in the bytes of the files the table's current version reads (a row a
    deletion vector hides is still in them)."""
    found: set[int] = set()
    for path in spark.table(table).inputFiles():
        data = warehouse_fs.read_parquet(spark, path).to_pylist()
        for row in data:
            value = row
            for part in field.split("."):
                value = value[part] if value is not None else None
            if value in PURGED_IDS:
                found.add(value)
    return found


def log_entries(spark: Any, table: str) -> list[dict[str, Any]]:
    location = spark.sql(f"describe detail {table}").collect()[0].location
    entries = []
    for path in sorted(warehouse_fs.files(spark, f"{location}/_delta_log")):
        if path.endswith(".json") and "/_delta_log/0" in path:
            text = warehouse_fs.read_bytes(spark, path).decode()
            entries += [json.loads(line) for line in text.splitlines() if line.strip()]
    return entries


def version(spark: Any, table: str) -> int:
    return int(spark.sql(f"describe history {table} limit 1").collect()[0].version)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any, id_table: str) -> Iterator[dict[str, int]]:
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    onboarded = f"'dataset.descriptor' = '{descriptor('guestid')}'"
    spark.sql(f"""create table {DB}.events (guestid bigint, page string, ds string) using delta partitioned by (ds)
        tblproperties ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true', {onboarded})""")
    spark.sql(f"""insert into {DB}.events values
        (1001, 'p1', 'a'), (7, 'p2', 'a'), (1002, 'p3', 'b'), (8, 'p4', 'b'), (9, 'p5', 'c')""")
    nested = f"'dataset.descriptor' = '{descriptor('metadata.guestid')}'"
    spark.sql(f"""create table {DB}.profiles (metadata struct<guestid: bigint>, name string) using delta
        tblproperties ({nested})""")
    spark.sql(f"""insert into {DB}.profiles values
        (named_struct('guestid', 1003L), 'x'), (named_struct('guestid', 11L), 'y')""")
    # partitioned by its identifier: the partition values are ids, and no statement names one
    spark.sql(f"""create table {DB}.by_guest (page string, guestid bigint) using delta partitioned by (guestid)
        tblproperties ('delta.enableDeletionVectors' = 'true', {onboarded})""")
    spark.sql(f"insert into {DB}.by_guest values ('g1', 1002), ('g2', 14), ('g3', 14)")
    spark.sql(
        f"create table {DB}.hive (guestid bigint, page string) stored as parquet tblproperties ({onboarded})"
    )
    spark.sql(f"insert into {DB}.hive values (1001, 'h1'), (12, 'h2')")
    yield {"events": version(spark, f"{DB}.events"), "profiles": version(spark, f"{DB}.profiles")}
    spark.sql(f"drop database if exists {DB} cascade")


def restore(args: dict[str, Any], expect_pass: bool = True) -> str:
    """`dbt run-operation restore --args <args>`; its captured log."""
    _, log = run_dbt_and_capture(
        ["run-operation", "restore", "--args", json.dumps(args)], expect_pass=expect_pass
    )
    return log


class TestDeltaPurge:
    def test_a_dry_run_says_what_it_would_delete_and_changes_no_version(self, project, spark, lake):
        _, log = purge(DB, purge_dry_run=True)
        assert (
            f"purge: {DB}.events (Delta): DRY_RUN, would delete 2 row(s) in 2 partition(s), then REORG the"
            " files that still carry deletion vectors"
        ) in log
        assert f"purge: {DB}.profiles (Delta): DRY_RUN, would delete 1 row(s) in 1 partition(s)\n" in log
        # the statements it would run, touched partitions only
        assert (
            "on a.`guestid` = b.`guestid`\n    and ((a.`ds` = 'a') or (a.`ds` = 'b'))\nwhen matched then delete"
            in log
        )
        assert f"reorg table `{DB}`.`events`\nwhere (`ds` = 'a') or (`ds` = 'b')\napply (purge);" in log
        # ... unless the partition values are ids: the whole table, by the join alone
        assert "on a.`guestid` = b.`guestid`\nwhen matched then delete" in log
        assert f"reorg table `{DB}`.`by_guest`\napply (purge);" in log
        assert (version(spark, f"{DB}.events"), version(spark, f"{DB}.profiles")) == (
            lake["events"],
            lake["profiles"],
        )
        assert remaining_ids(spark, f"{DB}.events") == 2

    def test_one_command_purges_hive_and_delta_tables(self, project, spark, lake):
        purge(DB)
        assert remaining_ids(spark, f"{DB}.events") == 0 and remaining_ids(spark, f"{DB}.hive") == 0
        assert (
            spark.sql(f"select count(*) from {DB}.profiles where metadata.guestid = 1003").collect()[0][0]
            == 0
        )
        assert sorted(r.page for r in spark.table(f"{DB}.events").collect()) == ["p2", "p4", "p5"]
        rows = {(r.table_name, r.partition_spec): r for r in last_run(log_rows(spark, project, DB))}
        assert {k: (r.state, r.rows_purged) for k, r in rows.items()} == {
            ("events", "ds=a"): ("COMMITTED", 1),
            ("events", "ds=b"): ("COMMITTED", 1),
            ("profiles", None): ("COMMITTED", 1),
            ("by_guest", "guestid=1002"): ("COMMITTED", 1),
            ("hive", None): ("COMMITTED", 1),
        }
        events = lake["events"]
        assert rows[("events", "ds=a")].reason == (
            # the MERGE rewrote the files (no deletion vector left, no REORG needed)
            f"Delta Lake: version {events} -> {events + 1} (delete); versions up to"
            f" {events} keep the ids until VACUUM removes their files; its log"
            f" ({spark.sql(f'describe detail {DB}.events').first().location}/_delta_log) is cleaned by Delta at a"
            " checkpoint past delta.logRetentionDuration (720 hours)"
        )
        assert rows[("profiles", None)].reason.startswith(
            f"Delta Lake: version {lake['profiles']} -> {lake['profiles'] + 1} (delete);"
        )
        assert rows[("events", "ds=a")].backup_table is None

    def test_the_live_files_hold_no_id_once_the_deletion_vectors_are_purged(self, project, spark, lake):
        assert ids_in_live_files(spark, f"{DB}.events") == set()
        assert ids_in_live_files(spark, f"{DB}.profiles", "metadata.guestid") == set()

    def test_no_id_reaches_the_log_and_the_old_version_still_holds_them(self, project, spark, lake):
        """The delete is a join: commitInfo (the operation's parameters, its predicate) names no
        id.  Time travel still reads them: VACUUM, not the purge, removes the older versions."""
        for table in ("events", "profiles", "by_guest"):
            commits = [e["commitInfo"] for e in log_entries(spark, f"{DB}.{table}") if "commitInfo" in e]
            assert any(c["operation"] == "MERGE" for c in commits), table
            merge = next(c for c in commits if c["operation"] == "MERGE")
            purge_commits = commits[commits.index(merge) :]
            assert not ID_PATTERN.search(json.dumps([c["operationParameters"] for c in purge_commits])), (
                purge_commits
            )
        # the MERGE of the partitioned table joined only the partitions the scan found ids in
        merge = next(
            e["commitInfo"]
            for e in log_entries(spark, f"{DB}.events")
            if e.get("commitInfo", {}).get("operation") == "MERGE"
        )
        assert "ds" in merge["operationParameters"]["predicate"], merge
        old = spark.sql(
            f"select count(*) from {DB}.events version as of {lake['events']} where guestid in (1001, 1002)"
        ).collect()[0][0]
        assert old == 2

    def test_a_run_stopped_between_its_delete_and_its_reorg_is_finished_by_the_next(
        self, project, spark, lake
    ):
        """The delete alone only marks the rows: the bytes still hold the id.  The next purge finds
        no listed id and still purges the marked rows."""
        # one file holding an id and a row to keep: the delete marks the one, the file stays
        spark.sql(
            f"insert into {DB}.events select /*+ COALESCE(1) */ * from values (1003L, 'late', 'c'), (13L, 'keep', 'c')"
        )
        spark.sql(
            f"merge into {DB}.events a using (select distinct guestid from p_ids.ids where guestid is not null) b"
            " on a.guestid = b.guestid when matched then delete"
        )
        assert remaining_ids(spark, f"{DB}.events") == 0
        assert ids_in_live_files(spark, f"{DB}.events") == {1003}
        _, log = purge(DB)
        assert f"purge: {DB}.events (Delta): no listed id" in log
        rows = {(r.table_name, r.partition_spec): r.state for r in last_run(log_rows(spark, project, DB))}
        assert rows[("events", None)] == "SKIPPED"
        assert ids_in_live_files(spark, f"{DB}.events") == set()
        assert sorted(r.page for r in spark.table(f"{DB}.events").collect()) == ["keep", "p2", "p4", "p5"]

    def test_a_restore_s_checks_name_the_versions_and_change_nothing(self, project, spark, lake):
        """A Delta table goes back whole to a version, by Delta's RESTORE: a restore without a
        version, with a partition, to a version the log does not have, or of a Hive table by
        version, is refused and changes nothing."""
        before = version(spark, f"{DB}.events")
        log = restore({"table": f"{DB}.events"}, expect_pass=False)
        assert f"restore of {DB}.events (Delta Lake) needs `version`: its versions are {before} (" in log
        log = restore({"table": f"{DB}.events", "partition": "ds=a"}, expect_pass=False)
        assert (
            "it is a Delta Lake table, which goes back whole to one of its versions; `partition` is for"
            in log
        )
        log = restore({"table": f"{DB}.events", "version": 99}, expect_pass=False)
        assert f"Cannot restore {DB}.events to version 99: the table has no such version in its log" in log
        log = restore({"table": f"{DB}.hive", "version": 1}, expect_pass=False)
        assert f"restore of {DB}.hive: `version` is for Delta Lake and Iceberg tables" in log
        assert version(spark, f"{DB}.events") == before and remaining_ids(spark, f"{DB}.events") == 0

    def test_a_restore_brings_the_ids_back_until_the_next_purge(self, project, spark, lake):
        log = restore({"table": f"{DB}.events", "version": lake["events"]})
        assert f"Restored {DB}.events (Delta Lake) to version {lake['events']}, from version" in log
        assert remaining_ids(spark, f"{DB}.events") == 2
        assert spark.sql(f"describe history {DB}.events limit 1").collect()[0].operation == "RESTORE"
        events = spark.sql(
            f"select * from {project.test_schema}.erasure_events where event = 'restore' and database_name = '{DB}'"
        ).collect()
        assert [(e.table_name, e.backup_table) for e in events] == [
            ("events", f"{DB}.events@v{lake['events']}")
        ]
        purge(DB)
        assert remaining_ids(spark, f"{DB}.events") == 0
        assert ids_in_live_files(spark, f"{DB}.events") == set()

    def test_a_version_whose_files_were_vacuumed_is_refused(self, project, spark, lake):
        spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = false")
        try:
            spark.sql(f"vacuum {DB}.events retain 0 hours")
        finally:
            spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = true")
        before = version(spark, f"{DB}.events")
        log = restore({"table": f"{DB}.events", "version": lake["events"]}, expect_pass=False)
        assert f"Cannot restore {DB}.events to version {lake['events']}:" in log
        assert "of the data files it reads are gone (VACUUM deleted them" in log
        assert version(spark, f"{DB}.events") == before and remaining_ids(spark, f"{DB}.events") == 0
