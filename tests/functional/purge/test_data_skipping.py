"""Data skipping on clustered ids: the purge's scan carries `identifier between <min id> and
<max id>`, which the semi-join implies and Spark pushes down to the parquet reader, so row groups
whose statistics lie outside the listed ids are not read.  The results must not change: whole
rows compared, and a table whose identifier type differs from the id column's gets no range."""

from __future__ import annotations

import re
from pathlib import Path

from tests.functional.purge.conftest import descriptor, kept_rows, last_run, log_rows, purge, table_rows

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
