"""The tests' own scanner (files_scan.py) sees what Spark reads, and every copy the metastore and
the journal name: the erasure tests hold the ledger to it, so its eyes must not be shut where
Spark's are open.  Each case is compared with Spark itself (`inputFiles()`, a count through the
table), not with python_hooks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.functional.erasure.files_scan import data_files, ids_in_files, local_directory
from tests.functional.purge.conftest import descriptor

DB = "e_scan"


def _parquet(path: Path, ids: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"guestid": pa.array(ids, pa.int64())}), path)
    return path


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


def spark_reads(spark, directory: Path) -> set[str]:
    """The files whose rows Spark reads under `directory` (each file holds one row).  Not
    `inputFiles()`: that lists `_metadata` and `_common_metadata`, whose rows are not read."""
    frame = spark.read.schema("guestid bigint").parquet(f"file:{directory}")
    return {local_directory(r[0]) for r in frame.selectExpr("input_file_name()").collect()}


def test_the_scanner_lists_what_spark_lists(spark, tmp_path):
    """File names in one directory, and the directories partition discovery walks or skips."""
    flat = tmp_path / "flat"
    for name in FILE_NAMES:
        _parquet(flat / name, [1])
    spark_files = spark_reads(spark, flat)
    assert spark_files == {str(flat / n) for n, read in FILE_NAMES.items() if read}
    assert {str(p) for p in data_files(flat)} == spark_files

    tree = tmp_path / "tree"
    for name in DIRECTORY_NAMES:
        _parquet(tree / name / "part-0.parquet", [1])
        for skipped in SKIPPED_DIRECTORIES:
            _parquet(tree / name / skipped / "part-0.parquet", [1])
    spark_files = spark_reads(spark, tree)
    assert spark_files == {str(tree / n / "part-0.parquet") for n in DIRECTORY_NAMES}
    assert {str(p) for p in data_files(tree)} == spark_files


@pytest.fixture
def purged_flat_table(spark):
    """An unpartitioned onboarded table as a purge leaves it: its location `<L>/_purge_<ts>`, the
    old files at `<L>` (the backup), and a journal entry naming a run's `<L>/_purge_<ts2>`."""
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    spark.sql(f"""create table {DB}.flat (guestid bigint) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.flat values (3002), (5)")
    home = Path(
        local_directory(
            spark.sql(f"describe formatted {DB}.flat").where("col_name = 'Location'").collect()[0][1]
        )
    )
    live = home / "_purge_100"
    _parquet(live / "part-00000.parquet", [3001, 6, 3001])
    for hidden in ("_temporary/part-9.parquet", ".part-8.parquet", "part-7.parquet._COPYING_"):
        _parquet(live / hidden, [3001])
    spark.sql(f"alter table {DB}.flat set location 'file:{live}'")
    # a run the journal names whose rewrite nothing in the metastore references
    orphan = _parquet(home / "_purge_200" / "part-00000.parquet", [3003])
    warehouse = Path(local_directory(str(spark.conf.get("spark.sql.warehouse.dir"))))
    journal = warehouse / "_lakehouse_journal" / "purge" / "200-files-scan-test"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / f"{DB}.flat.intent.json").write_text(
        json.dumps(
            {
                "database": DB,
                "table": "flat",
                "staging_location": f"file:{home}/_purge_200",
                "partitions": [
                    {
                        "partition_spec": "",
                        "old_location": f"file:{home}",
                        "new_location": f"file:{home}/_purge_200",
                    }
                ],
            }
        )
    )
    yield home, live, orphan
    shutil.rmtree(journal, ignore_errors=True)
    spark.sql(f"drop database if exists {DB} cascade")


def test_a_purged_unpartitioned_tables_live_files_are_read(spark, purged_flat_table):
    home, live, orphan = purged_flat_table
    found_live, copies = ids_in_files(spark, [DB], {3001, 3002, 3003})
    # the table's live files, in a directory named `_purge_<ts>`: what Spark reads of the table
    assert found_live == {str(live / "part-00000.parquet"): 2}
    spark.catalog.refreshTable(f"{DB}.flat")
    assert (
        spark.sql(f"select count(*) from {DB}.flat where guestid in (3001, 3002, 3003)").collect()[0][0] == 2
    )
    # the old files (the backup) and the rewrite only the journal names: copies
    olds = [str(p) for p in home.glob("*.parquet")] + [str(p) for p in home.glob("part-*")]
    assert copies == {**{p: 1 for p in set(olds) if p in copies}, str(orphan): 1}
    assert sum(v for p, v in copies.items() if p != str(orphan)) == 1  # 3002 in the old files
