"""The pure parts of python_hooks.retention.engine / restore / metastore (no Spark)."""

import pytest
from dbt.adapters.lakehouse.filesystem import path_within

from python_hooks.catalog import side_tables
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
    assert retention.strip_ts("file:/w/db.db/t/1700000000000/1700000086400") == "file:/w/db.db/t"
    assert retention.strip_ts("file:/w/db.db/t") == "file:/w/db.db/t"
    assert (
        retention.strip_ts("file:/w/db.db/t/_purge_1700000000000/_purge_1700000086400") == "file:/w/db.db/t"
    )
    assert retention.strip_ts("file:/w/db.db/t/1700000000000/_purge_1700000086400") == "file:/w/db.db/t"
    assert retention.strip_ts("file:/w/db.db/t/_purge_17") == "file:/w/db.db/t/_purge_17"
    assert path_within("file:/w/t/a", "file:/w/t") and not path_within("file:/w/t2", "file:/w/t")


def test_partition_dates_and_now():
    assert retention.partition_time_ms("2017-02-16-01", "yyyy-MM-dd-HH") == 1487206800000
    assert retention.partition_time_ms("not-a-date", "yyyy-MM-dd") is None
    assert side_tables.now_ms("1700000000000") == 1700000000000
    assert side_tables.now_ms("2023-11-14T22:13:20") == 1700000000000


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
