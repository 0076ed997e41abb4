"""Apache Iceberg tables in the same `dbt run --select purge+` as the Hive and Delta ones
(python_hooks/purge/iceberg.py), through Iceberg's catalog `iceberg` over the same metastore.

A partitioned merge-on-read table (format 2, its MERGE writing position deletes) and an
unpartitioned copy-on-write one on a nested identifier, created as docs/formats.md says.  Held to
the bytes: after the purge the data files of the current snapshot (read with pyarrow, outside the
product) hold no listed id, and no delete file is left in the touched partitions; the older
snapshot still reads the ids (time travel) until expire_snapshots.  A run stopped between the
delete and the rewrite is finished by the next, whether that one finds ids elsewhere or none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests import warehouse_fs
from tests.functional.purge.conftest import PURGED_IDS, descriptor, last_run, log_rows, purge, remaining_ids

DB = "p_ice"


def ice(table: str) -> str:
    return f"iceberg.{DB}.{table}"


def ids_in_live_files(spark: Any, table: str, field: str = "guestid") -> set[int]:
    """The listed ids in the bytes of the data files the current snapshot references (a row a
    position delete hides is still in them)."""
    found: set[int] = set()
    for (path,) in spark.sql(f"select file_path from {ice(table)}.data_files").collect():
        for row in warehouse_fs.read_parquet(spark, path).to_pylist():
            value = row
            for part in field.split("."):
                value = value[part] if value is not None else None
            if value in PURGED_IDS:
                found.add(value)
    return found


def restore(args: dict[str, Any], expect_pass: bool = True) -> str:
    """`dbt run-operation restore --args <args>`; its captured log."""
    _, log = run_dbt_and_capture(
        ["run-operation", "restore", "--args", json.dumps(args)], expect_pass=expect_pass
    )
    return log


def delete_files(spark: Any, table: str) -> int:
    return int(spark.sql(f"select count(*) from {ice(table)}.delete_files").collect()[0][0])


def snapshots(spark: Any, table: str) -> list[int]:
    rows = spark.sql(f"select snapshot_id from {ice(table)}.snapshots order by committed_at").collect()
    return [int(r.snapshot_id) for r in rows]


def plant_equality_delete(spark: Any, table: str, partition: str, guest: int) -> None:
    """An equality delete file of `guestid` = `guest` in `partition`, written with pyarrow (the
    column with its Iceberg field id) and committed through Iceberg's own API."""
    import pyarrow as pa

    location = str(
        spark.sql(f"describe table extended {ice(table)}").where("col_name = 'Location'").first().data_type
    )
    path = f"{location}/data/{partition}/planted-equality-deletes.parquet"
    field = pa.field("guestid", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"})
    warehouse_fs.write_parquet(spark, path, pa.table({"guestid": [guest]}, schema=pa.schema([field])))
    jvm = spark._jvm
    loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, ice(table))
    field_ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    field_ids[0] = loaded.schema().findField("guestid").fieldId()
    deletes = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(loaded.spec())
        .ofEqualityDeletes(field_ids)
        .withPath(warehouse_fs.qualify(spark, path))
        .withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
        .withFileSizeInBytes(len(warehouse_fs.read_bytes(spark, path)))
        .withRecordCount(1)
        .withPartitionPath(partition)
        .build()
    )
    loaded.newRowDelta().addDeletes(deletes).commit()


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any, id_table: str) -> Iterator[dict[str, int]]:
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    onboarded = f"'dataset.descriptor' = '{descriptor('guestid')}'"
    spark.sql(f"""create table {ice("events")} (guestid bigint, page string, ds string) using iceberg
        partitioned by (ds)
        tblproperties ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
            'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read', {onboarded})""")
    # one file per partition holding an id and rows to keep: a delete can only mark the id's row
    spark.sql(f"""insert into {ice("events")} select /*+ REPARTITION(1) */ * from values
        (1001, 'p1', 'a'), (7, 'p2', 'a'), (1002, 'p3', 'b'), (8, 'p4', 'b'), (9, 'p5', 'c') as t(guestid, page, ds)""")
    nested = f"'dataset.descriptor' = '{descriptor('metadata.guestid')}'"
    spark.sql(f"""create table {ice("profiles")} (metadata struct<guestid: bigint>, name string) using iceberg
        tblproperties ({nested})""")
    spark.sql(f"""insert into {ice("profiles")} values
        (named_struct('guestid', 1003L), 'x'), (named_struct('guestid', 11L), 'y')""")
    onboarded_hive = f"tblproperties ({onboarded})"
    spark.sql(f"create table {DB}.hive (guestid bigint, page string) stored as parquet {onboarded_hive}")
    spark.sql(f"insert into {DB}.hive values (1001, 'h1'), (12, 'h2')")
    yield {"events": snapshots(spark, "events")[-1], "profiles": snapshots(spark, "profiles")[-1]}
    for table in ("events", "profiles"):
        spark.sql(f"drop table if exists {ice(table)} purge")
    spark.sql(f"drop database if exists {DB} cascade")


def holds_a_listed_id(text: str) -> bool:
    """Whether `text` holds a listed id as a number of its own (not digits of a longer one)."""
    return re.search(rf"(?<![0-9])(?:{'|'.join(str(i) for i in PURGED_IDS)})(?![0-9])", text) is not None


class TestIcebergPurge:
    def test_the_session_reaches_iceberg_tables_and_the_metastore_lists_them(self, project, spark, lake):
        """docs/formats.md's settings: Iceberg's catalog over the same metastore, its tables listed
        beside the Hive ones, their descriptor readable as a table property."""
        names = {r.tableName for r in spark.sql(f"show tables in {DB}").collect()}
        assert {"events", "profiles", "hive"} <= names
        properties = {r.key: r.value for r in spark.sql(f"show tblproperties {DB}.events").collect()}
        assert properties["table_type"].upper() == "ICEBERG" and "dataset.descriptor" in properties

    def test_a_dry_run_says_what_it_would_delete_and_changes_no_snapshot(self, project, spark, lake):
        _, log = purge(DB, purge_dry_run=True)
        assert (
            f"purge: {DB}.events (Iceberg): DRY_RUN, would delete 2 row(s) in 2 partition(s) and rewrite"
            " the files their delete files apply to"
        ) in log
        assert f"purge: {DB}.profiles (Iceberg): DRY_RUN, would delete 1 row(s) in 1 partition(s)" in log
        assert f"merge into `iceberg`.`{DB}`.`events` as a" in log
        assert "and ((a.`ds` = 'a') or (a.`ds` = 'b'))" in log
        # the listed ids' range, by which Iceberg's file statistics skip files, shown masked: no
        # log line holds a listed id
        assert "`guestid` between <smallest listed id> and <largest listed id>" in log
        assert not holds_a_listed_id(log)
        assert (
            f"call `iceberg`.system.rewrite_data_files(\n    table => '{DB}.events', where => '(`ds` = \\'a\\') or"
            " (`ds` = \\'b\\')',\n    options => map('delete-file-threshold', '1'"
        ) in log
        assert (snapshots(spark, "events")[-1], snapshots(spark, "profiles")[-1]) == (
            lake["events"],
            lake["profiles"],
        )
        assert remaining_ids(spark, ice("events")) == 2

    def test_one_command_purges_hive_and_iceberg_tables_and_no_live_file_keeps_an_id(
        self, project, spark, lake, logs_dir
    ):
        _, log = purge(DB)
        assert remaining_ids(spark, ice("events")) == 0 and remaining_ids(spark, f"{DB}.hive") == 0
        assert remaining_ids(spark, ice("profiles"), "metadata.guestid") == 0
        assert sorted(r.page for r in spark.table(ice("events")).collect()) == ["p2", "p4", "p5"]
        # the bytes: the merge-on-read delete's position deletes were applied by the rewrite
        assert ids_in_live_files(spark, "events") == set()
        assert ids_in_live_files(spark, "profiles", "metadata.guestid") == set()
        assert delete_files(spark, "events") == 0
        rows = {(r.table_name, r.partition_spec): r for r in last_run(log_rows(spark, project, DB))}
        assert {k: (r.state, r.rows_purged) for k, r in rows.items()} == {
            ("events", "ds=a"): ("COMMITTED", 1),
            ("events", "ds=b"): ("COMMITTED", 1),
            ("profiles", None): ("COMMITTED", 1),
            ("hive", None): ("COMMITTED", 1),
        }
        after = snapshots(spark, "events")[-1]
        assert rows[("events", "ds=a")].reason == (
            f"Apache Iceberg: snapshot {lake['events']} -> {after} (delete, rewrite_data_files,"
            f" rewrite_position_delete_files, rewrite_manifests); snapshots up to {lake['events']} keep the ids"
            " until expire_snapshots removes them"
        )
        assert rows[("profiles", None)].reason.startswith(f"Apache Iceberg: snapshot {lake['profiles']} -> ")
        # copy-on-write: no delete file to rewrite
        assert "(delete, rewrite_manifests);" in rows[("profiles", None)].reason
        # the current snapshot's data manifests list its live data files only: no entry (with its
        # statistics) of a removed one; a removed delete file's stays, whose statistics are of
        # file paths and positions
        statuses = spark.sql(
            f"select status from {ice('events')}.entries where data_file.content = 0"
        ).collect()
        assert {r.status for r in statuses} <= {0, 1}, statuses
        # time travel still reads them: expire_snapshots, not the purge, removes the older ones
        old = spark.sql(
            f"select count(*) from {ice('events')} version as of {lake['events']} where guestid in (1001, 1002)"
        ).collect()[0][0]
        assert old == 2
        assert f"purge: {DB}.events (Iceberg): 2 row(s) deleted; Apache Iceberg: snapshot" in log
        # the MERGE that ran, as dbt's debug log shows it: the id range masked, no listed id
        records = re.split(r"\n(?=\S*\d\d:\d\d:\d\d\.\d+ \[)", (Path(logs_dir) / "dbt.log").read_text())
        merges = [r for r in records if f"purge step delete ({DB}.events, Iceberg)" in r]
        assert merges, "no delete step of the Iceberg table in dbt's log"
        merge = merges[-1]
        assert "between <smallest listed id> and <largest listed id>" in merge, merge
        assert not holds_a_listed_id(merge), merge

    def test_a_run_stopped_between_its_delete_and_its_rewrite_is_finished_by_the_next(
        self, project, spark, lake
    ):
        """The merge-on-read delete alone leaves the id in the data file's bytes; the next purge
        finds no listed id and still rewrites the files the delete files apply to."""
        spark.sql(
            f"insert into {ice('events')} select /*+ REPARTITION(1) */ * from values"
            " (1003L, 'late', 'c'), (13L, 'keep', 'c') as t(guestid, page, ds)"
        )
        spark.sql(
            f"merge into {ice('events')} a using (select distinct guestid from p_ids.ids where guestid is not null) b"
            " on a.guestid = b.guestid when matched then delete"
        )
        assert remaining_ids(spark, ice("events")) == 0
        assert ids_in_live_files(spark, "events") == {1003} and delete_files(spark, "events") == 1
        _, log = purge(DB)
        assert f"purge: {DB}.events (Iceberg): no listed id" in log
        rows = {(r.table_name, r.partition_spec): r.state for r in last_run(log_rows(spark, project, DB))}
        assert rows[("events", None)] == "SKIPPED"
        assert ids_in_live_files(spark, "events") == set() and delete_files(spark, "events") == 0
        assert sorted(r.page for r in spark.table(ice("events")).collect()) == ["keep", "p2", "p4", "p5"]

    def test_a_stopped_run_s_delete_files_go_when_the_next_finds_ids_elsewhere(self, project, spark, lake):
        """A run stopped after its delete in one partition, before its rewrites; the next run's
        scan finds no id there any more (the rows are deleted), only a new one in another
        partition: its rewrites still cover the stopped run's partition, whose data file held the
        id in its bytes."""
        spark.sql(
            f"insert into {ice('events')} select /*+ REPARTITION(1) */ * from values"
            " (1003L, 'stopped', 'c'), (1002L, 'new', 'b') as t(guestid, page, ds)"
        )
        spark.sql(
            f"merge into {ice('events')} a using (select distinct guestid from p_ids.ids where guestid is not null) b"
            " on a.guestid = b.guestid and a.ds = 'c' when matched then delete"
        )
        assert ids_in_live_files(spark, "events") == {1002, 1003} and delete_files(spark, "events") == 1
        _, log = purge(DB)
        assert f"purge: {DB}.events (Iceberg): delete files outside the partitions holding listed ids" in log
        rows = {(r.table_name, r.partition_spec): r.state for r in last_run(log_rows(spark, project, DB))}
        assert rows[("events", "ds=b")] == "COMMITTED" and ("events", "ds=c") not in rows
        assert ids_in_live_files(spark, "events") == set() and delete_files(spark, "events") == 0
        assert sorted(r.page for r in spark.table(ice("events")).collect()) == ["keep", "p2", "p4", "p5"]

    def test_an_equality_delete_file_in_a_touched_partition_goes_with_the_rewrite(self, project, spark, lake):
        """Another writer's equality delete file (as Flink writes them) holds the values it deletes.
        Once the purge's rewrite has applied it to the files it covered, it is dangling, and the
        rewrite drops it: no live delete file is left to hold an id."""
        spark.sql(
            f"insert into {ice('events')} select /*+ REPARTITION(1) */ * from values"
            " (1003L, 'again', 'c') as t(guestid, page, ds)"
        )
        plant_equality_delete(spark, "events", "ds=c", 13)
        assert sorted(r.page for r in spark.table(ice("events")).collect()) == ["again", "p2", "p4", "p5"]
        assert spark.sql(f"select count_if(content = 2) from {ice('events')}.delete_files").first()[0] == 1
        purge(DB)
        assert sorted(r.page for r in spark.table(ice("events")).collect()) == ["p2", "p4", "p5"]
        assert ids_in_live_files(spark, "events") == set() and delete_files(spark, "events") == 0

    def test_onboarding_by_the_command_writes_the_descriptor_where_iceberg_reads_it(
        self, project, spark, lake
    ):
        """The purge reads an Iceberg table's descriptor from Iceberg's own metadata, not from the
        metastore entry: `onboard` commits it there, through Iceberg's catalog."""
        from python_hooks.catalog.iceberg import load

        spark.sql(f"create table {ice('later')} (guestid bigint, page string) using iceberg")
        _, log = run_dbt_and_capture(
            [
                "run-operation",
                "onboard",
                "--args",
                json.dumps({"table": f"{DB}.later", "identifier": "guestid"}),
            ]
        )
        assert f"onboard: {DB}.later now carries dataset.descriptor" in log
        properties = dict(load(spark, DB, "later").properties())
        assert json.loads(properties["dataset.descriptor"])["complianceSpec"]["identifierField"] == "guestid"
        spark.sql(f"drop table {ice('later')} purge")

    def test_a_restore_s_checks_name_the_snapshots_and_change_nothing(self, project, spark, lake):
        """An Iceberg table goes back whole to a snapshot, by Iceberg's rollback_to_snapshot: a
        restore without a snapshot, with a partition, or to one the table does not keep, is refused
        and changes nothing."""
        current = snapshots(spark, "events")[-1]
        log = restore({"table": f"{DB}.events"}, expect_pass=False)
        assert (
            f"restore of {DB}.events (Apache Iceberg) needs `version`, a snapshot id: its snapshots are {current} ("
            in log
        )
        log = restore({"table": f"{DB}.events", "partition": "ds=a"}, expect_pass=False)
        assert "it is an Apache Iceberg table, which goes back whole to one of its snapshots;" in log
        log = restore({"table": f"{DB}.events", "version": 12345}, expect_pass=False)
        assert f"Cannot restore {DB}.events to snapshot 12345: the table keeps no such snapshot" in log
        assert snapshots(spark, "events")[-1] == current

    def test_a_restore_to_the_snapshot_before_the_purge_brings_the_ids_back_until_the_next_purge(
        self, project, spark, lake
    ):
        log = restore({"table": f"{DB}.events", "version": lake["events"]})
        assert f"Restored {DB}.events (Apache Iceberg) to snapshot {lake['events']}" in log
        assert remaining_ids(spark, ice("events")) == 2
        events = spark.sql(
            f"select * from {project.test_schema}.erasure_events where event = 'restore' and database_name = '{DB}'"
        ).collect()
        assert [(e.table_name, e.backup_table) for e in events] == [
            ("events", f"{DB}.events@{lake['events']}")
        ]
        purge(DB)
        assert remaining_ids(spark, ice("events")) == 0 and ids_in_live_files(spark, "events") == set()
