"""Benchmark: the project's purge (`dbt run --select purge` via dbtRunner) against the engine floor.

Generates a Hive parquet table of N rows over P partitions, lists about 1% of the ids, all in k
partitions, and in the same process (one Spark session) runs:

- the purge: the project's `purge` node on that table;
- the floor: a plain PySpark job on an identical copy doing the same work with nothing around it:
  one semi-join to find the partitions with ids, a broadcast anti-join written into new partition
  directories, and the partition locations swapped.

Prints wall time (the whole dbt command, and the purge node alone), rows/s (rows of the table per
second), peak memory (RSS of this process and its JVM child) and the ratio purge/floor, after a
discarded warm-up at full size; the two jobs alternate which runs first.  The main point is
repeated (--repeat, default 5) and the medians are reported: the machine is shared, so only ratios measured
in the same invocation compare.  Then a small sweep over k and P (draws bench/results/purge.png).

    .venv/bin/python bench/purge_bench.py                 # 5M rows, P=24, k=4 (x5, medians), then the sweep
    .venv/bin/python bench/purge_bench.py --rows 1000000 --sweep-rows 500000 --repeat 1
    .venv/bin/python bench/purge_bench.py --cluster --executors 2 --rows 1000000 --sweep-rows 0 --repeat 1
    .venv/bin/python bench/purge_bench.py --cluster --fs hdfs --sweep-rows 0 --repeat 3   # warehouse on HDFS
    .venv/bin/python bench/purge_bench.py --clustered --rows 50000000 --repeat 3   # ids ordered in the data
    .venv/bin/python bench/purge_bench.py --clustered --files-per-partition 16 --rows 50000000 --repeat 3

With --clustered the ids are ordered in the data (partition p holds a contiguous id range, each
file a contiguous sub-range) and listed as one block: the purge's scan carries the id range,
which the parquet reader uses to skip row groups by their statistics; the floor scans every file.
With --files-per-partition F each partition is written as about F files (as a day's appends
build it): the purge then rewrites only the files whose footers admit a listed id and copies
the others (python_hooks/purge/rewriting.py, by catalog/file_facts.py's may_hold rule), while the floor rewrites the whole partition.

With --cluster (bench/cluster.py) the same comparison runs as the `cluster` target on the cluster
of `make cluster-up`, and it also counts the metastore calls of each purge run and of one
retention run after it (from the metastore service's audit log).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import cluster  # noqa: E402
import record  # noqa: E402
from measure import measure as measure_call  # noqa: E402
from workload import (  # noqa: E402
    add_fs_argument,
    copy_free_commit,
    counters_between,
    describe_counters,
    events_table,
    listed_ids,
    run_dbt,
    store_counters,
)

RESULTS = REPO / "bench" / "results"


def dbt(*args: str) -> Any:
    return run_dbt(Path(os.environ["PURGE_BENCH_DIR"]), *args)


# --clustered: ids ordered in the data and listed as one block (workload.events_table)
CLUSTERED = False
# --files-per-partition: each partition written as about this many files (0: one per writing task)
FILES_PER_PARTITION = 0
# --vars: more dbt vars for the purge (e.g. '{"purge_file_level": false}')
EXTRA_VARS: dict[str, Any] = {}


# on S3 the floor's write commits with S3A's magic committer, as a careful engineer's would (and
# as the purge's staging writes do); --floor-rename-committer keeps Spark's default (renames,
# that is copies) to show what that costs
FLOOR_MAGIC_COMMITTER = {"on": True}

NODE_SECONDS: list[float] = []
METASTORE_CALLS: list[cluster.MetastoreCalls] = []
FLOOR_PHASES: list[tuple[float, float, float]] = []


def run_purge(database: str) -> None:
    """Only the purge node (not purge_log / purge_verification), without the audit hooks."""
    variables = {
        "purge_whitelist": f"{database}.events",
        "compliance_id_table": "bench_ids.ids",
        "compliance_id_column": "guestid",
        "purge_depends_on": [],
        "audit_enabled": False,
        **EXTRA_VARS,
    }
    calls = cluster.MetastoreCalls().start() if os.environ.get("DBT_TARGET") == "cluster" else None
    result = dbt("run", "--select", "path:models/purge/purge.sql", "--vars", json.dumps(variables))
    if calls is not None:
        calls.stop()
        METASTORE_CALLS.append(calls)
    NODE_SECONDS.append(sum(r.execution_time for r in result.result.results))


def run_floor(spark: Any, database: str) -> None:
    """The same work in plain PySpark: find partitions, anti-join, write, swap."""
    from pyspark.sql import functions as F

    started = time.perf_counter()
    table = spark.table(f"{database}.events")
    ids = spark.table("bench_ids.ids").where("guestid is not null").distinct()
    hit = [
        r.ds
        for r in table.join(F.broadcast(ids), table.metadata.guestid == ids.guestid, "left_semi")
        .select("ds")
        .distinct()
        .collect()
    ]
    scanned = time.perf_counter()
    root = spark.sql(f"describe formatted {database}.events").where("col_name = 'Location'").collect()[0][1]
    target = f"{root}/floor_{int(time.time() * 1000)}"
    kept = table.where(F.col("ds").isin(hit)).join(
        F.broadcast(ids), table.metadata.guestid == ids.guestid, "left_anti"
    )
    with copy_free_commit(spark, target, FLOOR_MAGIC_COMMITTER["on"]) as magic:
        writer = kept.write.mode("overwrite").partitionBy("ds")
        if magic:  # a fresh directory; S3A's committers refuse dynamic partition overwrite
            writer = writer.option("partitionOverwriteMode", "static")
        writer.parquet(target)
    written = time.perf_counter()
    for ds in hit:
        spark.sql(f"alter table {database}.events partition (ds = '{ds}') set location '{target}/ds={ds}'")
    FLOOR_PHASES.append((scanned - started, written - scanned, time.perf_counter() - written))


STORE_COSTS: dict[str, dict[str, int]] = {}


def measure(fn: Any, job: str = "") -> tuple[float, int]:
    """Wall time and peak RSS of one job; on S3 what it cost the store, in STORE_COSTS[job]."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    before = store_counters(spark)
    elapsed, peak, _ = measure_call(fn)
    STORE_COSTS[job] = counters_between(before, store_counters(spark))
    return elapsed, peak


def point(spark: Any, rows: int, partitions: int, touched: int, floor_first: bool = True) -> dict[str, Any]:
    events_table(spark, "bench_purge", rows, partitions, CLUSTERED, FILES_PER_PARTITION)
    events_table(spark, "bench_floor", rows, partitions, CLUSTERED, FILES_PER_PARTITION)
    listed = listed_ids(spark, rows, partitions, touched, CLUSTERED)
    if floor_first:
        floor_s, floor_mem = measure(lambda: run_floor(spark, "bench_floor"), "floor")
        purge_s, purge_mem = measure(lambda: run_purge("bench_purge"), "purge")
    else:
        purge_s, purge_mem = measure(lambda: run_purge("bench_purge"), "purge")
        floor_s, floor_mem = measure(lambda: run_floor(spark, "bench_floor"), "floor")
    left = spark.sql("select count(*) from bench_purge.events").collect()[0][0]
    floor_left = spark.sql("select count(*) from bench_floor.events").collect()[0][0]
    if left != floor_left:
        raise SystemExit(f"purge left {left} rows, the floor {floor_left}: they disagree")
    extra: dict[str, Any] = {}
    if METASTORE_CALLS:
        extra["metastore_calls"] = METASTORE_CALLS[-1].total
        extra["metastore_calls_by_kind"] = dict(METASTORE_CALLS[-1].calls.most_common())
    if STORE_COSTS.get("purge"):
        extra["purge_store"] = STORE_COSTS["purge"]
        extra["floor_store"] = STORE_COSTS["floor"]
    return {
        **extra,
        "rows": rows,
        "P": partitions,
        "k": touched,
        "ids": listed,
        "purged": rows - left,
        "purge_s": round(purge_s, 2),
        "floor_s": round(floor_s, 2),
        "ratio": round(purge_s / floor_s, 2),
        "purge_node_s": round(NODE_SECONDS[-1], 2),
        "floor_phases_s": [round(x, 2) for x in FLOOR_PHASES[-1]],
        "node_ratio": round(NODE_SECONDS[-1] / floor_s, 2),
        # dbt's own start-up: the command's time outside the node (parse, cache, hooks, compile)
        "dbt_startup_s": round(purge_s - NODE_SECONDS[-1], 2),
        "floor_plus_startup_s": round(floor_s + purge_s - NODE_SECONDS[-1], 2),
        "ratio_to_floor_plus_startup": round(purge_s / (floor_s + purge_s - NODE_SECONDS[-1]), 2),
        "purge_rows_per_s": int(rows / purge_s),
        "floor_rows_per_s": int(rows / floor_s),
        "purge_peak_mb": purge_mem // 2**20,
        "floor_peak_mb": floor_mem // 2**20,
    }


def show(result: dict[str, Any]) -> None:
    print(
        f"rows={result['rows']:>9,} P={result['P']:>3} k={result['k']:>2} purged={result['purged']:>7,} | "
        f"purge {result['purge_s']:6.2f}s {result['purge_rows_per_s']:>10,} rows/s peak {result['purge_peak_mb']:>5} MB | "
        f"floor {result['floor_s']:6.2f}s {result['floor_rows_per_s']:>10,} rows/s peak {result['floor_peak_mb']:>5} MB | "
        f"ratio {result['ratio']:.2f} (purge node alone {result['purge_node_s']:.2f}s, ratio {result['node_ratio']:.2f})",
        flush=True,
    )
    if "dbt_startup_s" in result:
        print(
            f"    floor + dbt's own start-up ({result['dbt_startup_s']:.2f}s, the command outside the node):"
            f" {result['floor_plus_startup_s']:.2f}s; the command is {result['ratio_to_floor_plus_startup']:.2f}x that",
            flush=True,
        )
    if "metastore_calls" in result:
        kinds = ", ".join(f"{k} {v}" for k, v in list(result["metastore_calls_by_kind"].items())[:6])
        print(f"    purge run: {result['metastore_calls']} metastore calls ({kinds})", flush=True)
    if "floor_phases_s" in result:
        scan, write, swap = result["floor_phases_s"]
        print(f"    floor: scan {scan:.2f}s, anti-join and write {write:.2f}s, swaps {swap:.2f}s", flush=True)
    if "purge_store" in result:
        print(f"    S3, the purge (the dbt command): {describe_counters(result['purge_store'])}", flush=True)
        print(f"    S3, the floor: {describe_counters(result['floor_store'])}", flush=True)


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The point with the median of every timing (each median taken on its own)."""
    result = dict(runs[0])
    for key in (
        "purge_s",
        "floor_s",
        "purge_node_s",
        "ratio",
        "node_ratio",
        "dbt_startup_s",
        "floor_plus_startup_s",
        "ratio_to_floor_plus_startup",
    ):
        result[key] = round(statistics.median(r[key] for r in runs), 2)
    result["floor_phases_s"] = [
        round(statistics.median(r["floor_phases_s"][i] for r in runs), 2) for i in range(3)
    ]
    result["purge_rows_per_s"] = int(result["rows"] / result["purge_s"])
    result["floor_rows_per_s"] = int(result["rows"] / result["floor_s"])
    for job in ("purge_store", "floor_store"):
        if job in result:
            result[job] = {k: int(statistics.median(r[job][k] for r in runs)) for k in result[job]}
    result["purge_peak_mb"] = max(r["purge_peak_mb"] for r in runs)
    result["floor_peak_mb"] = max(r["floor_peak_mb"] for r in runs)
    result["repetitions"] = len(runs)
    return result


def plot(sweep_k: list[dict[str, Any]], sweep_p: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, data, key, label in (
        (axes[0], sweep_k, "k", "partitions touched (k)"),
        (axes[1], sweep_p, "P", "partitions in the table (P)"),
    ):
        xs = [d[key] for d in data]
        ax.plot(xs, [d["purge_s"] for d in data], "o-", label="purge (dbt)")
        ax.plot(xs, [d["floor_s"] for d in data], "s--", label="floor (PySpark)")
        ax.set_xlabel(label)
        ax.set_ylabel("wall time (s)")
        ax.set_xscale("log", base=2)
        ax.legend()
    axes[0].set_title(f"P={sweep_k[0]['P']}, {sweep_k[0]['rows']:,} rows")
    axes[1].set_title(f"k={sweep_p[0]['k']}, {sweep_p[0]['rows']:,} rows")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def retention_calls(spark: Any) -> dict[str, Any]:
    """One retention run over the purged tables (every backup kept, so it deletes nothing): its
    metastore calls, the price of listing every table, backup and partition of the warehouse."""
    variables = {
        "retention_scope": "bench_purge",
        "audit_enabled": False,
    }
    calls = cluster.MetastoreCalls().start()
    started = time.perf_counter()
    dbt("run", "--select", "retention", "--vars", json.dumps(variables))
    elapsed = time.perf_counter() - started
    calls.stop()
    backups = spark.sql("show tables in bench_purge like 'events_backup_*'").count()
    print(f"\nretention run ({backups} backup table(s) kept): {elapsed:.1f}s, {calls.summary()}", flush=True)
    return {"total": calls.total, "by_kind": dict(calls.calls.most_common()), "seconds": round(elapsed, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--touched", type=int, default=4)
    parser.add_argument(
        "--sweep-rows", type=int, default=1_000_000, help="rows for the k/P sweep (0: no sweep)"
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="repetitions of the main point (medians are reported)"
    )
    parser.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the temporary warehouse and dbt's logs (logs/dbt.log times every purge step)",
    )
    parser.add_argument(
        "--clustered",
        action="store_true",
        help="ids ordered in the data and listed as one block (data skipping by footer statistics); no sweep",
    )
    parser.add_argument(
        "--files-per-partition",
        type=int,
        default=0,
        help="write each partition as about this many files (0: one per writing task), as appends build a day",
    )
    parser.add_argument("--vars", default="{}", help="more dbt vars for the purge, as JSON")
    parser.add_argument(
        "--floor-rename-committer",
        action="store_true",
        help="on S3, the floor's write with Spark's default committer (renames: copies) instead of S3A's magic one",
    )
    cluster.add_arguments(parser)
    add_fs_argument(parser)
    args = parser.parse_args()
    EXTRA_VARS.update(json.loads(args.vars))
    FLOOR_MAGIC_COMMITTER["on"] = not args.floor_rename_committer
    global CLUSTERED, FILES_PER_PARTITION
    CLUSTERED = args.clustered
    FILES_PER_PARTITION = args.files_per_partition
    if CLUSTERED:
        args.sweep_rows = 0

    work = Path(tempfile.mkdtemp(prefix="purge-bench-"))
    os.environ["PURGE_BENCH_DIR"] = str(work)
    cluster.choose_warehouse(args, "purge", work)
    try:
        # starts the session with the profile's settings
        dbt("run-operation", "warehouse_databases")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        if args.cluster:
            cluster.wait_for_executors(spark, args.executors)
        # warm-up at full size, not reported: the JVM compiles the scan, write and metastore
        # paths of both jobs, and dbt parses the project, before anything is timed
        point(spark, 200_000, 8, 2)
        point(spark, args.rows, args.partitions, args.touched, floor_first=False)
        runs = []
        for repetition in range(max(1, args.repeat)):
            # alternate which job goes first, so that neither always gets the warmer caches
            runs.append(point(spark, args.rows, args.partitions, args.touched, repetition % 2 == 0))
            print(f"main point, repetition {repetition + 1}:")
            show(runs[-1])
        results = [median_of(runs)]
        print(f"\nmain point, medians of {len(runs)} repetition(s):")
        show(results[0])
        if args.sweep_rows:
            print("\nsweep over k (P fixed), then over P (k fixed):")
            sweep_k = []
            for k in (1, 4, 16):
                sweep_k.append(point(spark, args.sweep_rows, 32, k))
                show(sweep_k[-1])
            sweep_p = []
            for p in (8, 32, 128):
                sweep_p.append(point(spark, args.sweep_rows, p, 4))
                show(sweep_p[-1])
            plot(sweep_k, sweep_p, RESULTS / "purge.png")
            results += sweep_k + sweep_p
            print(f"\ncurve: {RESULTS / 'purge.png'}")
        if args.cluster:
            results[0]["retention_metastore_calls"] = retention_calls(spark)
            results[0]["executors"] = args.executors
        results[0]["vars"] = EXTRA_VARS
        results[0]["files_per_partition"] = FILES_PER_PARTITION
        results[0]["fs"] = args.fs
        main_point = results[0]
        figures = {
            "node_ratio": main_point["node_ratio"],
            "command_ratio": main_point["ratio"],
            "floor_s": main_point["floor_s"],
            **record.store_figures(main_point.get("purge_store"), main_point.get("floor_store")),
        }
        if METASTORE_CALLS:
            figures["metastore_calls"] = int(statistics.median(r["metastore_calls"] for r in runs))
        record.write(
            figures,
            repetitions=len(runs),
            details=results,
            environment=record.cluster_environment(args.cluster, args.fs),
        )
    finally:
        if args.cluster:
            cluster.drop_databases("bench_purge", "bench_floor", "bench_ids", keep_warehouse=args.keep_work)
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
