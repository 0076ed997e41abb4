"""Benchmark: the project's purge of a Delta Lake table against Delta's own recipe written by hand.

Generates a partitioned Delta table of N rows over P partitions (deletion vectors on, as Delta
3.3 creates them when asked), lists about 1% of the ids, all in k partitions, and in the same
process (one Spark session) runs on two identical copies:

- the purge: the project's `purge` node on one copy (its scan, a MERGE with the id table, then
  `REORG ... APPLY (PURGE)` over the partitions that held ids);
- the floor: what a careful engineer writes by hand with Delta's own commands on the other: the
  same MERGE with the id table (a join: Delta's DELETE takes no subquery, and a literal list
  would put the ids in the log), then `REORG TABLE ... APPLY (PURGE)`, which rewrites only the
  files that carry deletion vectors.

Neither runs VACUUM: retention does, after the purge, and `bench/retention_bench.py` times it.
Prints the purge command's and node's wall time against the floor's and their ratios, medians of
--repeat repetitions after a discarded warm-up at full size; the two jobs alternate which runs
first.  Checks that both leave the same rows.

    .venv/bin/python bench/delta_purge_bench.py                       # 5M rows, P=24, k=4, x5
    .venv/bin/python bench/delta_purge_bench.py --rows 50000000 --repeat 3
    .venv/bin/python bench/delta_purge_bench.py --clustered --files-per-partition 16 --rows 50000000 --repeat 3
    .venv/bin/python bench/delta_purge_bench.py --fs s3a --repeat 3    # the warehouse on `make s3-up`'s store

With --clustered the ids are ordered in the data (each file a contiguous id range) and listed as
one block: the purge's scan carries the id range, which Delta's file statistics use to skip
files; the floor's MERGE joins every file of the table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import format_purge  # noqa: E402
from workload import DESCRIPTOR, events_table, listed_ids  # noqa: E402


def delta_copy(spark: Any, source: str, database: str) -> None:
    """`<database>.events`: a Delta copy of `source`, partitioned by ds, deletion vectors on,
    onboarded as the Hive benchmark's table is (metadata.guestid)."""
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {database}.events using delta partitioned by (ds)
        tblproperties ('delta.enableDeletionVectors' = 'true', 'dataset.descriptor' = '{DESCRIPTOR}')
        as select * from {source}""")


def run_floor(spark: Any, database: str) -> None:
    """Delta's own recipe: a MERGE with the id table, then REORG ... APPLY (PURGE)."""
    spark.sql(f"""
        merge into {database}.events as a
        using (select distinct guestid from bench_ids.ids where guestid is not null) as b
        on a.metadata.guestid = b.guestid
        when matched then delete""")
    spark.sql(f"reorg table {database}.events apply (purge)")


def point(
    spark: Any, rows: int, partitions: int, touched: int, clustered: bool, files: int, floor_first: bool
) -> dict[str, Any]:
    events_table(spark, "bench_delta_src", rows, partitions, clustered, files)
    key = "spark.sql.files.maxRecordsPerFile"
    previous = spark.conf.get(key)
    if files > 0:  # the copies keep the source's files per partition
        spark.conf.set(key, str(-(-rows // (partitions * files))))
    try:
        delta_copy(spark, "bench_delta_src.events", "bench_delta_purge")
        delta_copy(spark, "bench_delta_src.events", "bench_delta_floor")
    finally:
        spark.conf.set(key, previous)
    listed = listed_ids(spark, rows, partitions, touched, clustered)
    jobs = {
        "floor": lambda: run_floor(spark, "bench_delta_floor"),
        "purge": lambda: format_purge.run_purge("bench_delta_purge.events"),
    }
    seconds = format_purge.timed(jobs, floor_first)
    left = spark.sql("select count(*) from bench_delta_purge.events").collect()[0][0]
    floor_left = spark.sql("select count(*) from bench_delta_floor.events").collect()[0][0]
    if left != floor_left or left == rows:
        raise SystemExit(f"purge left {left} rows, the floor {floor_left} (of {rows}): they disagree")
    return format_purge.figures((rows, partitions, touched), listed, rows - left, seconds)


def main() -> None:
    args = format_purge.arguments(__doc__, "about this many files per partition")
    format_purge.run(args, "delta-purge-bench-", point)


if __name__ == "__main__":
    main()
