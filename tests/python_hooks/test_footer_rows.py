"""Row counts and listings from the JVM's own readers, many files per call (catalog/file_facts.py):
the same rows Spark counts, for parquet and ORC, and Spark's listing rules (no hidden or `_`
files, empty files hold no rows, a missing directory none, a sub-directory flagged)."""

from __future__ import annotations

import pytest

from python_hooks.catalog import files
from python_hooks.catalog.file_facts import FileFacts


def write(spark, directory, storage_format, rows, pieces=3):
    spark.range(rows).selectExpr("id", "cast(id as string) as s").repartition(pieces).write.format(
        storage_format
    ).mode("overwrite").save(f"file:{directory}")


@pytest.mark.parametrize("storage_format", ["parquet", "orc"])
def test_the_footers_give_the_rows_spark_counts(spark, tmp_path, storage_format):
    write(spark, tmp_path, storage_format, 1000)
    facts = FileFacts(spark)
    listing = facts.list([f"file:{tmp_path}"])[f"file:{tmp_path}"]
    assert len(listing.files) == 3 and not listing.subdirectories
    footers = facts.footers([f.path for f in listing.files], storage_format, None)
    for item in listing.files:
        status = [s for s in files.data_files(spark, item.path)][0]
        reader = files.parquet_footer_reader if storage_format == "parquet" else files.orc_footer_reader
        with reader(spark, status) as opened:
            direct = int(opened.getRecordCount() if storage_format == "parquet" else opened.getNumberOfRows())
        assert footers[item.path].rows == direct
    counted = spark.read.format(storage_format).load(f"file:{tmp_path}").count()
    assert (
        facts.rows([f"file:{tmp_path}"], storage_format)
        == {f"file:{tmp_path}": counted}
        == {f"file:{tmp_path}": 1000}
    )


def test_the_listing_follows_sparks_rules(spark, tmp_path):
    write(spark, tmp_path, "parquet", 100)
    (tmp_path / "empty.parquet").write_bytes(b"")  # an empty file holds no rows
    (tmp_path / ".hidden.parquet").write_bytes(b"not a footer")  # hidden: not data
    (tmp_path / "_temporary").mkdir()  # a writer's leftover: not data
    facts = FileFacts(spark)
    here, missing = f"file:{tmp_path}", f"file:{tmp_path}/missing"
    assert facts.rows([here, missing], "parquet") == {here: 100, missing: 0}
    assert not facts.list([missing])[missing].exists
    (tmp_path / "HIVE_UNION_SUBDIR_1").mkdir()  # Spark does not read it in a Hive partition
    assert facts.list([here])[here].subdirectories
    assert facts.rows([here], "parquet") == {here: None}


def test_an_unreadable_footer_is_an_error_of_that_file_only(spark, tmp_path):
    write(spark, tmp_path, "parquet", 10, pieces=1)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    facts = FileFacts(spark)
    listing = facts.list([f"file:{tmp_path}"])[f"file:{tmp_path}"]
    footers = facts.footers([f.path for f in listing.files], "parquet", None)
    assert [p for p, f in footers.items() if f.error] == [f"file:{broken}"]
    assert sum(f.rows for f in footers.values() if f.error is None) == 10
    assert facts.rows([f"file:{tmp_path}"], "parquet") == {f"file:{tmp_path}": None}


def spark_reads(spark, directory) -> set[str]:
    """The files whose rows Spark reads under `directory` (each test file holds one row)."""
    frame = spark.read.schema("id bigint").parquet(f"file:{directory}")
    return {r[0].replace("file:///", "/") for r in frame.selectExpr("input_file_name()").collect()}


def test_the_hidden_rule_is_sparks(spark, tmp_path):
    """FileFacts lists exactly the files Spark reads: the names it keeps (`part-0`, `_a=1`, the
    files of `k=v` directories) and those it skips (`_x`, `.x`, `x._COPYING_`, `_SUCCESS`,
    `_metadata`, `_common_metadata`, and the directories `_temporary`, `.hive-staging`,
    `_purge_<ts>`, `x._COPYING_` inside a partition)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def one_row(path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), path)

    flat = tmp_path / "flat"
    kept = ["part-0.parquet", "_a=1.parquet"]
    skipped = ["_hidden.parquet", ".hidden.parquet", "part-1.parquet._COPYING_", "_SUCCESS"]
    skipped += ["_metadata", "_common_metadata"]
    for name in kept + skipped:
        one_row(flat / name)
    facts = FileFacts(spark)
    listed = {f.path.replace("file:", "") for f in facts.list([f"file:{flat}"])[f"file:{flat}"].files}
    assert spark_reads(spark, flat) == {str(flat / n) for n in kept}
    assert listed == spark_reads(spark, flat)
    # the erasure verifier's listing reads all Spark reads, and a copy in progress besides (its
    # bytes may hold ids)
    verifier = {
        str(s.getPath().toString()).replace("file:", "") for s in files.data_files(spark, f"file:{flat}")
    }
    assert verifier == spark_reads(spark, flat) | {str(flat / "part-1.parquet._COPYING_")}

    tree = tmp_path / "tree"
    for partition in ("k=1", "k=2"):
        one_row(tree / partition / "part-0.parquet")
        for directory in ("_temporary", ".hive-staging_1", "_purge_7", "k=3._COPYING_"):
            one_row(tree / partition / directory / "part-0.parquet")
    listed = {
        f.path.replace("file:", "")
        for f in facts.list([f"file:{tree}"], recursive=True)[f"file:{tree}"].files
    }
    assert spark_reads(spark, tree) == {str(tree / p / "part-0.parquet") for p in ("k=1", "k=2")}
    assert listed == spark_reads(spark, tree)
    verifier = {
        str(s.getPath().toString()).replace("file:", "") for s in files.data_files(spark, f"file:{tree}")
    }
    assert verifier == listed | {str(tree / p / "k=3._COPYING_" / "part-0.parquet") for p in ("k=1", "k=2")}
    # a skipped directory inside a partition is no sub-directory Spark could read
    assert not facts.list([f"file:{tree}/k=1"])[f"file:{tree}/k=1"].subdirectories


# (identifier type as Spark writes it, format, whether the footer rule may rule files out)
PARITY_TYPES = [
    ("bigint", "parquet", True),
    ("int", "orc", True),
    ("bigint", "orc", True),
    ("decimal(18,0)", "parquet", False),
    ("decimal(18,0)", "orc", False),
    ("string", "parquet", False),
    ("string", "orc", False),
    ("uint32", "parquet", False),  # unsigned: written by pyarrow, read by Spark as bigint
]


@pytest.mark.parametrize(("identifier_type", "storage_format", "prunes"), PARITY_TYPES)
def test_the_footer_rule_agrees_with_sparks_semi_join(
    spark, tmp_path, identifier_type, storage_format, prunes
):
    """Six files, each holding ids [1000k, 1000k + 999]; a file is ruled out by the footer rule
    (file_facts.may_hold) only when Spark's semi-join with the ids finds no row in it; for the
    types the rule does not claim (decimal, string, unsigned), it rules out nothing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from python_hooks.catalog.file_facts import may_hold

    directory = tmp_path / "files"
    for k in range(6):
        if identifier_type == "uint32":
            directory.mkdir(exist_ok=True)
            values = pa.array(range(1000 * k, 1000 * k + 1000), pa.uint32())
            pq.write_table(pa.table({"guestid": values}), directory / f"part-{k}.parquet")
            continue
        spark.range(1000 * k, 1000 * k + 1000).selectExpr(
            f"cast(id as {identifier_type}) as guestid", "'x' as payload"
        ).coalesce(1).write.format(storage_format).mode("append").save(f"file:{directory}")
    listed = [1500, 1999, 2003, 2500]
    bounds = (min(listed), max(listed))
    spark.createDataFrame([(v,) for v in listed], "guestid bigint").createOrReplaceTempView("parity_ids")
    facts = FileFacts(spark)
    paths = [f.path for f in facts.list([f"file:{directory}"])[f"file:{directory}"].files]
    assert len(paths) == 6
    footers = facts.footers(paths, storage_format, "guestid")
    ruled_out = held = 0
    for path in paths:
        spark.read.format(storage_format).load(path).createOrReplaceTempView("parity_file")
        truth = spark.sql(
            "select count(*) from parity_file a left semi join parity_ids b on a.guestid = b.guestid"
        ).collect()[0][0]
        if truth > 0:
            held += 1
            assert may_hold(footers[path], bounds), (identifier_type, storage_format, path, footers[path])
        elif not may_hold(footers[path], bounds):
            ruled_out += 1
    assert held == 2  # the files of 1000..1999 and 2000..2999
    # the types the rule claims are pruned (the test is not vacuous); the others fall back to reading
    assert ruled_out == (4 if prunes else 0), footers
    spark.catalog.dropTempView("parity_ids")
    spark.catalog.dropTempView("parity_file")
