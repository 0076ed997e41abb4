"""Row counts from the footers: pyarrow on the local filesystem and the JVM's readers must agree,
file by file, for parquet and ORC, and the local listing must follow the JVM listing's rules (no
hidden or `_` files, empty files hold no rows, a missing directory none, a sub-directory raises)."""

from __future__ import annotations

import pytest

from python_hooks.catalog import files


def write(spark, directory, storage_format, rows, pieces=3):
    spark.range(rows).selectExpr("id", "cast(id as string) as s").repartition(pieces).write.format(
        storage_format
    ).mode("overwrite").save(f"file:{directory}")


@pytest.mark.parametrize("storage_format", ["parquet", "orc"])
def test_pyarrow_and_the_jvm_read_the_same_rows(spark, tmp_path, storage_format):
    write(spark, tmp_path, storage_format, 1000)
    statuses = files.data_files(spark, f"file:{tmp_path}")
    assert len(statuses) == 3
    for status in statuses:
        local = files.local_path(str(status.getPath().toString()))
        assert local is not None and local.startswith(str(tmp_path))
        if storage_format == "parquet":
            with files.parquet_footer_reader(spark, status) as reader:
                jvm_rows = int(reader.getRecordCount())
        else:
            with files.orc_footer_reader(spark, status) as reader:
                jvm_rows = int(reader.getNumberOfRows())
        assert files.arrow_file_rows(local, storage_format) == jvm_rows
    assert files.footer_rows(spark, statuses, storage_format) == 1000
    assert files.location_rows(spark, f"file:{tmp_path}", storage_format) == 1000
    assert files.location_rows(spark, f"file://{tmp_path}", storage_format) == 1000


def test_the_local_listing_follows_the_jvm_rules(spark, tmp_path):
    write(spark, tmp_path, "parquet", 100)
    (tmp_path / "empty.parquet").write_bytes(b"")  # an empty file holds no rows
    (tmp_path / ".hidden.parquet").write_bytes(b"not a footer")  # hidden: not data
    (tmp_path / "_temporary").mkdir()  # a writer's leftover: not data
    assert files.location_rows(spark, f"file:{tmp_path}", "parquet") == 100
    assert files.location_rows(spark, f"file:{tmp_path}/missing", "parquet") == 0
    (tmp_path / "HIVE_UNION_SUBDIR_1").mkdir()
    with pytest.raises(ValueError, match="holds a sub-directory"):
        files.location_rows(spark, f"file:{tmp_path}", "parquet")


def test_a_footer_pyarrow_cannot_read_is_left_to_the_jvm(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    assert files.arrow_file_rows(str(broken), "parquet") is None
    assert files.local_path("hdfs://nn:8020/warehouse/t") is None
    assert files.local_path("file:/w/t/ds=a%3Ab") == "/w/t/ds=a%3Ab"
    assert files.local_path("file:///w/t") == "/w/t"
