"""The metastore calls of a purge, counted: a fleet's purge must cost calls where ids are, not per
onboarded table (docs/benchmarks.md).

The counter is Spark's own count of the calls its Hive client makes (HiveCatalogMetrics'
`hiveClientCalls`), which counts every call the catalog makes on this process's metastore
client: the embedded Derby here, the metastore service on the cluster target.  A budget that
is exceeded fails with the count, so that a change that adds calls is seen and decided on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.functional.purge.conftest import descriptor, onboarded_events, purge

DB = "p_calls"
ALONE = "p_calls_alone"
CLEAN_TABLES = 10
# each onboarded table that holds no id: its footers rule it out, its entry comes with the others'
PER_CLEAN_TABLE = 2
# one table rewritten in 4 of its 24 partitions (staging table, backup, swaps, records): today's
# count, a ceiling that only goes down; the target is 30
PURGED_TABLE = 171


@pytest.fixture(scope="class", autouse=True)
def databases(spark: Any) -> Iterator[None]:
    yield
    for database in (DB, ALONE):
        spark.sql(f"drop database if exists {database} cascade")


def calls(spark: Any) -> int:
    metrics = spark._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics
    return int(metrics.METRIC_HIVE_CLIENT_CALLS().getCount())


def counted(spark: Any, whitelist: str) -> int:
    """The metastore calls of one `dbt run --select purge` over `whitelist`."""
    before = calls(spark)
    purge(whitelist, select="purge")
    return calls(spark) - before


def add_ids(spark: Any, table: str) -> None:
    rows = ", ".join(f"({1001 if day < 4 else 5 + day}, 'x', 'd{day:02d}')" for day in range(24))
    spark.sql(f"insert into {table} values {rows}")


class TestMetastoreCalls:
    def test_a_table_holding_no_id_costs_at_most_two_calls(self, project, spark, id_table):
        events = onboarded_events(spark, DB)
        spark.sql(
            f"insert into {events} values " + ", ".join(f"({5 + d}, 'x', 'd{d:02d}')" for d in range(24))
        )
        for n in range(CLEAN_TABLES):
            spark.sql(f"""create table {DB}.clean_{n} (guestid bigint, payload string) partitioned by (ds string)
                stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
            spark.sql(f"insert into {DB}.clean_{n} values (7, 'y', 'a'), (8, 'y', 'b'), (9, 'y', 'c')")
        counted(spark, f"{DB}.events")  # the first run of the class creates the logs
        one = counted(spark, f"{DB}.events")
        many = counted(spark, DB)
        per_table = (many - one) / CLEAN_TABLES
        assert per_table <= PER_CLEAN_TABLE, (
            f"{per_table:.1f} metastore calls per onboarded table holding no id ({one} for one table,"
            f" {many} with {CLEAN_TABLES} more), over the budget of {PER_CLEAN_TABLE}"
        )

    def test_a_purged_table_stays_within_its_budget(self, project, spark, id_table):
        """A database of its own: the whitelist's database is listed, so its other tables would count."""
        events = onboarded_events(spark, ALONE)
        add_ids(spark, events)
        counted(spark, ALONE)  # the first purge of a table also registers what later ones reuse
        add_ids(spark, events)
        found = counted(spark, ALONE)
        assert spark.sql(f"select count(*) from {events} where guestid = 1001").first()[0] == 0
        assert found <= PURGED_TABLE, (
            f"{found} metastore calls to purge 4 of 24 partitions of one table, over the budget of {PURGED_TABLE}"
        )
