"""The pure parts of python_hooks.retention.engine / restore / metastore (no Spark)."""

import pytest

from python_hooks.catalog import clock, layout, side_tables
from python_hooks.catalog.filesystem import path_within
from python_hooks.errors import LakehouseError
from python_hooks.restore import plan as restore
from python_hooks.retention import policy as retention


def test_side_table_names():
    assert side_tables.side_table("event_backup_1700000000000") == ("event", "backup", 1700000000000)
    assert side_tables.side_table("my_staging_table_staging_1700000000000") == (
        "my_staging_table",
        "staging",
        1700000000000,
    )
    assert side_tables.side_table("event_trash_17") is None
    assert side_tables.side_table("event") is None


def test_roots_strip_the_run_directories_of_unpartitioned_purges():
    assert layout.table_root("file:/w/db.db/t/1700000000000/1700000086400") == "file:/w/db.db/t"
    assert layout.table_root("file:/w/db.db/t") == "file:/w/db.db/t"
    assert layout.table_root("file:/w/db.db/t/_purge_1700000000000/_purge_1700000086400") == "file:/w/db.db/t"
    assert layout.table_root("file:/w/db.db/t/1700000000000/_purge_1700000086400") == "file:/w/db.db/t"
    assert layout.table_root("file:/w/db.db/t/_purge_17") == "file:/w/db.db/t/_purge_17"
    # the layout that Hive's reader reads: beside the root, never nested
    assert layout.table_root("file:/w/db.db/t__purge_1700000086400") == "file:/w/db.db/t"
    assert layout.table_root("file:/w/db.db/t/_purge_1700000000000__purge_1700000086400") == "file:/w/db.db/t"
    assert layout.unpartitioned_rewrite("s3a://b/w/db.db/t__purge_1700000000000", 1700000086400) == (
        "s3a://b/w/db.db/t__purge_1700000086400"
    )
    assert (
        layout.unpartitioned_rewrite("hdfs://nn/w/db.db/t/_purge_1700000000000", 17)
        == "hdfs://nn/w/db.db/t__purge_17"
    )
    parent, names = layout.family("file:/w/db.db/t")
    assert parent == "file:/w/db.db"
    assert [
        n
        for n in ("t", "t__purge_1700000000000", "t__v3", "t2", "t__purge_17", "t_backup_1700000000000")
        if names.fullmatch(n)
    ] == [
        "t",
        "t__purge_1700000000000",
        "t__v3",
    ]
    assert path_within("file:/w/t/a", "file:/w/t") and not path_within("file:/w/t2", "file:/w/t")


def test_partition_dates_and_now():
    assert retention.partition_time_ms("2017-02-16-01", "yyyy-MM-dd-HH") == 1487206800000
    assert retention.partition_time_ms("not-a-date", "yyyy-MM-dd") is None
    assert clock.parse_time_ms("1700000000000") == 1700000000000
    assert clock.parse_time_ms("2023-11-14T22:13:20") == 1700000000000
    assert clock.parse_time_ms("2023-11-14T23:13:20+01:00") == 1700000000000


def test_restore_partition_parsing_names_the_columns():
    assert restore.parse_partition("dp=10:00/who=o'b", ["dp", "who"], "db.t") == [
        ("dp", "10:00"),
        ("who", "o'b"),
    ]
    assert restore.parse_partition("WHO=x/dp=a=b", ["dp", "who"], "db.t") == [("dp", "a=b"), ("who", "x")]
    with pytest.raises(
        LakehouseError, match=r"db.t names the columns \['dp'\].*partitioned by \['dp', 'who'\]"
    ):
        restore.parse_partition("dp=1", ["dp", "who"], "db.t")
    with pytest.raises(LakehouseError, match="not of the form dp=<value>"):
        restore.parse_partition("oops", ["dp"], "db.t")


def _attempt(kind, action, table, spec, location, files, size, note=None):
    return {
        "kind": kind,
        "action": action,
        "database_name": "sales",
        "table_name": table,
        "partition_spec": spec,
        "location": location,
        "files_deleted": files,
        "bytes_deleted": size,
        "succeeded": True,
        "note": note,
    }


def test_the_report_lists_a_dry_runs_locations_per_kind_and_only_totals_otherwise():
    from python_hooks.retention.attempts import report

    rows = [
        _attempt("backup", "delete", "orders_backup_1", "d=1", "file:/w/sales.db/orders/d=1", 2, 2048),
        _attempt("trash", "delete", "orders_trash_2", "d=2", "file:/w/sales.db/orders/9/d=2", 1, 10),
        _attempt("backup", "delete", "orders_backup_1", "d=3", "file:/w/sales.db/orders/d=3", 1, 1024),
        _attempt("backup", "keep_data", "orders_backup_1", "d=4", "file:/w/sales.db/orders/d=4", 0, 0),
    ]
    dry = report(rows, True, "inv-1")
    assert dry[0] == "Retention (dry run): would delete 3 location(s), 4 file(s), 3.0 KiB, per kind:"
    # kinds in the order retention works, each with its locations
    assert dry[1:5] == [
        "  trash: 1 location(s), 1 file(s), 10 B",
        "    file:/w/sales.db/orders/9/d=2  (sales.orders_trash_2 partition d=2; 1 file(s), 10 B)",
        "  backup: 2 location(s), 3 file(s), 3.0 KiB",
        "    file:/w/sales.db/orders/d=1  (sales.orders_backup_1 partition d=1; 2 file(s), 2.0 KiB)",
    ]
    assert "would keep the data of 1 expired location(s) still referenced" in dry[-1]
    real = report(rows, False, "inv-1")
    assert real[0] == "Retention: deleted 3 location(s), 4 file(s), 3.0 KiB, per kind:"
    assert not any(line.startswith("    file:") for line in real)
    many = [_attempt("stale", "delete", "orders", None, f"file:/w/o/{i}", 1, 1) for i in range(7)]
    listed = report(many, True, "inv-2", limit=5)
    assert sum(line.startswith("    file:/w/o/") for line in listed) == 5
    assert listed[-1] == (
        "    ... and 2 more: select * from retention_log where invocation_id = 'inv-2' and kind = 'stale'"
    )


def test_run_retention_takes_dry_run_only_as_a_parsed_boolean():
    from python_hooks.errors import ConfigError
    from python_hooks.retention import engine

    # checked before the session is touched: the string "ture" never runs a real pass
    with pytest.raises(ConfigError, match="dry_run is 'ture', not a boolean"):
        engine.run_retention(None, "inv", {}, {}, dry_run="ture")
    with pytest.raises(ConfigError, match="Var retention_progress_seconds is 'often'"):
        engine.run_retention(None, "inv", {}, {}, dry_run=False, progress_seconds="often")


class _Protection:
    """No location referenced but the reaped partition (Protection's interface, without Spark)."""

    def __init__(self, entries):
        self.entries = entries

    def blocker(self, path):
        return None


def _reap_on(monkeypatch, atomic, fail_delete=False):
    """Reap one backup partition with the filesystem and metastore calls recorded, in order."""
    from dataclasses import dataclass

    from python_hooks.catalog import filesystem, metastore
    from python_hooks.catalog.metastore import Partition, Table
    from python_hooks.retention.attempts import AttemptLog
    from python_hooks.retention.deletion import Deleter

    calls = []
    source = "s3a://b/w/db.db/t/dp=a"

    def deleted(spark, path, recursive=True):
        calls.append(("delete", path))
        if fail_delete:
            raise OSError("503 Slow Down")
        return {"deleted": True, "files": 1, "bytes": 10}

    monkeypatch.setattr(filesystem, "qualify", lambda spark, path: path.rstrip("/"))
    monkeypatch.setattr(filesystem, "renames_atomically", lambda spark, path: atomic)
    monkeypatch.setattr(filesystem, "summary", lambda spark, path: {"files": 1, "dirs": 0, "bytes": 10})
    monkeypatch.setattr(filesystem, "exists", lambda spark, path: False)
    monkeypatch.setattr(filesystem, "move", lambda spark, s, d: calls.append(("move", s, d)))
    monkeypatch.setattr(filesystem, "copy", lambda spark, s, d: calls.append(("copy", s, d)))
    monkeypatch.setattr(filesystem, "delete", deleted)
    monkeypatch.setattr(
        metastore, "set_partition_location", lambda spark, db, t, pairs, d: calls.append(("repoint", d))
    )

    @dataclass
    class Entry:
        owner: tuple
        location: str
        covers_inside: bool = True
        stale: bool = False

    part = Partition([("dp", "a")], source)
    table = Table("db", "t_backup_5", "MANAGED", "s3a://b/w/db.db/t_backup_5", ["dp"], [part])
    log = AttemptLog("inv", False)
    deleter = Deleter(
        None, False, log, _Protection([Entry(("db", "t_backup_5", "dp=a"), source)]), "s3a://b/s"
    )
    deleter.reap(table, 5, part, "s3a://b/reaped/db/t", ["s3a://b/w/db.db/t"])
    return calls, deleter, log


def test_reaping_on_an_object_store_copies_repoints_then_deletes(monkeypatch):
    # a rename there is a copy and a delete per object: a failure midway would leave the backup's
    # metadata pointing at a source already partly deleted
    calls, deleter, _ = _reap_on(monkeypatch, atomic=False)
    destination = "s3a://b/reaped/db/t/5/dp=a"
    assert calls == [
        ("copy", "s3a://b/w/db.db/t/dp=a", destination),
        ("repoint", destination),
        ("delete", "s3a://b/w/db.db/t/dp=a"),
    ]
    assert deleter.orphans == []
    # where a directory rename is one step (local disk, HDFS), it stays a rename
    calls, _, _ = _reap_on(monkeypatch, atomic=True)
    assert calls == [("move", "s3a://b/w/db.db/t/dp=a", destination), ("repoint", destination)]


def test_a_reaped_source_that_cannot_be_deleted_is_recorded_not_orphaned(monkeypatch):
    calls, deleter, _ = _reap_on(monkeypatch, atomic=False, fail_delete=True)
    assert [c[0] for c in calls] == ["copy", "repoint", "delete"]
    [orphan] = deleter.orphans
    assert orphan["location"] == "s3a://b/w/db.db/t/dp=a" and "503 Slow Down" in orphan["reason"]
