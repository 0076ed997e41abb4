"""The hourly compaction's plan table and a SQL compaction model's session_conf
(python_hooks/compaction/plan.py, session_settings.py), on the real session.

The plan table must hold exactly the rows and types `create table ... as <plan query>` would
give it; the post-hook gets the rows without a query, once; a column the parquet file writer
does not take still gets its rows (from Spark's writer).  The settings of a model's
session_conf are put back as the session had them, set or unset.
"""

from __future__ import annotations

from typing import Any

import pytest

from python_hooks.compaction import plan, records, session_settings

DATABASE = "compaction_plan_test"
LIMIT = "spark.sql.optimizer.windowGroupLimitThreshold"
PLAN = """
    select * from values
        ('page_view', '2024-01-10', '10', timestamp'2024-01-10 10:00:00', 'compact', 'verified complete',
         6L, 6L, 0L, cast(null as timestamp), timestamp'2024-01-10 12:00:00', 'inv-1'),
        ('page_view', '2024-01-10', '9', timestamp'2024-01-10 09:00:00', 'hold', 'incomplete: 6 of 10 expected rows',
         6L, 10L, 0L, cast(null as timestamp), timestamp'2024-01-10 12:00:00', 'inv-1')
    as t(dataset, ds, hr, hour_start, action, reason, rows_in, expected_count, late_rows,
         last_compacted_at, compaction_started_at, invocation_id)
"""


def rows(spark: Any, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def columns(spark: Any, table: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.table(table).schema.fields]


@pytest.fixture
def database(spark):
    spark.sql(f"drop database if exists {DATABASE} cascade")
    spark.sql(f"create database {DATABASE}")
    yield DATABASE
    spark.sql(f"drop database if exists {DATABASE} cascade")


class TestPlanTable:
    def test_the_table_holds_the_query_rows_as_create_as_select_would(self, spark, database):
        written = plan.write_plan(spark, database, "hourly__plan", PLAN)
        assert written == {"rows": 2, "written_by": "parquet file"}
        spark.sql(f"create table {database}.by_ctas using parquet as {PLAN}")
        assert columns(spark, f"{database}.hourly__plan") == columns(spark, f"{database}.by_ctas")
        assert rows(spark, f"select * from {database}.hourly__plan") == rows(
            spark, f"select * from {database}.by_ctas"
        )

    def test_the_post_hook_reads_the_rows_the_pre_hook_wrote(self, spark, database):
        plan.write_plan(spark, database, "hourly__plan", PLAN)
        read = records.read_plan(spark, database, "hourly__plan")
        expected = [row.asDict() for row in spark.sql(PLAN).collect()]
        assert sorted(tuple(r.values()) for r in read) == sorted(tuple(r.values()) for r in expected)
        assert {r["action"] for r in read} == {"compact", "hold"}

    def test_a_new_plan_replaces_the_old_one_and_its_columns(self, spark, database):
        plan.write_plan(spark, database, "hourly__plan", PLAN)
        plan.write_plan(
            spark, database, "hourly__plan", "select 'x' as dataset, 1L as rows_in, 2.5d as extra"
        )
        assert rows(spark, f"select * from {database}.hourly__plan") == [("x", 1, 2.5)]
        assert columns(spark, f"{database}.hourly__plan") == [
            ("dataset", "string"),
            ("rows_in", "bigint"),
            ("extra", "double"),
        ]

    def test_a_column_the_file_writer_does_not_take_is_written_by_spark(self, spark, database):
        # a sum over decimal expected counts is a decimal
        written = plan.write_plan(
            spark, database, "hourly__plan", "select '10' as hr, cast(6 as decimal(20, 0)) as expected_count"
        )
        assert written == {"rows": 1, "written_by": "spark insert"}
        assert rows(spark, f"select hr, cast(expected_count as bigint) from {database}.hourly__plan") == [
            ("10", 6)
        ]

    def test_an_empty_plan_is_an_empty_table(self, spark, database):
        written = plan.write_plan(spark, database, "hourly__plan", f"select * from ({PLAN}) where false")
        assert written == {"rows": 0, "written_by": "nothing"}
        assert rows(spark, f"select * from {database}.hourly__plan") == []
        assert [name for name, _ in columns(spark, f"{database}.hourly__plan")][:3] == ["dataset", "ds", "hr"]


class TestSessionConf:
    def test_the_settings_hold_for_the_statement_and_the_session_values_come_back(self, spark):
        limit, shuffle = LIMIT, "spark.sql.shuffle.partitions"
        own_shuffle = spark.conf.get(shuffle)
        spark.conf.set(limit, "500")
        try:
            assert session_settings.apply(spark, {limit: -1, shuffle: 3}) == {limit: "-1", shuffle: "3"}
            assert (spark.conf.get(limit), spark.conf.get(shuffle)) == ("-1", "3")
            session_settings.apply(spark, {limit: -1})  # a second pre-hook (an earlier run failed)
            assert session_settings.restore(spark) == {limit: "500", shuffle: own_shuffle}
            assert (spark.conf.get(limit), spark.conf.get(shuffle)) == ("500", own_shuffle)
            assert session_settings.restore(spark) == {}  # nothing left to put back
        finally:
            spark.conf.unset(limit)

    def test_an_unset_value_is_unset_again(self, spark):
        key = LIMIT
        spark.conf.unset(key)
        default = spark.conf.get(key)
        session_settings.apply(spark, {key: "-1"})
        assert spark.conf.get(key) == "-1"
        session_settings.restore(spark)
        assert spark.conf.get(key) == default
        assert spark.conf.get(key, None) is None  # unset, not set to the default

    def test_no_settings_change_nothing(self, spark):
        assert session_settings.apply(spark, None) == {} and session_settings.apply(spark, {}) == {}
        assert session_settings.restore(spark) == {}
