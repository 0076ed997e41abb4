"""The hourly compaction's completion records and log (python_hooks/compaction/records.py).

The rows out of each published hour come from its files' footers and must equal what Spark
counts there, hour by hour, with Spark counting the hours whose files the footers cannot count;
the records and the log land as one parquet file each without a Spark job, typed as the tables
declare them; a table the file writer does not handle still gets its rows.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

from python_hooks.compaction import records
from tests import warehouse_fs

WATERMARKS = """(dataset string, `partition` string, ds string, hr string, compaction_started_at timestamp,
    rows_in bigint, rows_out bigint, action string, invocation_id string, recorded_at timestamp)"""
LOG = """(dataset string, ds string, hr string, hour_start timestamp, action string, reason string,
    rows_in bigint, expected_count bigint, late_rows bigint, last_compacted_at timestamp,
    compaction_started_at timestamp, invocation_id string, logged_at timestamp)"""
STARTED = datetime(2024, 1, 10, 12, 0, 0)


def plan_row(hr: str, action: str, rows_in: int = 5, expected: Any = None) -> dict[str, Any]:
    return {
        "dataset": "page_view",
        "ds": "2024-01-10",
        "hr": hr,
        "hour_start": datetime(2024, 1, 10, int(hr)),
        "action": action,
        "reason": f"because {action}",
        "rows_in": rows_in,
        "expected_count": expected,
        "late_rows": 0,
        "last_compacted_at": None,
        "compaction_started_at": STARTED,
        "invocation_id": "inv-1",
    }


def location(spark: Any, relation: str) -> str:
    """The table's location on the warehouse's filesystem, as the metastore gives it."""
    return spark.sql(f"describe formatted {relation}").where("col_name = 'Location'").first().data_type


def data_files(spark: Any, relation: str) -> list[str]:
    """The names of the data files directly in the table's directory."""
    names = warehouse_fs.listdir(spark, location(spark, relation))
    return [name for name in names if not name.startswith(("_", "."))]


def spark_jobs(spark: Any) -> set[int]:
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


@pytest.fixture
def lake(project, spark):
    schema = project.test_schema
    spark.sql(f"create database if not exists {schema}")
    for name in ("hourly_out", "watermarks", "log_parquet", "log_orc"):
        spark.sql(f"drop table if exists {schema}.{name}")
    spark.sql(
        f"create table {schema}.hourly_out (v bigint, ds string, hr int) using parquet partitioned by (ds, hr)"
    )
    spark.sql(f"""insert into {schema}.hourly_out partition (ds, hr)
        select id, '2024-01-10', cast(id % 3 + 10 as int) from range(100)""")
    spark.sql(f"create table {schema}.watermarks {WATERMARKS} using parquet")
    spark.sql(f"create table {schema}.log_parquet {LOG} using parquet")
    spark.sql(f"create table {schema}.log_orc {LOG} using orc")
    return schema


def spark_counts(spark: Any, relation: str) -> dict[tuple[str, str], int]:
    rows = spark.sql(f"select ds, cast(hr as string), count(*) from {relation} group by 1, 2").collect()
    return {(ds, hr): n for ds, hr, n in rows}


class TestCompletionRecords:
    def test_rows_out_from_footers_match_spark_hour_by_hour(self, spark, lake):
        hours = [("2024-01-10", "10"), ("2024-01-10", "11"), ("2024-01-10", "12"), ("2024-01-10", "13")]
        counts, how = records.published_rows(spark, lake, "hourly_out", hours)
        assert how == "footers"
        expected = spark_counts(spark, f"{lake}.hourly_out")
        assert counts == {**expected, ("2024-01-10", "13"): 0}  # an hour with no partition holds no rows
        assert counts[("2024-01-10", "10")] == 34

    def test_an_hour_the_footers_cannot_count_is_counted_by_spark(self, spark, lake):
        # a sub-directory in one partition (as Hive-on-Tez leaves): Spark does not read it for a
        # Hive partition, so its rows are not the hour's, and the footers cannot tell which are
        partition = f"{location(spark, f'{lake}.hourly_out')}/ds=2024-01-10/hr=11"
        nested = f"{partition}/HIVE_UNION_SUBDIR_1"
        first = [name for name in warehouse_fs.listdir(spark, partition) if name.startswith("part-")][0]
        warehouse_fs.write_bytes(
            spark, f"{nested}/{first}", warehouse_fs.read_bytes(spark, f"{partition}/{first}")
        )
        assert warehouse_fs.listdir(spark, nested) == [first]
        spark.sql(f"refresh table {lake}.hourly_out")
        counts, how = records.published_rows(
            spark, lake, "hourly_out", [("2024-01-10", "10"), ("2024-01-10", "11")]
        )
        assert how == "footers, Spark for 1 hour(s)"
        expected = spark_counts(spark, f"{lake}.hourly_out")
        assert counts == {
            ("2024-01-10", "10"): expected[("2024-01-10", "10")],
            ("2024-01-10", "11"): expected[("2024-01-10", "11")],
        }

    def test_records_and_log_are_one_file_each_without_a_spark_job(self, spark, lake):
        plan = [
            plan_row("10", "compact", expected=Decimal("40")),  # a decimal sum of expected counts
            plan_row("11", "recompact"),
            plan_row("12", "hold"),
            plan_row("13", "up_to_date"),
        ]
        jobs = spark_jobs(spark)
        result = records.record_completion(
            spark,
            plan,
            output=[lake, "hourly_out"],
            watermarks=[lake, "watermarks"],
            log=[lake, "log_parquet"],
        )
        assert spark_jobs(spark) == jobs  # footers and two file appends: no Spark job
        assert result["written_by"] == {"completion records": "parquet file", "log": "parquet file"}
        assert (result["completion_records"], result["logged"]) == (2, 4)
        assert len(data_files(spark, f"{lake}.watermarks")) == 1
        assert len(data_files(spark, f"{lake}.log_parquet")) == 1
        marks = spark.sql(
            f"select `partition`, rows_in, rows_out, action, compaction_started_at from {lake}.watermarks order by 1"
        ).collect()
        assert [tuple(m) for m in marks] == [
            ("ds=2024-01-10/hr=10", 5, 34, "compact", STARTED),
            ("ds=2024-01-10/hr=11", 5, 33, "recompact", STARTED),
        ]
        logged = spark.sql(
            f"select hr, action, expected_count, hour_start from {lake}.log_parquet order by hr"
        ).collect()
        assert [tuple(r) for r in logged] == [
            ("10", "compact", 40, datetime(2024, 1, 10, 10)),
            ("11", "recompact", None, datetime(2024, 1, 10, 11)),
            ("12", "hold", None, datetime(2024, 1, 10, 12)),
            ("13", "up_to_date", None, datetime(2024, 1, 10, 13)),
        ]

    def test_a_log_the_file_writer_does_not_handle_gets_its_rows_from_spark(self, spark, lake):
        plan = [plan_row("10", "compact"), plan_row("12", "hold")]
        result = records.record_completion(
            spark, plan, output=[lake, "hourly_out"], watermarks=[lake, "watermarks"], log=[lake, "log_orc"]
        )
        assert result["written_by"]["log"] == "spark insert"
        logged = spark.sql(f"select hr, action, reason from {lake}.log_orc order by hr").collect()
        assert [tuple(r) for r in logged] == [
            ("10", "compact", "because compact"),
            ("12", "hold", "because hold"),
        ]

    def test_an_output_not_partitioned_by_hour_is_counted_by_spark(self, spark, lake):
        spark.sql(f"drop table if exists {lake}.daily_out")
        spark.sql(
            f"create table {lake}.daily_out (v bigint, hr int, ds string) using parquet partitioned by (ds)"
        )
        spark.sql(
            f"insert into {lake}.daily_out partition (ds) select id, cast(id % 2 + 10 as int), '2024-01-10' from range(10)"
        )
        counts, how = records.published_rows(
            spark, lake, "daily_out", [("2024-01-10", "10"), ("2024-01-10", "12")]
        )
        assert how == "footers, Spark for 2 hour(s)"
        assert counts == {("2024-01-10", "10"): 5, ("2024-01-10", "12"): 0}
