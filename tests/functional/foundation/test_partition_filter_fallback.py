"""A partition filter the metastore cannot evaluate does not fail the read (docs/deploy.md).

The metastore's direct SQL casts the values of an integer partition column to compare them with
`hr = 10`; a value that does not cast (`hr='abc'`, added by a tool that checks no types, or,
on PostgreSQL, another table's `'eu'` at the same key position) makes it fail, and its ORM
fallback refuses filters on non-string columns.  The adapter turns on Spark's fallback: list
the table's partitions and prune them in the driver.  Runs on both targets (Derby and the
cluster's PostgreSQL-backed service).
"""

import pytest
from dbt.tests.util import run_dbt

FALLBACK = "spark.sql.hive.metastorePartitionPruningFallbackOnException"

HOUR_TEN = """
{{ config(materialized='table') }}
select count(*) as rows_read, sum(x) as total
from p_filter.events
where ds = '2024-01-10' and hr = 10
"""


class TestPartitionFilterFallback:
    @pytest.fixture(scope="class")
    def models(self):
        return {"hour_ten.sql": HOUR_TEN}

    @pytest.fixture(scope="class")
    def events(self, project, spark):
        spark.sql("drop database if exists p_filter cascade")
        spark.sql("create database p_filter")
        spark.sql("create table p_filter.events (x int) partitioned by (ds string, hr int) stored as parquet")
        spark.sql("insert into p_filter.events partition (ds = '2024-01-10', hr = 10) values (1), (2)")
        spark.sql("insert into p_filter.events partition (ds = '2024-01-10', hr = 11) values (40)")
        # what another tool can leave behind: Spark itself checks the type unless told not to
        spark.conf.set("spark.sql.legacy.skipTypeValidationOnAlterPartition", "true")
        try:
            spark.sql("alter table p_filter.events add partition (ds = '2024-01-10', hr = 'abc')")
        finally:
            spark.conf.unset("spark.sql.legacy.skipTypeValidationOnAlterPartition")
        yield "p_filter.events"
        spark.sql("drop database if exists p_filter cascade")

    def test_the_metastore_refuses_the_filter_without_the_fallback(self, project, spark, events):
        assert spark.conf.get(FALLBACK) == "true"
        spark.conf.set(FALLBACK, "false")
        try:
            with pytest.raises(Exception, match="attempting to get partition metadata by filter"):
                spark.sql(f"select count(*) from {events} where ds = '2024-01-10' and hr = 10").collect()
        finally:
            spark.conf.set(FALLBACK, "true")

    def test_a_dbt_model_reads_the_hour_through_the_fallback(self, project, spark, events):
        run_dbt(["run", "--select", "hour_ten"])
        row = spark.sql(f"select rows_read, total from {project.test_schema}.hour_ten").first()
        assert (row.rows_read, row.total) == (2, 3)
        hours = {
            r[0] for r in spark.sql(f"select distinct hr from {events} where ds = '2024-01-10'").collect()
        }
        assert hours == {10, 11}
