"""The metastore edits that Spark SQL would make more slowly: a table's properties added without
changing any other field of its entry (CatalogEdits.java passes each by its accessor), and the
one Partition class's two spellings of a spec."""

from __future__ import annotations

import pytest

from python_hooks.catalog import metastore
from python_hooks.catalog.literals import string_literal
from python_hooks.errors import StatementError
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


def test_partitions_are_read_by_spec_in_one_listing_and_swapped_together(spark, tmp_path, monkeypatch):
    """A table's swaps read its partitions by spec in one filtered listing (CatalogReads.java):
    each spec gets its own partition, whatever its column's type and however its value is escaped
    on disk, the null partition by its name; a spec the catalog does not hold is an error that
    names it, never another partition with an equal typed value."""
    spark.sql("drop database if exists m_specs cascade")
    spark.sql("create database m_specs")
    spark.sql("create table m_specs.t (g bigint) partitioned by (ds string, hr int) stored as parquet")
    specs = [
        [("ds", "2024-01-01 10:00"), ("hr", "1")],
        [("ds", "2024-01-01 10:00"), ("hr", "2")],
        [("ds", "o'b/c%d"), ("hr", "1")],
        [("ds", "__HIVE_DEFAULT_PARTITION__"), ("hr", "2")],
        [("ds", "plain"), ("hr", "3")],
        [("ds", """both ' and " quotes"""), ("hr", "4")],  # a filter Hive refuses: Spark's own
    ]
    for pairs in specs:
        spark.sql(
            "alter table m_specs.t add partition ("
            + ", ".join(f"{c} = {string_literal(v)}" for c, v in pairs)
            + ")"
        )
    asked = [specs[1], specs[2], specs[3], specs[0], specs[5]]
    monkeypatch.setattr(metastore, "SPECS_PER_CALL", 3)  # two listings: their answers kept in order

    found = metastore.partitions_by_specs(spark, "m_specs", "t", asked)

    assert [metastore.partition_pairs(p, ["ds", "hr"]) for p in found] == asked
    assert len({str(p.location()) for p in found}) == 5

    moves = [(pairs, str(tmp_path / f"moved{index}")) for index, pairs in enumerate(asked)]
    metastore.set_partition_locations(spark, "m_specs", "t", moves)

    listed = metastore.partition_locations(spark, "m_specs", "t", ["ds", "hr"])
    now = {tuple(pairs): location for pairs, location in listed}
    for index, pairs in enumerate(asked):
        assert now[tuple(pairs)].endswith(f"/moved{index}")
    assert "/moved" not in now[tuple(specs[4])]
    for partial in ([("ds", "plain")], [("ds", "plain"), ("ds", "plain")]):
        with pytest.raises(StatementError, match="does not name each of its partition columns"):
            metastore.partitions_by_specs(spark, "m_specs", "t", [partial])
    for missing in ([("ds", "plain"), ("hr", "4")], [("ds", "plain"), ("hr", "03")]):
        with pytest.raises(StatementError, match=f"m_specs.t has no partition ds=plain/hr={missing[1][1]}"):
            metastore.partitions_by_specs(spark, "m_specs", "t", [specs[4], missing])
    spark.sql("drop database m_specs cascade")


def fetched(spark) -> int:
    """Partitions the metastore has returned to this process so far (Spark's own counter)."""
    metrics = spark._jvm.org.apache.spark.metrics.source.HiveCatalogMetrics
    return int(metrics.METRIC_PARTITIONS_FETCHED().getCount())


def test_the_listing_fetches_only_the_partitions_asked_for(spark):
    """Asked for 101 of 130 partitions (two listings of at most 100), the metastore returns those
    101 and no other, on every type its filter carries; where it cannot parse the filter (a column
    named `like`), each partition is read by its spec instead, and still found."""
    spark.sql("drop database if exists m_fetch cascade")
    spark.sql("create database m_fetch")
    spark.sql("create table m_fetch.s (g bigint) partitioned by (ds string) stored as parquet")
    spark.sql("alter table m_fetch.s add " + " ".join(f"partition (ds = 'd{i:03}')" for i in range(130)))
    spark.sql("create table m_fetch.d (g bigint) partitioned by (day date, n bigint) stored as parquet")
    spark.sql(
        "alter table m_fetch.d add partition (day = '2024-01-01', n = 7) partition (day = '2024-01-02', n = 7)"
    )
    spark.sql("create table m_fetch.k (g bigint) partitioned by (`like` string) stored as parquet")
    spark.sql("alter table m_fetch.k add partition (`like` = 'a') partition (`like` = 'b')")
    asked = [[("ds", f"d{i:03}")] for i in range(3, 104)]

    before = fetched(spark)
    found = metastore.partitions_by_specs(spark, "m_fetch", "s", asked)
    assert fetched(spark) - before == len(asked)
    assert [metastore.partition_pairs(p, ["ds"]) for p in found] == asked

    before = fetched(spark)
    (day,) = metastore.partitions_by_specs(spark, "m_fetch", "d", [[("day", "2024-01-02"), ("n", "7")]])
    assert fetched(spark) - before == 1
    assert metastore.partition_pairs(day, ["day", "n"]) == [("day", "2024-01-02"), ("n", "7")]

    (like,) = metastore.partitions_by_specs(spark, "m_fetch", "k", [[("like", "b")]])
    assert metastore.partition_pairs(like, ["like"]) == [("like", "b")]
    spark.sql("drop database m_fetch cascade")


def like_entry(spark, table: str) -> dict:
    """The fields of a table's entry that `create table ... like` sets, and its DDL, its own name
    and location left out."""
    meta = (
        spark._jsparkSession.sessionState()
        .catalog()
        .getTableRawMetadata(metastore.identifier(spark, "m_like", table))
    )
    storage = meta.storage()
    return {
        "table_type": str(meta.tableType().name()),
        "schema": meta.schema().json(),
        "provider": str(meta.provider()),
        "partition_columns": str(meta.partitionColumnNames()),
        "buckets": str(meta.bucketSpec()),
        "storage": (str(storage.inputFormat()), str(storage.outputFormat()), str(storage.serde())),
        "storage_properties": {k: v for k, v in scala_dict(storage.properties()).items() if k != "path"},
        "tracks_partitions": meta.tracksPartitionsInCatalog(),
        "owner": meta.owner(),
        "properties": {
            k: v for k, v in scala_dict(meta.properties()).items() if not k.startswith("transient")
        },
        "ddl": [
            line
            for line in spark.sql(f"show create table m_like.{table}").first()[0].splitlines()
            if not line.startswith(("CREATE TABLE ", "LOCATION ")) and "transient_lastDdlTime" not in line
        ],
    }


@pytest.mark.parametrize(
    "source",
    [
        "(g bigint, s struct<a: int>, c char(3)) partitioned by (ds string) stored as orc"
        " tblproperties ('of_the_source' = 'x')",
        "(g bigint, v varchar(5), ds string) using parquet partitioned by (ds)"
        " clustered by (g) into 4 buckets tblproperties ('of_the_source' = 'y')",
        "(g bigint) stored as textfile",
    ],
)
def test_a_table_made_like_another_is_the_statement_s_table(spark, tmp_path, source):
    """The catalog's `create_table_like` makes the entry `create table ... like ... location ...
    tblproperties (...)` makes, field for field (its name and location aside)."""
    spark.sql("drop database if exists m_like cascade")
    spark.sql("create database m_like")
    spark.sql(f"create table m_like.src {source}")
    wanted = {"side": "staging", "n": "1"}
    spark.sql(
        f"create table m_like.by_sql like m_like.src location '{tmp_path / 'sql'}'"
        " tblproperties ('side' = 'staging', 'n' = '1')"
    )
    metastore.create_table_like(spark, "m_like", "by_call", "src", str(tmp_path / "call"), wanted)

    by_sql, by_call = like_entry(spark, "by_sql"), like_entry(spark, "by_call")
    assert by_call == by_sql
    assert by_call["table_type"] == "EXTERNAL" and by_call["properties"].items() >= wanted.items()
    assert "of_the_source" not in by_call["properties"]
    location = spark.sql("describe table extended m_like.by_call").where("col_name = 'Location'").first()
    assert location.data_type.rstrip("/").endswith(str(tmp_path / "call"))
    # as the statement without `if not exists`, an existing table is an error, not a second table
    with pytest.raises(Exception, match="already exists"):
        metastore.create_table_like(spark, "m_like", "by_call", "src", str(tmp_path / "other"), wanted)
    metastore.create_table_like(
        spark, "m_like", "by_call", "src", str(tmp_path / "other"), {}, if_not_exists=True
    )
    assert like_entry(spark, "by_call") == by_call
    spark.sql("drop database m_like cascade")
