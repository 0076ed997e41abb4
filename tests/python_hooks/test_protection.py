"""Retention's protected locations: qualified as the filesystem qualifies them, without a JVM
call per partition where the location is already in qualified form."""

from __future__ import annotations

from dbt.adapters.lakehouse import filesystem

from python_hooks.retention.protection import Protection


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
