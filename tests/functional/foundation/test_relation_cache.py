"""dbt's relation cache from the catalog: the adapter answers `show databases` and `show table
extended in <schema> like '*'` with catalog calls (adapter relations.py) instead of running them.
What dbt relies on: the same schemas, the same relations, and for each the same information text
(dbt-spark reads the relation type, the provider and, for `dbt docs generate`, the columns and
statistics from it), for every kind of table the project makes."""

from __future__ import annotations

import pytest
from dbt.adapters.lakehouse import relations
from dbt.tests.util import get_connection, run_dbt

DB = "rel_cache"


@pytest.fixture(scope="module")
def tables(spark):
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    for ddl in (
        "create table {db}.hive_parquet (id bigint comment 'the id', name varchar(10), info struct<a: int, b: string>)"
        " partitioned by (ds string, hr int) stored as parquet tblproperties ('dataset.descriptor' = '{{}}')",
        "create table {db}.hive_orc (id bigint, c char(3)) stored as orc",
        "create table {db}.ds_json (id bigint, note string) using json",
        "create table {db}.ds_bucketed (id bigint, ds string) using parquet partitioned by (ds)"
        " clustered by (id) into 2 buckets",
        "create external table {db}.external_csv (id int) stored as textfile location '/tmp/rel_cache_external'",
        "create view {db}.a_view comment 'a view' as select id, name from {db}.hive_parquet",
    ):
        spark.sql(ddl.format(db=DB))
    spark.sql(
        f"insert into {DB}.hive_parquet partition (ds = 'a', hr = 1) values (1, 'x', named_struct('a', 1, 'b', 'y'))"
    )
    spark.sql(f"analyze table {DB}.hive_orc compute statistics")
    spark.sql("create or replace temporary view rel_cache_temp as select 1 as id")
    yield DB
    spark.sql(f"drop database if exists {DB} cascade")


def test_the_catalog_answers_as_show_table_extended(spark, tables):
    shown = {
        (r[0], r[1], r[3])
        for r in spark.sql(f"show table extended in {DB} like '*'").collect()
        if not r[2]  # temporary views belong to no schema
    }
    assert len(shown) == 6
    assert set(relations.tables_with_information(spark, DB)) == shown
    assert set(relations.tables_with_information(spark, DB.upper())) == shown
    assert relations.tables_with_information(spark, "rel_cache_missing") == []
    assert set(relations.database_names(spark)) == {r[0] for r in spark.sql("show databases").collect()}


class TestDbtSeesTheSameRelations:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "cached_table.sql": "{{ config(materialized='table') }} select 1 as id",
            "cached_view.sql": "{{ config(materialized='view') }} select 1 as id",
        }

    def test_the_cache_holds_the_schema_relations_with_their_types(self, project, spark, tables):
        run_dbt(["run"])
        adapter = project.adapter
        with get_connection(adapter):
            found = {
                r.identifier: r
                for r in adapter.list_relations_without_caching(adapter.Relation.create(schema=DB))
            }
            mine = {
                r.identifier: r
                for r in adapter.list_relations_without_caching(
                    adapter.Relation.create(schema=project.test_schema)
                )
            }
        assert found["a_view"].type == "view" and found["hive_parquet"].type == "table"
        assert "id: long (nullable = true)" in found["hive_parquet"].information
        assert (mine["cached_table"].type, mine["cached_view"].type) == ("table", "view")
        # a second run finds both in the cache (a view is replaced, not created twice)
        run_dbt(["run"])
