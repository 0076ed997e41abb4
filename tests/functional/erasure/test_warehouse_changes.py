"""`warehouse_changes` (python_hooks/erasure/locations.py), called directly: what the ledger takes
as the purges, restores and writes the metastore, the journal and the files show, each at the
time it happened.  The ledger's `unverified` after a write rests on these rows."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from python_hooks.catalog.journal import Intent, Journal, Outcome, PartitionSwap
from python_hooks.catalog.patterns import TablePattern
from python_hooks.erasure.locations import warehouse_changes
from tests.functional.erasure.files_scan import local_directory
from tests.functional.purge.conftest import descriptor

DB = "e_chg"
# epoch seconds of the files' modification times (whole seconds: every filesystem keeps them)
OLD, NEWEST, FLAT_LIVE, FLAT_OLD, HIDDEN = (
    1_700_000_000,
    1_700_000_500,
    1_700_000_300,
    1_700_000_900,
    1_800_000_000,
)


SCOPE = [asdict(TablePattern.parse(DB))]


def _location(spark, table: str) -> Path:
    rows = spark.sql(f"describe formatted {DB}.{table}").where("col_name = 'Location'").collect()
    return Path(local_directory(rows[0][1]))


def _touch_all(directory: Path, seconds: int) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            os.utime(path, (seconds, seconds))


@pytest.fixture
def warehouse(spark):
    for database in (DB, f"{DB}_other"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    spark.sql(f"""create table {DB}.events (guestid bigint) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.events partition (ds) values (1, 'a'), (2, 'b')")
    events = _location(spark, "events")
    _touch_all(events, OLD)
    newest = sorted((events / "ds=b").glob("part-*"))[0]
    os.utime(newest, (NEWEST, NEWEST))
    # newer than every data file, but hidden from readers: not a write
    (events / "ds=a" / ".part-9.parquet").write_bytes(b"x")
    os.utime(events / "ds=a" / ".part-9.parquet", (HIDDEN, HIDDEN))
    # an unpartitioned table as a purge leaves it: live at <L>/_purge_<ts>, the old files at <L>
    spark.sql(f"""create table {DB}.flat (guestid bigint) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.flat values (3)")
    flat = _location(spark, "flat")
    (flat / "_purge_5").mkdir()
    for item in list(flat.glob("part-*")):
        shutil.copy(item, flat / "_purge_5" / item.name)
    _touch_all(flat, FLAT_OLD)
    _touch_all(flat / "_purge_5", FLAT_LIVE)
    spark.sql(f"alter table {DB}.flat set location 'file:{flat}/_purge_5'")
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
        staging_location=f"file:{events}/1700000400000", backup_table=f"{DB}.events_backup_1700000400000",
        partitions=[PartitionSwap("ds=a", [["ds", "a"]], f"file:{events}/ds=a", f"file:{events}/1700000400000/ds=a")],
        started_at="2023-11-14 22:20:00.000000",
    )  # fmt: skip
    journal.record_intent(intent)
    journal.record_outcome(intent, Outcome(swapped=["ds=a"], recorded_at="2023-11-14 22:21:00.000000"))
    yield
    shutil.rmtree(local_directory(str(journal.root.toString())) + f"/{intent.run}", ignore_errors=True)
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
            ("files", "write", None, DB, "events", NEWEST * 1_000_000),
            ("files", "write", None, DB, "flat", FLAT_LIVE * 1_000_000),
            ("journal", "purge", "inv-journal", DB, "events", 1_700_000_400_000_000),
            ("journal", "purge", "inv-journal", DB, "events", 1_700_000_460_000_000),
        ]
    )


def test_a_write_is_seen_whatever_wrote_it(spark, warehouse):
    """A file copied into a partition by hand, newer than the rest: the table's write moves to it."""
    events = _location(spark, "events")
    copied = events / "ds=a" / "copied-by-hand.parquet"
    shutil.copy(sorted((events / "ds=b").glob("part-*"))[0], copied)
    os.utime(copied, (NEWEST + 60, NEWEST + 60))
    writes = {
        c["table_name"]: c["happened_us"] for c in warehouse_changes(spark, SCOPE) if c["kind"] == "write"
    }
    assert writes["events"] == (NEWEST + 60) * 1_000_000
