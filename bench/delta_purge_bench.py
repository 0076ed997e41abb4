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

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import record  # noqa: E402
from measure import measure as measure_call  # noqa: E402
from workload import (  # noqa: E402
    DESCRIPTOR,
    add_fs_argument,
    events_table,
    listed_ids,
    local_warehouse,
    run_dbt,
)

NODE_SECONDS: list[float] = []


def dbt(*args: str) -> Any:
    return run_dbt(Path(os.environ["PURGE_BENCH_DIR"]), *args)


def delta_copy(spark: Any, source: str, database: str) -> None:
    """`<database>.events`: a Delta copy of `source`, partitioned by ds, deletion vectors on,
    onboarded as the Hive benchmark's table is (metadata.guestid)."""
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {database}.events using delta partitioned by (ds)
        tblproperties ('delta.enableDeletionVectors' = 'true', 'dataset.descriptor' = '{DESCRIPTOR}')
        as select * from {source}""")


def run_purge(database: str) -> None:
    """Only the purge node (not purge_log / purge_verification), without the audit hooks."""
    variables = {
        "purge_whitelist": f"{database}.events",
        "compliance_id_table": "bench_ids.ids",
        "compliance_id_column": "guestid",
        "purge_depends_on": [],
        "audit_enabled": False,
    }
    result = dbt("run", "--select", "path:models/purge/purge.sql", "--vars", json.dumps(variables))
    NODE_SECONDS.append(sum(r.execution_time for r in result.result.results))


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
        "purge": lambda: run_purge("bench_delta_purge"),
    }
    seconds = {}
    for job in ("floor", "purge") if floor_first else ("purge", "floor"):
        seconds[job], _, _ = measure_call(jobs[job])
    left = spark.sql("select count(*) from bench_delta_purge.events").collect()[0][0]
    floor_left = spark.sql("select count(*) from bench_delta_floor.events").collect()[0][0]
    if left != floor_left or left == rows:
        raise SystemExit(f"purge left {left} rows, the floor {floor_left} (of {rows}): they disagree")
    return {
        "rows": rows,
        "P": partitions,
        "k": touched,
        "ids": listed,
        "purged": rows - left,
        "purge_s": round(seconds["purge"], 2),
        "purge_node_s": round(NODE_SECONDS[-1], 2),
        "floor_s": round(seconds["floor"], 2),
        "ratio": round(seconds["purge"] / seconds["floor"], 2),
        "node_ratio": round(NODE_SECONDS[-1] / seconds["floor"], 2),
    }


def show(result: dict[str, Any]) -> None:
    print(
        f"rows={result['rows']:>11,} P={result['P']:>3} k={result['k']:>2} purged={result['purged']:>8,} | "
        f"purge {result['purge_s']:6.2f}s (node {result['purge_node_s']:6.2f}s) | floor {result['floor_s']:6.2f}s | "
        f"ratio {result['ratio']:.2f} (node {result['node_ratio']:.2f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--touched", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (medians are reported)")
    parser.add_argument(
        "--clustered", action="store_true", help="ids ordered in the data, listed as one block"
    )
    parser.add_argument(
        "--files-per-partition", type=int, default=0, help="about this many files per partition"
    )
    parser.add_argument(
        "--keep-work", action="store_true", help="keep the temporary warehouse and dbt's logs"
    )
    add_fs_argument(parser)
    args = parser.parse_args()
    # Delta in the session, as the Makefile sets it (docs/formats.md)
    os.environ.setdefault("LAKEHOUSE_DELTA_JARS", str(REPO / ".jars" / "formats"))
    work = Path(tempfile.mkdtemp(prefix="delta-purge-bench-"))
    os.environ["PURGE_BENCH_DIR"] = str(work)
    local_warehouse(work, args.fs)
    shape = (args.partitions, args.touched, args.clustered, args.files_per_partition)
    try:
        dbt("run-operation", "warehouse_databases")  # starts the session with the profile's settings
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        # warm-up at full size, not reported: the JVM compiles both jobs' paths, dbt parses
        point(spark, args.rows, *shape, floor_first=False)
        runs = []
        for repetition in range(max(1, args.repeat)):
            runs.append(point(spark, args.rows, *shape, floor_first=repetition % 2 == 0))
            print(f"repetition {repetition + 1}:")
            show(runs[-1])
        median = dict(runs[0])
        for key in ("purge_s", "purge_node_s", "floor_s", "ratio", "node_ratio"):
            median[key] = round(statistics.median(r[key] for r in runs), 2)
        print(f"\nmedians of {len(runs)} repetition(s):")
        show(median)
        record.write(
            {
                "node_ratio": median["node_ratio"],
                "command_ratio": median["ratio"],
                "floor_s": median["floor_s"],
            },
            repetitions=len(runs),
            details=[median, *runs],
            environment=record.cluster_environment(False, args.fs),
        )
    finally:
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
