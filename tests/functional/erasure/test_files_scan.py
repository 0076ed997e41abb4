"""The tests' own scanner (files_scan.py) sees what Spark reads, and every copy the metastore and
the journal name: the erasure tests hold the ledger to it, so its eyes must not be shut where
Spark's are open.  Each case is compared with Spark itself (`input_file_name()`, a count through
the table), not with python_hooks, on the warehouse's own filesystem (local disk, HDFS or S3):
the files are written, and Spark and the scanner list them, there."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from tests import warehouse_fs
from tests.conftest import beside_warehouse
from tests.functional.erasure.files_scan import Hadoop, data_files, ids_in_files, warehouse
from tests.functional.purge.conftest import descriptor

DB = "e_scan"


def _parquet(spark, location: str, ids: list[int]) -> str:
    warehouse_fs.write_parquet(spark, location, pa.table({"guestid": pa.array(ids, pa.int64())}))
    return warehouse_fs.qualify(spark, location)


# names under a location, and whether Spark 3.5 reads them as data
FILE_NAMES = {
    "part-0.parquet": True,
    "_a=1.parquet": True,  # `_` with `=`: kept (a partition-like name)
    "_hidden.parquet": False,
    ".hidden.parquet": False,
    "part-1.parquet._COPYING_": False,  # a copy in progress
    "_SUCCESS": False,
    "_metadata": False,  # a summary file, listed for parquet but not read as data
    "_common_metadata": False,
}
DIRECTORY_NAMES = {
    "k=1": True,
    "k=2": True,
}
# directories inside a partition directory: Spark descends into some of them when it discovers
# partitions, never into these
SKIPPED_DIRECTORIES = ["_temporary", ".hive-staging_1", "_purge_7", "k=3._COPYING_"]


def spark_reads(spark, directory: str) -> set[str]:
    """The files whose rows Spark reads under `directory` (each file holds one row).  Not
    `inputFiles()`: that lists `_metadata` and `_common_metadata`, whose rows are not read."""
    frame = spark.read.schema("guestid bigint").parquet(directory)
    return {Hadoop(spark).from_uri(r[0]) for r in frame.selectExpr("input_file_name()").collect()}


@pytest.fixture
def scratch(spark, tmp_path):
    """A directory of its own beside the warehouse, on the warehouse's filesystem."""
    directory = warehouse_fs.qualify(spark, beside_warehouse(f"files-scan-{tmp_path.name}"))
    yield directory
    warehouse_fs.delete(spark, directory)


def test_the_scanner_lists_what_spark_lists(spark, scratch):
    """File names in one directory, and the directories partition discovery walks or skips."""
    flat = f"{scratch}/flat"
    for name in FILE_NAMES:
        _parquet(spark, f"{flat}/{name}", [1])
    spark_files = spark_reads(spark, flat)
    assert spark_files == {f"{flat}/{n}" for n, read in FILE_NAMES.items() if read}
    assert set(data_files(spark, flat)) == spark_files

    tree = f"{scratch}/tree"
    for name in DIRECTORY_NAMES:
        _parquet(spark, f"{tree}/{name}/part-0.parquet", [1])
        for skipped in SKIPPED_DIRECTORIES:
            _parquet(spark, f"{tree}/{name}/{skipped}/part-0.parquet", [1])
    spark_files = spark_reads(spark, tree)
    assert spark_files == {f"{tree}/{n}/part-0.parquet" for n in DIRECTORY_NAMES}
    assert set(data_files(spark, tree)) == spark_files


@pytest.fixture
def purged_flat_table(spark):
    """An unpartitioned onboarded table as a purge leaves it: its location `<L>/_purge_<ts>`, the
    old files at `<L>` (the backup), and a journal entry naming a run's `<L>/_purge_<ts2>`."""
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    spark.sql(f"""create table {DB}.flat (guestid bigint) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.flat values (3002), (5)")
    home = warehouse_fs.qualify(
        spark, spark.sql(f"describe formatted {DB}.flat").where("col_name = 'Location'").collect()[0][1]
    )
    live = f"{home}/_purge_100"
    _parquet(spark, f"{live}/part-00000.parquet", [3001, 6, 3001])
    for hidden in ("_temporary/part-9.parquet", ".part-8.parquet", "part-7.parquet._COPYING_"):
        _parquet(spark, f"{live}/{hidden}", [3001])
    spark.sql(f"alter table {DB}.flat set location '{live}'")
    # a run the journal names whose rewrite nothing in the metastore references
    orphan = _parquet(spark, f"{home}/_purge_200/part-00000.parquet", [3003])
    journal = f"{warehouse(spark)}/_lakehouse_journal/purge/200-files-scan-test"
    document = {
        "database": DB,
        "table": "flat",
        "staging_location": f"{home}/_purge_200",
        "partitions": [{"partition_spec": "", "old_location": home, "new_location": f"{home}/_purge_200"}],
    }
    warehouse_fs.write_bytes(spark, f"{journal}/{DB}.flat.intent.json", json.dumps(document).encode())
    yield home, live, orphan
    warehouse_fs.delete(spark, journal)
    spark.sql(f"drop database if exists {DB} cascade")


def test_a_purged_unpartitioned_tables_live_files_are_read(spark, purged_flat_table):
    home, live, orphan = purged_flat_table
    found_live, copies = ids_in_files(spark, [DB], {3001, 3002, 3003})
    # the table's live files, in a directory named `_purge_<ts>`: what Spark reads of the table
    assert found_live == {f"{live}/part-00000.parquet": 2}
    spark.catalog.refreshTable(f"{DB}.flat")
    assert (
        spark.sql(f"select count(*) from {DB}.flat where guestid in (3001, 3002, 3003)").collect()[0][0] == 2
    )
    # the old files (the backup: 3002, written by Spark at <L>) and the rewrite only the journal
    # names: copies
    olds = {f"{home}/{name}" for name in warehouse_fs.data_files(spark, home)}
    assert copies.pop(orphan) == 1
    assert set(copies) <= olds and sum(copies.values()) == 1, (copies, olds)
