"""Retention's protected locations: qualified as the filesystem qualifies them, without a JVM
call per partition where the location is already in qualified form, and listed only when a pass
first needs them."""

from __future__ import annotations

from python_hooks.catalog import filesystem
from python_hooks.catalog.metastore import Partition, Table
from python_hooks.retention.protection import Protected, Protection


def test_every_location_is_qualified_as_the_filesystem_does(spark, tmp_path, monkeypatch):
    root = filesystem.qualify(spark, str(tmp_path))
    protection = Protection(spark, [])
    locations = [
        f"{root}/t/ds=a",  # learns the prefix through the filesystem
        f"{root}/t/ds=b",
        f"{root}/t/ds=2024-01-01 10%3A00/hr=o'b",
        f"{root}/t/ds=c/",
        f"{root}/t//ds=d",
        f"{root}/t/./ds=e",
        f"{root}/t/x/../ds=f",
        str(tmp_path / "t" / "ds=g"),  # no scheme
        "file://" + str(tmp_path / "t" / "ds=h"),  # an empty authority
    ]
    expected = [filesystem.qualify(spark, location) for location in locations]
    calls = []
    real = filesystem.qualify

    def counted(session, location):
        calls.append(location)
        return real(session, location)

    monkeypatch.setattr(filesystem, "qualify", counted)
    assert [protection.qualify(location) for location in locations] == expected
    # the first location in qualified form, and only the ones that need normalising, go to the JVM
    assert calls == [locations[i] for i in (0, 4, 5, 6, 7, 8)]


def test_the_locations_are_listed_on_first_use_with_what_came_before(spark, tmp_path):
    root = filesystem.qualify(spark, str(tmp_path))
    listings = []

    def tables():
        listings.append(1)
        parts = [Partition([("ds", v)], f"{root}/db.db/t/ds={v}") for v in ("a", "b")]
        return [Table("db", "t", "MANAGED", f"{root}/db.db/t", ["ds"], parts)]

    protection = Protection(spark, tables)
    # before the listing: a stale record not yet due, and a dry run's drop of partition b
    protection.add(Protected(f"{root}/stale/x", ("db", "t (stale)", None), True, stale=True))
    protection.forget("db", "t", "ds=b")
    assert listings == [] and not protection.listed
    assert protection.blocker(f"{root}/db.db/t/ds=a/part-0.parquet").owner == ("db", "t", "ds=a")
    assert protection.listed and listings == [1]
    assert protection.blocker(f"{root}/db.db/t/ds=b") is None  # forgotten before the listing
    assert protection.blocker(f"{root}/stale/x/y").stale  # added before the listing
    # the table's own directory is protected as itself, not what lies inside it
    assert protection.blocker(f"{root}/db.db/t").owner == ("db", "t", None)
    assert protection.blocker(f"{root}/db.db/t/ds=c") is None
    protection.forget("db", "t", "ds=a")
    assert protection.blocker(f"{root}/db.db/t/ds=a") is None
    assert listings == [1]  # listed once
