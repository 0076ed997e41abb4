"""Data skipping on clustered ids: the purge's scan carries `identifier between <min id> and
<max id>`, which the semi-join implies and Spark pushes down to the parquet reader, so row groups
whose statistics lie outside the listed ids are not read.  The results must not change: whole
rows compared, and a table whose identifier type differs from the id column's gets no range.

Before that, the files' footers narrow the scan (python_hooks/purge/scan.py): a table none of
whose files can hold a listed id is not scanned, one with some is scanned over those files only,
and one the footers cannot vouch for (ids spread over the range, a sub-directory) is scanned
whole.  The purge must be the same either way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import repo_files
from tests.functional.purge.conftest import (
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    remaining_ids,
    table_rows,
)

DB = "p_skip"


def make_tables(spark):
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    spark.sql(f"""
        create table {DB}.clustered (guestid bigint, payload string) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    # one file (one row group) per thousand ids: only the second holds 1001..1003
    for start in (0, 1000, 2000, 3000):
        spark.sql(f"""insert into {DB}.clustered partition (ds = 'a')
            select id, concat('p', id) from range({start}, {start + 1000})""")
    spark.sql(
        f"insert into {DB}.clustered partition (ds = 'b') select id, concat('q', id) from range(5000, 6000)"
    )
    # an int identifier against bigint ids: comparable, but not the same type, so no range
    spark.sql(f"""
        create table {DB}.int_ids (guestid int, payload string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.int_ids select cast(id as int), concat('i', id) from range(995, 1010)")


class TestDataSkipping:
    def test_the_scan_skips_row_groups_outside_the_ids_and_purges_the_same_rows(
        self, project, spark, id_table, logs_dir
    ):
        make_tables(spark)
        before = {t: table_rows(spark, f"{DB}.{t}") for t in ("clustered", "int_ids")}
        self.assert_row_groups_skipped(spark)
        purge(DB)

        for table in ("clustered", "int_ids"):
            assert table_rows(spark, f"{DB}.{table}") == kept_rows(before[table]), table
        rows = last_run(log_rows(spark, project, DB))
        states = {(r.table_name, r.partition_spec): (r.state, r.rows_purged) for r in rows}
        assert states[("clustered", "ds=a")] == ("COMMITTED", 3)
        assert states[("clustered", "ds=b")][0] == "SKIPPED"
        assert states[("int_ids", None)] == ("COMMITTED", 3)

        # the scans as the purge ran them (dbt's debug log)
        log = (Path(logs_dir) / "dbt.log").read_text()
        records = re.split(r"\n(?=\S*\d\d:\d\d:\d\d\.\d+ \[)", log)
        scans = [r for r in records if "left semi join" in r and "as rows_purged" in r and f"`{DB}`" in r]
        clustered = [s for s in scans if "`clustered`" in s]
        assert clustered and all("between 1001 and 1003" in s for s in clustered), clustered[-1:]
        int_scan = [s for s in scans if "`int_ids`" in s]
        assert int_scan and not any("between" in s for s in int_scan)

    @staticmethod
    def assert_row_groups_skipped(spark):
        # Spark pushes the range down to the parquet reader (row-group statistics) ...
        plan = "\n".join(
            r[0]
            for r in spark.sql(
                f"explain formatted select count(*) from {DB}.clustered where guestid between 1001 and 1003"
            ).collect()
        )
        assert "GreaterThanOrEqual(guestid,1001)" in plan and "LessThanOrEqual(guestid,1003)" in plan, plan
        # ... and, on the files as the scan found them, the reader returns only the row group that
        # can hold the ids (at most the 1000 rows written with 1000..1999, of 4000)
        adaptive = spark.conf.get("spark.sql.adaptive.enabled")
        spark.conf.set("spark.sql.adaptive.enabled", "false")  # the scan is then the plan's leaf
        try:
            frame = spark.sql(
                f"select * from {DB}.clustered where ds = 'a' and guestid between 1001 and 1003"
            )
            assert len(frame.collect()) == 3
            scan = frame._jdf.queryExecution().executedPlan().collectLeaves().apply(0)
            assert "FileSourceScan" in scan.getClass().getSimpleName()
            assert scan.metrics().apply("numOutputRows").value() <= 1000  # of 4000
        finally:
            spark.conf.set("spark.sql.adaptive.enabled", adaptive)


NARROW = "p_narrow"


def narrow_tables(spark):
    """Three onboarded tables of 4 files in each of 2 partitions (file f of partition p holds the
    ids p*4000 + f*1000 .. +999): `clustered` (the listed ids 1001..1003 in one file), `elsewhere`
    (no file near the ids) and `spread` (every file spans the whole range)."""
    spark.sql(f"drop database if exists {NARROW} cascade")
    spark.sql(f"create database {NARROW}")
    for table, offset in (("clustered", 0), ("elsewhere", 100000), ("spread", None)):
        spark.sql(f"""
            create table {NARROW}.{table} (guestid bigint, payload string) partitioned by (ds string)
            stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        for p, ds in enumerate(("a", "b")):
            for f in range(4):
                start = p * 4000 + f * 1000
                ids = (
                    f"id + {offset}"
                    if offset is not None
                    else f"case when id = {start} then 0 when id = {start + 999} then 9999 else id end"
                )
                spark.sql(f"""insert into {NARROW}.{table} partition (ds = '{ds}')
                    select /*+ COALESCE(1) */ {ids}, concat('x', id) from range({start}, {start + 1000})""")


class TestScanNarrowedByFooters:
    def test_the_footers_rule_out_files_and_the_purge_is_the_same(self, project, spark, id_table):
        narrow_tables(spark)
        before = {t: table_rows(spark, f"{NARROW}.{t}") for t in ("clustered", "elsewhere", "spread")}
        _, logs = purge(NARROW)

        # clustered: 7 of 8 files ruled out, one read; elsewhere: nothing read at all; spread: no line
        # the one file left is counted by pyarrow against the id table's own files, with no Spark job
        assert (
            f"{NARROW}.clustered: the footers' min/max rule out 7 of 8 file(s): the scan read 1 file(s) in 1 partition(s)"
            " (pyarrow, in this process)" in logs
        )
        assert (
            f"{NARROW}.elsewhere: the footers' min/max rule out 8 of 8 file(s): no file can hold a listed id, nothing was scanned"
            in logs
        )
        assert f"{NARROW}.spread: the footers" not in logs
        for table in ("clustered", "elsewhere", "spread"):
            assert table_rows(spark, f"{NARROW}.{table}") == kept_rows(before[table]), table
        rows = last_run(log_rows(spark, project, NARROW))
        states = {(r.table_name, r.partition_spec): (r.state, r.rows_purged) for r in rows}
        assert states == {
            ("clustered", "ds=a"): ("COMMITTED", 3),
            ("clustered", "ds=b"): ("SKIPPED", 0),
            ("elsewhere", "ds=a"): ("SKIPPED", 0),
            ("elsewhere", "ds=b"): ("SKIPPED", 0),
            ("spread", "ds=a"): ("COMMITTED", 3),
            ("spread", "ds=b"): ("SKIPPED", 0),
        }

    def test_a_partition_the_footers_cannot_vouch_for_is_scanned_whole(self, project, spark, id_table):
        narrow_tables(spark)
        # a sub-directory (Spark does not read it for a Hive partition): the whole table is scanned
        nested = Path(location(spark, NARROW, "elsewhere", [["ds", "b"]]).removeprefix("file:")) / "sub"
        nested.mkdir()
        # and a listed id written into a new file of the table that was clean: found by the scan
        spark.sql(f"insert into {NARROW}.clustered partition (ds = 'b') values (1002, 'late')")
        _, logs = purge(f"{NARROW}.elsewhere, {NARROW}.clustered")
        assert f"{NARROW}.elsewhere: the footers" not in logs
        assert (
            f"{NARROW}.clustered: the footers' min/max rule out 7 of 9 file(s): the scan read 2 file(s)"
            in logs
        )
        assert remaining_ids(spark, f"{NARROW}.clustered") == 0

    def test_ids_pyarrow_cannot_read_as_spark_does_are_scanned_by_spark(self, project, spark, id_table):
        narrow_tables(spark)
        # the same ids in an ORC table: the files left are scanned by Spark over the view
        spark.sql("drop table if exists p_ids.ids_orc")
        spark.sql("create table p_ids.ids_orc (guestid bigint) stored as orc")
        spark.sql("insert into p_ids.ids_orc select guestid from p_ids.ids")
        before = table_rows(spark, f"{NARROW}.clustered")
        _, logs = purge(f"{NARROW}.clustered", compliance_id_table="p_ids.ids_orc")
        line = next(line for line in logs.splitlines() if f"{NARROW}.clustered: the footers" in line)
        assert line.endswith("the scan read 1 file(s) in 1 partition(s)"), line
        assert table_rows(spark, f"{NARROW}.clustered") == kept_rows(before)
        rows = last_run(log_rows(spark, project, NARROW))
        assert {(r.partition_spec, r.state, r.rows_purged) for r in rows} == {
            ("ds=a", "COMMITTED", 3),
            ("ds=b", "SKIPPED", 0),
        }
        spark.sql("drop table p_ids.ids_orc")


class TestOverriddenScanIsLeftToSpark:
    """A project that overrides how the identifier is read (or the scan, or the ids' relation)
    gets Spark's scan of the files the footers leave: pyarrow cannot honour the override."""

    @pytest.fixture(scope="class")
    def macros(self):
        return {
            **repo_files("macros"),
            "override_identifier.sql": (
                "{% macro lakehouse__purge_identifier_expr(alias, path) -%}"
                "({{ compliance.default__purge_identifier_expr(alias, path) }})"
                "{%- endmacro %}"
            ),
        }

    def test_the_override_is_scanned_by_spark(self, project, spark, id_table):
        narrow_tables(spark)
        before = table_rows(spark, f"{NARROW}.clustered")
        _, logs = purge(f"{NARROW}.clustered")
        line = next(line for line in logs.splitlines() if f"{NARROW}.clustered: the footers" in line)
        assert line.endswith("the scan read 1 file(s) in 1 partition(s)"), line
        assert table_rows(spark, f"{NARROW}.clustered") == kept_rows(before)


def test_pyarrow_counts_what_the_scan_counts(spark):
    """The count of the candidate files in this process (scan.arrow_count) against Spark's
    semi-join over the same files: a struct identifier, NULL structs and NULL ids, repeated and
    NULL listed ids, a file written before the column existed."""
    from python_hooks.catalog import files, metastore
    from python_hooks.purge import file_level, scan

    spark.sql("drop database if exists p_arrow cascade")
    spark.sql("create database p_arrow")
    spark.sql("create table p_arrow.ids (guestid bigint) using parquet")
    spark.sql("insert into p_arrow.ids values (7), (8), (8), (null), (400)")
    spark.sql("create table p_arrow.t (payload string) partitioned by (hr int) stored as parquet")
    spark.sql("insert into p_arrow.t partition (hr = 5) values ('before the column')")
    spark.sql("alter table p_arrow.t add columns (who struct<id: bigint, name: string>)")
    spark.sql("""insert into p_arrow.t partition (hr = 5) select /*+ COALESCE(1) */ concat('x', id),
        case when id = 3 then null else named_struct('id', case when id = 4 then null else id end, 'name', 'n') end
        from range(0, 20)""")
    spark.sql("""insert into p_arrow.t partition (hr = 6) select /*+ COALESCE(1) */ 'y', named_struct('id', id % 10, 'name', 'n')
        from range(0, 30)""")
    spark.sql("insert into p_arrow.t partition (hr = 7) select 'z', named_struct('id', 8L, 'name', 'n')")

    narrowed = scan.candidate_files(spark, "p_arrow", "t", ["who", "id"], (7, 400))
    assert narrowed is None  # every file admits the range: nothing ruled out
    partitions = [
        {
            "pairs": [list(pair) for pair in pairs],
            "files": ["file:" + f for f in scan._partition_files(files.local_path(place))],
        }
        for pairs, place in metastore.partition_locations(spark, "p_arrow", "t", ["hr"])
    ]
    # hr=5 has two files: one written before the column existed
    assert sorted(len(part["files"]) for part in partitions) == [1, 1, 2]
    spec = {
        "path": ["who", "id"],
        "partition_columns": ["hr"],
        "bounds": {"type": "bigint", "min": "7", "max": "400"},
        "ids": {"database": "p_arrow", "table": "ids", "column": "guestid"},
    }

    def by_partition(counted):
        return None if counted is None else {tuple(row[:-1]): row[-1] for row in counted}

    by_arrow = by_partition(scan.arrow_count(spark, spec, {"partitions": partitions, "rows": 52}))

    assert file_level.candidate_view(spark, "p_arrow", "t", "v_arrow", partitions)["ok"]
    by_spark = {
        (str(r.hr),): r.n
        for r in spark.sql(
            "select hr, count(*) as n from v_arrow a left semi join (select guestid from p_arrow.ids where guestid is not null) b"
            " on a.who.id = b.guestid group by hr"
        ).collect()
    }
    file_level.drop_view(spark, "v_arrow")
    # rows 7, 8 of hr=5 (a NULL struct and a NULL id match nothing); 7, 8, 17, 18, 27, 28 of hr=6; hr=7's row
    assert by_arrow == {("5",): 2, ("6",): 6, ("7",): 1}
    assert by_spark == by_arrow
    # the scan's `between`: with the range 7..7 only the rows holding 7 count
    narrower = {**spec, "bounds": {"type": "bigint", "min": "7", "max": "7"}}
    assert by_partition(scan.arrow_count(spark, narrower, {"partitions": partitions, "rows": 52})) == {
        ("5",): 1,
        ("6",): 3,
    }
    # an identifier that is a partition column is read by Spark from the partition's value
    assert scan.arrow_count(spark, {**spec, "path": ["hr"]}, {"partitions": partitions, "rows": 52}) is None
    # an identifier pyarrow would read differently (a string) is left to Spark
    assert (
        scan.arrow_count(spark, {**spec, "path": ["payload"]}, {"partitions": partitions, "rows": 52}) is None
    )
    # a session matching names by case is left to Spark (pyarrow matches them ignoring case)
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        assert scan.arrow_count(spark, spec, {"partitions": partitions, "rows": 52}) is None
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    # the id range the scans filter on, read from the same files (no Spark query)
    ids = {"database": "p_arrow", "table": "ids", "column": "guestid"}
    assert scan.id_bounds(spark, ids) == {"ok": True, "error": None, "read": True, "bounds": [7, 400]}
    spark.sql("insert into p_arrow.ids values (-3)")  # a new file: read again
    assert scan.id_bounds(spark, ids)["bounds"] == [-3, 400]
    spark.sql("create table p_arrow.nulls (guestid bigint) using parquet")
    spark.sql("insert into p_arrow.nulls values (null)")
    assert scan.id_bounds(spark, {**ids, "table": "nulls"})["bounds"] is None
    # an id table file written before its id column existed holds no id (Spark reads NULLs there)
    spark.sql("create table p_arrow.late_ids (note string) using parquet")
    spark.sql("insert into p_arrow.late_ids values ('before the column')")
    spark.sql("alter table p_arrow.late_ids add columns (guestid bigint)")
    spark.sql("insert into p_arrow.late_ids values ('after', 9)")
    assert scan.id_bounds(spark, {**ids, "table": "late_ids"})["bounds"] == [9, 9]
    spark.sql("create table p_arrow.orc_ids (guestid bigint) stored as orc")
    assert scan.id_bounds(spark, {**ids, "table": "orc_ids"})["read"] is False
    spark.sql("drop database p_arrow cascade")


def test_the_footers_are_given_up_when_no_file_is_ruled_out(spark, tmp_path):
    """With ids spread over the range no file is ever ruled out: reading stops after 64 files; with
    more than a quarter of the files left to read the table is scanned whole."""
    from python_hooks.purge import scan

    spark.sql("drop database if exists p_giveup cascade")
    spark.sql("create database p_giveup")
    spark.sql("create table p_giveup.t (guestid bigint) partitioned by (ds int) stored as parquet")
    spark.sql(
        "insert into p_giveup.t partition (ds) select id % 1000, cast(id % 100 as int) from range(100000)"
    )
    assert scan.candidate_files(spark, "p_giveup", "t", ["guestid"], (500, 501)) is None
    # the same table with the ids outside every file's range: all 100 partitions' files ruled out
    ruled_out = scan.candidate_files(spark, "p_giveup", "t", ["guestid"], (5000, 5001))
    assert ruled_out is not None and ruled_out["read"] == 0 and ruled_out["partitions"] == []
    assert ruled_out["files"] >= 100
    # half of the files ruled out: a view over the other half would cost more than the scan it saves
    spark.sql("drop table p_giveup.t")
    spark.sql("create table p_giveup.t (guestid bigint) partitioned by (ds int) stored as parquet")
    for low in (0, 1000):
        spark.sql(
            f"insert into p_giveup.t partition (ds) select /*+ COALESCE(1) */ id, cast(id % 4 as int)"
            f" from range({low}, {low + 1000})"
        )
    assert scan.candidate_files(spark, "p_giveup", "t", ["guestid"], (1500, 1501)) is None
    assert scan.candidate_files(spark, "p_giveup", "t", ["guestid"], (5000, 5001))["read"] == 0
    spark.sql("drop database p_giveup cascade")
