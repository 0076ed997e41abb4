"""A partition whose value is NULL (Hive's `__HIVE_DEFAULT_PARTITION__`) is purged like any other."""

from __future__ import annotations

import pytest

from tests.functional.purge.conftest import count, last_run, log_rows, onboarded_events, purge, remaining_ids


class TestDefaultPartition:
    @pytest.fixture(scope="class")
    def tables(self, project, spark, id_table):
        onboarded_events(spark, "p_null")
        spark.sql("set hive.exec.dynamic.partition.mode=nonstrict")
        spark.sql(
            "insert into p_null.events partition (ds) "
            "select id, 'x', case when id % 2 = 0 then null else 'a' end from range(1000, 1010)"
        )

    def test_the_null_partition_loses_its_ids_and_keeps_its_rows(self, project, spark, tables):
        assert count(spark, "select count(*) from p_null.events where ds is null") == 5
        purge("p_null.events")
        assert remaining_ids(spark, "p_null.events") == 0
        # 1001 and 1003 were in ds=a, 1002 in the NULL partition
        assert count(spark, "select count(*) from p_null.events where ds is null") == 4
        assert count(spark, "select count(*) from p_null.events where ds = 'a'") == 3
        states = {
            r.partition_spec: (r.state, r.rows_purged) for r in last_run(log_rows(spark, project, "p_null"))
        }
        assert states == {"ds=__HIVE_DEFAULT_PARTITION__": ("COMMITTED", 1), "ds=a": ("COMMITTED", 2)}
