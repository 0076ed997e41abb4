"""`warehouse_changes` (python_hooks/erasure/locations.py), called directly: what the ledger takes
as the purges, restores and writes the metastore, the journal and the files show, each at the
time it happened.  The ledger's `unverified` after a write rests on these rows."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import pytest

from python_hooks.catalog.journal import Intent, Journal, Outcome, PartitionSwap
from python_hooks.catalog.patterns import TablePattern
from python_hooks.erasure.locations import warehouse_changes
from tests import warehouse_fs
from tests.functional.purge.conftest import descriptor

DB = "e_chg"
SCOPE = [asdict(TablePattern.parse(DB))]
# Files get their modification times from the order they are written in, a generation at a time
# with more than a second between generations (an object store keeps whole seconds and has no
# `setTimes`), so the same test runs on the local disk, HDFS and S3: the expected times are the
# newest intended file's, as the filesystem lists it.
GAP = 1.2


def _location(spark, table: str) -> str:
    rows = spark.sql(f"describe formatted {DB}.{table}").where("col_name = 'Location'").collect()
    return warehouse_fs.qualify(spark, rows[0][1])


def _later(spark, *paths: str) -> None:
    """Write `paths` again, after the files written so far: they become the newest."""
    time.sleep(GAP)
    for path in paths:
        warehouse_fs.rewrite(spark, path)


def _us(spark, path: str) -> int:
    return warehouse_fs.modified_ms(spark, path) * 1000


@pytest.fixture
def warehouse(spark) -> Any:
    for database in (DB, f"{DB}_other"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    spark.sql(f"""create table {DB}.events (guestid bigint) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.events partition (ds) values (1, 'a'), (2, 'b')")
    events = _location(spark, "events")
    # an unpartitioned table as a purge leaves it: live at <L>/_purge_<ts>, the old files at <L>
    spark.sql(f"""create table {DB}.flat (guestid bigint) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.flat values (3)")
    flat = _location(spark, "flat")
    flat_old = [f"{flat}/{name}" for name in warehouse_fs.data_files(spark, flat)]
    flat_live = [f"{flat}/_purge_5/{name}" for name in warehouse_fs.data_files(spark, flat)]
    for old, live in zip(flat_old, flat_live, strict=True):
        warehouse_fs.copy_tree(spark, old, live)
    spark.sql(f"alter table {DB}.flat set location '{flat}/_purge_5'")
    # then, in this order: the newest data file of events (in ds=b); the old files of flat,
    # newer than its live ones but not where readers read; a hidden file in events' ds=a, newer
    # than every data file but not a write either
    newest = f"{events}/ds=b/{sorted(warehouse_fs.data_files(spark, f'{events}/ds=b'))[0]}"
    _later(spark, newest)
    _later(spark, *flat_old)
    time.sleep(GAP)
    hidden = f"{events}/ds=a/.part-9.parquet"
    warehouse_fs.write_bytes(spark, hidden, b"x")
    times = {
        "events": _us(spark, newest),
        "flat": max(_us(spark, p) for p in flat_live),
        "ordered": [
            _us(spark, p) for p in (max(flat_live, key=lambda p: _us(spark, p)), newest, *flat_old, hidden)
        ],
    }
    assert times["ordered"] == sorted(set(times["ordered"])), times  # each newer than the one before
    # not onboarded, and out of scope: no rows
    spark.sql(f"create table {DB}.plain (guestid bigint) stored as parquet")
    spark.sql(f"insert into {DB}.plain values (4)")
    spark.sql(f"""create table {DB}_other.events (guestid bigint) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}_other.events values (5)")
    # a registered backup (a purge) and trash (a restore), and a look-alike that is not registered
    for name, kind, created in (("events_backup_1700000100000", "backup", 1_700_000_100_000),
                                ("events_trash_1700000200000", "trash", 1_700_000_200_000)):  # fmt: skip
        spark.sql(f"""create table {DB}.{name} (guestid bigint) partitioned by (ds string) stored as parquet
            tblproperties ('lakehouse.side_table' = '{kind}', 'lakehouse.side_table.of' = '{DB}.events',
                'lakehouse.side_table.created_at' = '{created}', 'lakehouse.side_table.invocation_id' = 'inv-{kind}')""")
    spark.sql(f"create table {DB}.events_staging_1700000150000 (guestid bigint) stored as parquet")
    # a purge journal entry: its intent and its outcome
    journal = Journal(spark)
    intent = Intent(
        invocation_id="inv-journal", purge_ts=1_700_000_400_000, database=DB, table="events",
        identifier_field="guestid", staging_table=f"{DB}.events_staging_1700000400000",
        staging_location=f"{events}/1700000400000", backup_table=f"{DB}.events_backup_1700000400000",
        partitions=[PartitionSwap("ds=a", [["ds", "a"]], f"{events}/ds=a", f"{events}/1700000400000/ds=a")],
        started_at="2023-11-14 22:20:00.000000",
    )  # fmt: skip
    journal.record_intent(intent)
    journal.record_outcome(intent, Outcome(swapped=["ds=a"], recorded_at="2023-11-14 22:21:00.000000"))
    yield {"location": events, "newest": newest, **times}
    warehouse_fs.delete(spark, f"{journal.root.toString()}/{intent.run}")
    for database in (DB, f"{DB}_other"):
        spark.sql(f"drop database if exists {database} cascade")


def test_warehouse_changes_lists_each_purge_restore_and_write_at_its_time(spark, warehouse):
    changes = warehouse_changes(spark, SCOPE)
    found = sorted(
        (c["source"], c["kind"], c["invocation_id"], c["database_name"], c["table_name"], c["happened_us"])
        for c in changes
    )
    assert found == sorted(
        [
            ("side_table", "backup", "inv-backup", DB, "events", 1_700_000_100_000_000),
            ("side_table", "trash", "inv-trash", DB, "events", 1_700_000_200_000_000),
            # the newest data file of each onboarded table, where readers read it
            ("files", "write", None, DB, "events", warehouse["events"]),
            ("files", "write", None, DB, "flat", warehouse["flat"]),
            ("journal", "purge", "inv-journal", DB, "events", 1_700_000_400_000_000),
            ("journal", "purge", "inv-journal", DB, "events", 1_700_000_460_000_000),
        ]
    )


def test_a_write_is_seen_whatever_wrote_it(spark, warehouse):
    """A file copied into a partition by hand, after the rest: the table's write moves to it."""
    copied = f"{warehouse['location']}/ds=a/copied-by-hand.parquet"
    time.sleep(GAP)
    warehouse_fs.copy_tree(spark, warehouse["newest"], copied)
    writes = {
        c["table_name"]: c["happened_us"] for c in warehouse_changes(spark, SCOPE) if c["kind"] == "write"
    }
    assert writes["events"] == _us(spark, copied) > warehouse["events"]
