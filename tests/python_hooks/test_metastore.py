"""The metastore edits that Spark SQL would make more slowly: a table's properties added without
changing any other field of its entry (CatalogEdits.java passes each by its accessor), and the
one Partition class's two spellings of a spec."""

from __future__ import annotations

from python_hooks.catalog import metastore
from python_hooks.purge.plan import PartitionRewrite


def scala_dict(scala_map) -> dict:
    iterator = scala_map.iterator()
    found = {}
    while iterator.hasNext():
        pair = iterator.next()
        found[str(pair._1())] = str(pair._2())
    return found


def entry(spark, table: str) -> dict:
    meta = (
        spark._jsparkSession.sessionState()
        .catalog()
        .getTableRawMetadata(metastore.identifier(spark, "m_edits", table))
    )
    return {
        "schema": meta.schema().json(),
        "location": str(meta.location()),
        "partition_columns": str(meta.partitionColumnNames()),
        "provider": str(meta.provider()),
        "table_type": str(meta.tableType()),
        "serde": str(meta.storage().serde()),
        "owner": meta.owner(),
        "created": meta.createTime(),
        "properties": {
            k: v for k, v in scala_dict(meta.properties()).items() if not k.startswith("transient")
        },
    }


def test_properties_are_added_and_nothing_else_changes(spark):
    spark.sql("drop database if exists m_edits cascade")
    spark.sql("create database m_edits")
    spark.sql(
        "create table m_edits.hive (g bigint, s struct<a: int>) partitioned by (ds string) stored as orc"
    )
    spark.sql("create table m_edits.ds (g bigint) using parquet tblproperties ('kept' = 'yes')")
    before = {t: entry(spark, t) for t in ("hive", "ds")}

    outcome = metastore.set_table_properties(
        spark, "m_edits", {"hive": {"k": "v"}, "ds": {"k": "w", "kept": "yes"}, "missing": {"k": "x"}}
    )

    assert outcome["hive"] is None and outcome["ds"] is None
    assert "missing" in outcome["missing"]  # named, not raised: the other tables went on
    for table, value in (("hive", "v"), ("ds", "w")):
        after = entry(spark, table)
        assert after.pop("properties") == {**before[table].pop("properties"), "k": value}
        assert after == before[table]
    spark.sql("drop database m_edits cascade")


def test_a_partition_has_one_spec_users_type_and_one_directory_path():
    part = PartitionRewrite([("ds", "2024-01-01 10:00"), ("hr", "o'b")], "file:/w/t/x")
    assert part.spec == "ds=2024-01-01 10:00/hr=o'b"
    assert part.path == "ds=2024-01-01 10%3A00/hr=o%27b"
    assert part.values == [["ds", "2024-01-01 10:00"], ["hr", "o'b"]]
    assert part.label == part.path
    whole = PartitionRewrite([], "file:/w/t")
    assert (whole.spec, whole.path, whole.label) == ("", "", "(unpartitioned)")
