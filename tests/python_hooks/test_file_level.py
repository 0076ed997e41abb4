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


def test_pyarrow_and_the_jvm_decide_every_file_alike(spark, tmp_path):
    """The local footer read (pyarrow) and the JVM's parquet-mr agree file by file, but for an
    unsigned column, which pyarrow leaves to the rewrite."""

    def write(name, values, type_=None, row_group_size=None, column="guestid"):
        table = pa.table(
            {column: pa.array(values, type_ or pa.int64()), "payload": pa.array(["x"] * len(values))}
        )
        pq.write_table(table, tmp_path / name, row_group_size=row_group_size)

    write("below.parquet", list(range(0, 1000)))
    write("above.parquet", list(range(1004, 2000)))
    write("nulls.parquet", [None] * 10)
    write("second_group.parquet", list(range(0, 500)) + list(range(1000, 1500)), row_group_size=500)
    write("int32.parquet", list(range(0, 100)), pa.int32())
    write("int16.parquet", list(range(0, 100)), pa.int16())
    write("unsigned.parquet", list(range(0, 100)), pa.uint64())
    write("other_column.parquet", list(range(0, 10)), column="otherid")
    decided = {}
    for status in files.data_files(spark, f"file:{tmp_path}"):
        name = str(status.getPath().getName())
        local = files.local_path(str(status.getPath().toString()))
        arrow = file_level.arrow_parquet_file(local, ["guestid"], BOUNDS)
        jvm = file_level._parquet_file(spark, status, ["guestid"], BOUNDS)
        if name == "unsigned.parquet":
            # parquet-mr compares an unsigned column's min/max as signed longs; pyarrow leaves it to the rewrite
            assert jvm == (100, True) and arrow == (100, False)
        else:
            assert arrow == jvm, name
        decided[name] = arrow[1]
    assert decided == {
        "above.parquet": True,
        "below.parquet": True,
        "int16.parquet": True,
        "int32.parquet": True,
        "nulls.parquet": True,
        "other_column.parquet": False,
        "second_group.parquet": False,
        "unsigned.parquet": False,  # not a signed integer: read by the rewrite
    }
