"""File-level rewrite: in a partition with listed ids, the files whose footers' min/max rule out
every listed id are copied unchanged into the new directory and only the others are rewritten.

What a user relies on: the same rows are gone as with a whole-partition rewrite (whole rows
compared), the copies are byte-identical to the files they came from, the backup still holds
every old file, and a partition whose files all may hold ids (or a run with the feature off)
is rewritten whole as before."""

from __future__ import annotations

import pytest

from tests import warehouse_fs
from tests.functional.purge.conftest import (
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    table_rows,
)

DB = "p_files"


def data_files(uri: str) -> dict[str, str]:
    """{file name: sha256} of the data files directly in a partition directory."""
    from dbt.adapters.lakehouse.driver import DRIVER

    return warehouse_fs.data_files(DRIVER.running_session(), uri)


def make_table(spark, table: str, stored_as: str = "parquet") -> None:
    spark.sql(f"""
        create table {DB}.{table} (metadata struct<guestid: bigint, session: string>, payload string)
        partitioned by (ds string) stored as {stored_as}
        tblproperties ('dataset.descriptor' = '{descriptor("metadata.guestid")}')""")
    # ds=a: four files of a thousand ids each, only the second can hold 1001..1003;
    # a fifth file whose identifiers are all NULL (which match no id)
    for start in (0, 1000, 2000, 3000):
        spark.sql(f"""insert into {DB}.{table} partition (ds = 'a')
            select /*+ COALESCE(1) */ named_struct('guestid', id, 'session', concat('s', id)), concat('p', id)
            from range({start}, {start + 1000})""")
    spark.sql(f"""insert into {DB}.{table} partition (ds = 'a')
        select /*+ COALESCE(1) */ named_struct('guestid', cast(null as bigint), 'session', 'n'), concat('n', id) from range(0, 10)""")
    # ds=b: both files span the listed ids, so both are rewritten
    for start in (900, 1002):
        spark.sql(f"""insert into {DB}.{table} partition (ds = 'b')
            select /*+ COALESCE(1) */ named_struct('guestid', id, 'session', 'b'), concat('q', id) from range({start}, {start + 200})""")
    # ds=c: no listed id at all
    spark.sql(f"""insert into {DB}.{table} partition (ds = 'c')
        select /*+ COALESCE(1) */ named_struct('guestid', id, 'session', 'c'), 'c' from range(5000, 5100)""")


@pytest.fixture(scope="class")
def lake(project, spark, id_table):
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    make_table(spark, "events")
    make_table(spark, "events_orc", "orc")
    make_table(spark, "events_whole")
    # bucketed: files are named after their buckets, so partitions are rewritten whole
    spark.sql(f"""
        create table {DB}.bucketed (guestid bigint, payload string, ds string) using parquet
        partitioned by (ds) clustered by (guestid) into 2 buckets
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    for start in (0, 1000, 2000):
        spark.sql(f"insert into {DB}.bucketed select id, 'b', 'a' from range({start}, {start + 1000})")
    return DB


class TestFileLevelRewrite:
    def test_clean_files_are_copied_and_only_the_others_rewritten(self, project, spark, lake):
        tables = ("events", "events_orc")
        before = {t: table_rows(spark, f"{DB}.{t}") for t in tables}
        old = {t: {ds: location(spark, DB, t, [["ds", ds]]) for ds in "abc"} for t in tables}
        old_files = {t: {ds: data_files(old[t][ds]) for ds in "ab"} for t in tables}

        _, log = purge(f"{DB}.events, {DB}.events_orc")

        for table in tables:
            # the same rows are gone as a whole-partition rewrite would remove, no other row changed
            assert table_rows(spark, f"{DB}.{table}") == kept_rows(before[table], "metadata.guestid"), table
            new_a = location(spark, DB, table, [["ds", "a"]])
            assert new_a != old[table]["a"]
            files_a = data_files(new_a)
            # the three files outside 1001..1003 and the NULL file: copied byte for byte
            copied = {name: digest for name, digest in files_a.items() if name in old_files[table]["a"]}
            assert len(copied) == 4, (table, sorted(files_a), sorted(old_files[table]["a"]))
            assert all(old_files[table]["a"][name] == digest for name, digest in copied.items())
            # the file that held the ids: rewritten under a new name, one file
            assert len(files_a) == 5
            # ds=b: both files may hold ids, both rewritten (no old name survives)
            files_b = data_files(location(spark, DB, table, [["ds", "b"]]))
            assert files_b and not set(files_b) & set(old_files[table]["b"])
            # ds=c was not touched; the backups still hold every old file, unchanged
            assert location(spark, DB, table, [["ds", "c"]]) == old[table]["c"]
            for ds in "ab":
                assert data_files(old[table][ds]) == old_files[table][ds]

            rows = {
                r.partition_spec: r for r in last_run(log_rows(spark, project, DB)) if r.table_name == table
            }
            assert (rows["ds=a"].state, rows["ds=a"].rows_purged, rows["ds=a"].rows_before) == (
                "COMMITTED",
                3,
                4010,
            )
            assert (rows["ds=b"].state, rows["ds=b"].rows_purged) == (
                "COMMITTED",
                5,
            )  # 1001..1003, 1002..1003
            assert rows["ds=c"].state == "SKIPPED"
            backup = rows["ds=a"].backup_table
            assert spark.sql(f"select count(*) from {backup} where ds = 'a'").collect()[0][0] == 4010
            assert (
                f"{DB}.{table}: file-level rewrite: 3 file(s) that may hold listed ids rewritten, "
                "4 whose footers rule them out copied unchanged"
            ) in log

    def test_the_feature_off_rewrites_whole_partitions(self, project, spark, lake):
        old_a = data_files(location(spark, DB, "events_whole", [["ds", "a"]]))
        before = table_rows(spark, f"{DB}.events_whole")
        _, log = purge(f"{DB}.events_whole", purge_file_level=False)
        assert table_rows(spark, f"{DB}.events_whole") == kept_rows(before, "metadata.guestid")
        new_a = data_files(location(spark, DB, "events_whole", [["ds", "a"]]))
        assert new_a and not set(new_a) & set(old_a)
        assert "file-level rewrite" not in log

    def test_a_value_that_is_not_a_boolean_stops_the_run_before_any_table(self, project, spark, lake):
        old_a = location(spark, DB, "events_whole", [["ds", "a"]])
        _, log = purge(f"{DB}.events_whole", expect_pass=False, purge_file_level="sometimes")
        assert 'Var purge_file_level is "sometimes": expected true or false' in log
        assert location(spark, DB, "events_whole", [["ds", "a"]]) == old_a

    def test_bucketed_tables_are_rewritten_whole(self, project, spark, lake):
        old_a = data_files(location(spark, DB, "bucketed", [["ds", "a"]]))
        before = table_rows(spark, f"{DB}.bucketed")
        _, log = purge(f"{DB}.bucketed")
        assert table_rows(spark, f"{DB}.bucketed") == kept_rows(before)
        new_a = data_files(location(spark, DB, "bucketed", [["ds", "a"]]))
        assert len(old_a) >= 3 and new_a and not set(new_a) & set(old_a)
        assert "file-level rewrite" not in log
