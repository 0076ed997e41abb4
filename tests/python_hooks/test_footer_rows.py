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
