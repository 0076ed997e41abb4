"""The commit check against a real concurrent writer: another OS process, with a client of its own
on the warehouse's filesystem (the local disk, HDFS or S3), changes a partition's files between
the rewrite and the swap (tests/functional/purge/writer.py).

The fingerprint the check compares is (path, size, modification time, version) of every data
file, the version being the store's mark of one write of the file (an S3 entity tag, an HDFS
file id; none on the local disk), so:
- caught: a file appended, a file deleted, a file replaced with the same name and size (its
  modification time is the time of that write; on S3 its entity tag is new too);
- on HDFS also caught: a file replaced with the same name and size whose old modification time
  is put back (the replacement is a new file, with a new id);
- not caught on the local disk: a file replaced in place with the same name, size AND
  modification time; the purge then swaps to a rewrite of the old bytes, and the writer's change
  is left in the backup only.  `test_a_replacement_keeping_size_and_mtime_is_not_caught` pins
  this limit (docs/safety.md).  S3 sets Last-Modified itself: the case does not exist there.

For a caught change the purge promises: the partition is not swapped, its row is FAILED with the
reason, the backup partition that would point at the live directory is dropped, the rewritten
copy is deleted, the writer's change is still there, and the next run purges the partition.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from python_hooks.catalog import metastore
from tests import warehouse_fs
from tests.conftest import TEST_FS
from tests.functional.purge.conftest import (
    before_commit_check,
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    table_rows,
)
from tests.functional.purge.writer import run as run_writer
from tests.functional.purge.writer import sha256

DB = "p_conc"
A = [["ds", "a"]]
B = [["ds", "b"]]
CAUGHT = ["append", "replace", "delete"]
# table -> (action of the writer, partitioned)
TABLES = {
    **{f"{action}_p": (action, True) for action in CAUGHT},
    **{f"{action}_u": (action, False) for action in CAUGHT},
    # where the writer can put a replaced file's old modification time back (not S3)
    **({"keep_mtime_p": ("replace_keep_mtime", True)} if TEST_FS != "s3a" else {}),
}
# a replacement keeping size and mtime is caught by HDFS's file id; the local disk has no version
KEEP_MTIME_CAUGHT = TEST_FS == "hdfs"
CAUGHT_TABLES = [
    t for t, (action, _) in TABLES.items() if action != "replace_keep_mtime" or KEEP_MTIME_CAUGHT
]


REASON = "the files of the partition changed between the start of the rewrite and the swap"


def make_tables(spark: Any) -> None:
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    for table, (_, partitioned) in TABLES.items():
        # uncompressed, so that the writer can change a value in place without changing the size
        spark.sql(f"""
            create table {DB}.{table} (guestid bigint, payload string)
            {"partitioned by (ds string)" if partitioned else ""} stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}', 'parquet.compression' = 'UNCOMPRESSED')""")
        for ds in ("a", "b") if partitioned else (None,):
            into = f"{DB}.{table}" + (f" partition (ds = '{ds}')" if ds else "")
            # two inserts: at least two files, so that one can be deleted or replaced
            spark.sql(f"insert into {into} select id, concat('p', id) from range(1000, 1005)")
            spark.sql(f"insert into {into} select id, concat('p', id) from range(1005, 1010)")


def as_row(values: dict[str, Any], ds: str | None) -> str:
    """A row as `table_rows` (Spark's to_json) writes it."""
    return json.dumps({**values, **({"ds": ds} if ds else {})}, separators=(",", ":"))


def with_change(rows: list[str], change: dict[str, Any], ds: str | None) -> list[str]:
    """`rows` as the writer left them: its removed rows gone, its added rows there."""
    removed = [as_row(r, ds) for r in change["removed"]]
    kept = list(rows)
    for row in removed:
        kept.remove(row)
    return sorted(kept + [as_row(r, ds) for r in change["added"]])


def partition_rows(rows: list[str], ds: str) -> list[str]:
    return [r for r in rows if json.loads(r).get("ds") == ds]


def writer_before_commit_check(writer: dict[str, str], report: str) -> Any:
    """A hook before the commit check (conftest.before_commit_check): for the
    partitions (or unpartitioned tables) named in `writer`, run the writer process on its live
    directory and wait for it."""

    def before(spark: Any, table: Any, part: Any) -> None:
        action = writer.get(table.name + (f"/{part.path}" if part.path else ""))
        if action:
            run_writer(spark, action, location=part.location, report=report)

    return before


class TestConcurrentWriter:
    @pytest.fixture(scope="class")
    def first_run(self, project, spark, id_table, tmp_path_factory):
        make_tables(spark)
        before = {}
        for table, (_, partitioned) in TABLES.items():
            before[table] = {
                "rows": table_rows(spark, f"{DB}.{table}"),
                "table_location": location(spark, DB, table),
                "location": location(spark, DB, table, A if partitioned else None),
                "other_location": location(spark, DB, table, B) if partitioned else None,
            }
        report = tmp_path_factory.mktemp("writer") / "changes.jsonl"
        writer = {f"{DB}.{t}" + ("/ds=a" if p else ""): action for t, (action, p) in TABLES.items()}
        # whether the run fails is asserted below, so that a broken check fails the tests, not this fixture
        with pytest.MonkeyPatch.context() as patch:
            before_commit_check(patch, writer_before_commit_check(writer, str(report)))
            results, logs = purge(DB, expect_pass=None)
        changes = {}
        for line in report.read_text().splitlines():
            change = json.loads(line)
            table = next(t for t, v in before.items() if v["location"] == change["location"])
            changes[table] = change
        rows = last_run(log_rows(spark, project, DB))
        return {
            "before": before,
            "changes": changes,
            "logs": logs,
            "failed": {r.node.name for r in results if str(r.status) == "error"},
            "rows": {(r.table_name, r.partition_spec): r for r in rows},
            "ts": rows[0].purge_ts,
        }

    def test_the_writer_was_another_process_and_changed_every_table(self, project, spark, first_run):
        changes = first_run["changes"]
        assert set(changes) == set(TABLES)
        assert {c["pid"] for c in changes.values()}.isdisjoint({os.getpid()})
        for table, change in changes.items():
            assert change["action"] == TABLES[table][0]
            assert change["removed"] or change["added"], table
        for table in {"replace_p", "replace_u", "keep_mtime_p"} & set(TABLES):
            change = changes[table]
            assert change["size"] == len(warehouse_fs.read_bytes(spark, change["file"]))  # same size
        if TEST_FS != "s3a":  # S3's Last-Modified has whole seconds: two writes may share one
            assert changes["replace_p"]["mtime_after"] != changes["replace_p"]["mtime_before"]
        if "keep_mtime_p" in TABLES:
            assert changes["keep_mtime_p"]["mtime_after"] == changes["keep_mtime_p"]["mtime_before"]

    @pytest.mark.parametrize("table", CAUGHT_TABLES)
    def test_a_caught_change_is_not_swapped_and_is_cleaned_up(self, project, spark, first_run, table):
        _, partitioned = TABLES[table]
        before, change, ts = first_run["before"][table], first_run["changes"][table], first_run["ts"]
        row = first_run["rows"][(table, "ds=a" if partitioned else None)]
        # not swapped; FAILED with the commit check's reason
        assert location(spark, DB, table, A if partitioned else None) == before["location"]
        assert (row.state, row.new_location, row.rows_after) == ("FAILED", None, None)
        assert "purge" in first_run["failed"]  # a FAILED partition fails the node
        assert row.reason.startswith(REASON)
        # the reason names the writer's file and what it did
        name = change["file"].rsplit("/", 1)[1]
        did = {"append": "added", "delete": "removed"}.get(change["action"], "written again (")
        assert f"{name} {did}" in row.reason, row.reason
        assert row.reason.endswith("(failed in step check_commit, from BACKED_UP)"), row.reason
        assert (
            f"{DB}.{table} {'ds=a' if partitioned else '(unpartitioned)'}: FAILED: {REASON}"
            in first_run["logs"]
        )
        # the rewritten copy is deleted
        staging_dir = (
            f"{before['table_location']}/{ts}/ds=a" if partitioned else f"{before['location']}__purge_{ts}"
        )
        assert not warehouse_fs.exists(spark, staging_dir)
        assert not [t for t in metastore.table_names(spark, DB) if "_staging_" in t]
        # the backup has no partition pointing at the live directory
        backup = metastore.get_table(spark, DB, f"{table}_backup_{ts}")
        if partitioned:
            # only the swapped partition is backed up: its old directory, never the live `ds=a`
            backed_up = {p.location for p in backup.partitions} if backup is not None else None
            assert backed_up == {before["other_location"]}
        # the writer's change is still there, on disk and in what readers see
        if change["action"] == "delete":
            assert not warehouse_fs.exists(spark, change["file"])
        else:
            assert sha256(warehouse_fs.read_bytes(spark, change["file"])) == change["sha256"]
        rows = table_rows(spark, f"{DB}.{table}")
        if partitioned:
            assert partition_rows(rows, "a") == with_change(partition_rows(before["rows"], "a"), change, "a")
            # the other partition, untouched by the writer, was purged and swapped
            other = first_run["rows"][(table, "ds=b")]
            assert other.state == "COMMITTED"
            assert location(spark, DB, table, B) == f"{before['table_location']}/{ts}/ds=b"
            assert partition_rows(rows, "b") == kept_rows(partition_rows(before["rows"], "b"))
        else:
            assert rows == with_change(before["rows"], change, None)

    @pytest.mark.parametrize("table", [t for t, (_, partitioned) in TABLES.items() if not partitioned])
    def test_a_failed_unpartitioned_purge_leaves_no_backup_of_the_live_directory(
        self, project, spark, first_run, table
    ):
        """Its backup would be the whole live directory under a backup's name (counted as a backup
        version by retention): it is forgotten, the live files kept, and its row names no backup."""
        assert metastore.get_table(spark, DB, f"{table}_backup_{first_run['ts']}") is None
        assert first_run["rows"][(table, None)].state == "FAILED"
        assert first_run["rows"][(table, None)].backup_table is None
        assert table_rows(spark, f"{DB}.{table}")  # still reads, its files kept

    @pytest.mark.skipif(
        "keep_mtime_p" not in TABLES or KEEP_MTIME_CAUGHT,
        reason="S3 sets Last-Modified itself" if TEST_FS == "s3a" else f"caught on {TEST_FS} (a new file id)",
    )
    def test_a_replacement_keeping_size_and_mtime_is_not_caught(self, project, spark, first_run):
        """The known limit of a (path, size, mtime) fingerprint: the swap goes ahead with a rewrite of
        the old bytes; the writer's bytes stay in the old directory, which the backup keeps."""
        table = "keep_mtime_p"
        before, change, ts = first_run["before"][table], first_run["changes"][table], first_run["ts"]
        mine = {k: (r.state, r.reason) for k, r in first_run["rows"].items() if k[0] == table}
        assert (table, "ds=a") in first_run["rows"], mine
        assert first_run["rows"][(table, "ds=a")].state == "COMMITTED", mine
        assert location(spark, DB, table, A) == f"{before['table_location']}/{ts}/ds=a"
        live = partition_rows(table_rows(spark, f"{DB}.{table}"), "a")
        assert live == kept_rows(partition_rows(before["rows"], "a"))  # the change is not live
        assert change["file"].rsplit("/", 1)[0] == before["location"]
        backup = table_rows(spark, f"{DB}.{table}_backup_{ts}")
        assert partition_rows(backup, "a") == with_change(partition_rows(before["rows"], "a"), change, "a")

    def test_the_next_run_purges_what_failed_and_keeps_the_writers_change(self, project, spark, first_run):
        after_first = {t: table_rows(spark, f"{DB}.{t}") for t in TABLES}
        purge(DB)
        rows = last_run(log_rows(spark, project, DB))
        states = {(r.table_name, r.partition_spec): r.state for r in rows}
        for table, (_, partitioned) in TABLES.items():
            key = (table, "ds=a" if partitioned else None)
            if table not in CAUGHT_TABLES:  # swapped by the first run: no listed id left
                assert states[key] == "SKIPPED"
            else:
                # 1001 is one of the appended rows: a listed id again; the other tables still hold ids
                assert states[key] == "COMMITTED", key
            assert table_rows(spark, f"{DB}.{table}") == kept_rows(after_first[table]), table
        appended = table_rows(spark, f"{DB}.append_p")
        assert as_row({"guestid": 4242, "payload": "late4242"}, "a") in appended
