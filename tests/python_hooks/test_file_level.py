"""Which files the file-level purge copies: only those whose footers prove that no listed id is in
them.  Every case where the footers do not prove it (a row group that overlaps, a column of
another type, a file without the column, a name with a dot) must leave the file to the rewrite."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from python_hooks.catalog import files
from python_hooks.purge import file_level

BOUNDS = (1001, 1003)


def split(spark, directory, path, storage_format="parquet"):
    found = files.data_files(spark, f"file:{directory}")
    rows, clean, candidates = file_level.split_files(spark, found, storage_format, path, BOUNDS)
    name = lambda statuses: sorted(str(s.getPath().getName()) for s in statuses)  # noqa: E731
    return rows, name(clean), name(candidates)


def test_row_groups_decide_each_parquet_file(spark, tmp_path):
    def write(name, values, row_group_size=None, column="guestid"):
        table = pa.table({column: pa.array(values, pa.int64()), "payload": pa.array(["x"] * len(values))})
        pq.write_table(table, tmp_path / name, row_group_size=row_group_size)

    write("below.parquet", list(range(0, 1000)))  # max 999
    write("above.parquet", list(range(1004, 2000)))  # min 1004
    write("nulls.parquet", [None] * 10)  # only NULLs: no id matches
    # two row groups, the second overlapping the ids: the file may hold one
    write("second_group.parquet", list(range(0, 500)) + list(range(1000, 1500)), row_group_size=500)
    write("touching.parquet", [1003, 5000])  # min is the largest id
    write("other_column.parquet", list(range(0, 10)), column="otherid")  # no guestid at all
    rows, clean, candidates = split(spark, tmp_path, ["guestid"])
    assert rows == 1000 + 996 + 10 + 1000 + 2 + 10
    assert clean == ["above.parquet", "below.parquet", "nulls.parquet"]
    assert candidates == ["other_column.parquet", "second_group.parquet", "touching.parquet"]


def test_types_without_exact_statistics_are_rewritten(spark, tmp_path):
    pq.write_table(pa.table({"guestid": pa.array(["a", "b"])}), tmp_path / "strings.parquet")
    pq.write_table(pa.table({"guestid": pa.array([1.5, 2.5])}), tmp_path / "doubles.parquet")
    pq.write_table(pa.table({"g.id": pa.array([1, 2], pa.int64())}), tmp_path / "dotted.parquet")
    assert split(spark, tmp_path, ["guestid"])[1] == []
    # a column named with a dot cannot be told from a nested field: every file is read
    assert split(spark, tmp_path, ["g.id"])[1] == []


def test_bounds_only_for_integral_id_columns():
    assert file_level.usable_bounds({"type": "bigint", "min": "5", "max": "9"}) == (5, 9)
    assert file_level.usable_bounds({"type": "string", "min": "'a'", "max": "'b'"}) is None
    assert file_level.usable_bounds(None) is None
