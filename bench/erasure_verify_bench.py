"""Benchmark: the erasure verifier against a plain PySpark floor over the same files.

For each size (default 5M and 50M rows): a Hive parquet table of N rows over P partitions
(bench/workload.py), about 1% of the ids listed, all in k partitions, purged once by
`dbt run --select purge+` (so that k backups hold the purged rows, as they do until retention).
Then, in the same process and Spark session, medians of --repeat after a warm-up, the two jobs
alternating which runs first:

- verify: `dbt run-operation verify_erasure` (the whole command), and the verifier's own time as
  it logs it (what it decides to read from the metastore and the filesystem, the listing, the
  footers, one Spark join, the four result tables);
- the floor: plain PySpark reading every data file under the table's directory (the live
  partitions and the pre-purge copies, exactly the files the verifier reads), a broadcast
  semi-join with the ids, rows counted per file.

The two must count the same rows.  The verifier reads every partition of every onboarded table
and every copy, whatever the purge did: its cost grows with the data under onboarded tables and
their copies, as the floor's does; the ratio says what its bookkeeping costs on top.

With --cluster (bench/cluster.py) both run as the `cluster` target on the cluster of `make
cluster-up`: the verifier's Spark join and the floor's scan run on its executors, so the memory
figures are this process's, the driver's, only.

    .venv/bin/python bench/erasure_verify_bench.py                         # 5M and 50M rows
    .venv/bin/python bench/erasure_verify_bench.py --rows 5000000 --repeat 5
    .venv/bin/python bench/erasure_verify_bench.py --cluster --executors 2 --rows 5000000
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
from measure import measure  # noqa: E402
from workload import (  # noqa: E402
    add_fs_argument,
    counters_between,
    describe_counters,
    events_table,
    listed_ids,
    run_dbt,
    store_counters,
)

DATABASE = "bench_verify"
VARIABLES = {
    "purge_whitelist": f"{DATABASE}.events",
    "compliance_id_table": "bench_ids.ids",
    "compliance_id_column": "guestid",
    "purge_depends_on": [],
    "erasure_verification_scope": DATABASE,
    "retention_scope": DATABASE,
    "audit_enabled": False,
}


def schema() -> str:
    """Where dbt writes the records and the verifier's results (the target's schema)."""
    return os.environ.get("DBT_SCHEMA", "lakehouse")


def dbt(*args: str) -> Any:
    return run_dbt(Path(os.environ["VERIFY_BENCH_DIR"]), *args, "--vars", json.dumps(VARIABLES))


def purge(spark: Any) -> str:
    dbt("run", "--select", "purge+")
    row = spark.sql(f"select distinct request_id from {schema()}.erasure_request_log").collect()
    return str(row[0][0])


def verified_seconds() -> tuple[float, dict[str, float]]:
    """The verifier's own time and its steps' (seconds), from the last lines it logged."""
    text = (Path(os.environ["VERIFY_BENCH_DIR"]) / "logs" / "dbt.log").read_text()
    steps = re.findall(r"verify_erasure: steps \(seconds\) (\{.*\})", text)
    own = float(re.findall(r"verify_erasure: verification \S+ in ([0-9.]+) s", text)[-1])
    return own, (json.loads(steps[-1]) if steps else {})


def run_verify(request_id: str) -> None:
    dbt("run-operation", "verify_erasure", "--args", json.dumps({"request_id": request_id}))


def table_directory(spark: Any) -> str:
    from python_hooks.catalog import tables

    return str(tables.describe_table(spark, DATABASE, "events")["location"])


def run_floor(spark: Any, directory: str) -> int:
    from pyspark.sql import functions as F

    schema = spark.table(f"{DATABASE}.events").drop("ds").schema
    frame = spark.read.schema(schema).option("recursiveFileLookup", "true").parquet(directory)
    ids = spark.table("bench_ids.ids").where("guestid is not null").distinct()
    counted = (
        frame.select(F.input_file_name().alias("f"), frame.metadata.guestid.alias("g"))
        .join(F.broadcast(ids), F.col("g") == ids.guestid, "left_semi")
        .groupBy("f")
        .count()
        .collect()
    )
    return sum(r[1] for r in counted)


def latest(spark: Any, request_id: str) -> dict[str, Any]:
    """What the latest verification read and found."""
    spark.catalog.clearCache()
    row = spark.sql(f"""
        select v.live_rows + v.copy_rows as rows, r.files_total, r.files_read, r.bytes_total, r.partitions_read,
               r.locations_total
        from {schema()}.erasure_verification as v
        inner join {schema()}.erasure_verification_runs as r on v.verification_id = r.verification_id
        where v.request_id = '{request_id}' order by v.started_at desc limit 1""").collect()[0]
    return row.asDict()


def point(spark: Any, request_id: str, directory: str, floor_first: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for job in ["floor", "verify"] if floor_first else ["verify", "floor"]:
        before = store_counters(spark)
        if job == "floor":
            result["floor_s"], result["floor_rss"], result["floor_rows"] = measure(
                lambda: run_floor(spark, directory)
            )
        else:
            result["verify_s"], result["verify_rss"], _ = measure(lambda: run_verify(request_id))
            result["verify_own_s"], result["verify_steps"] = verified_seconds()
        result[f"{job}_store"] = counters_between(before, store_counters(spark))
        if job == "verify":
            result.update(latest(spark, request_id))
    if result["floor_rows"] != result["rows"]:
        raise SystemExit(
            f"the verifier and the floor disagree: {result['rows']} vs {result['floor_rows']} rows"
        )
    result["ratio"] = result["verify_s"] / result["floor_s"]
    result["own_ratio"] = result["verify_own_s"] / result["floor_s"]
    return result


def series(spark: Any, rows: int, partitions: int, touched: int, repeat: int) -> dict[str, Any]:
    started = time.perf_counter()
    events_table(spark, DATABASE, rows, partitions)
    ids = listed_ids(spark, rows, partitions, touched)
    request_id = purge(spark)
    directory = table_directory(spark)
    print(
        f"{rows:,} rows, P={partitions}, k={touched}: {ids:,} ids purged by {request_id} "
        f"({time.perf_counter() - started:.1f} s to build and purge)",
        flush=True,
    )
    point(spark, request_id, directory, True)  # warm-up, not reported
    runs = [point(spark, request_id, directory, i % 2 == 0) for i in range(max(1, repeat))]
    for i, run in enumerate(runs):
        print(
            f"  repetition {i + 1}: verify_erasure {run['verify_s']:.2f} s (its own work {run['verify_own_s']:.2f} s), "
            f"floor {run['floor_s']:.2f} s",
            flush=True,
        )
    keys = ("verify_s", "verify_own_s", "floor_s", "ratio", "own_ratio")
    found = {
        **{k: statistics.median(r[k] for r in runs) for k in keys},
        "peak_rss_gib": max(r["verify_rss"] for r in runs) / 2**30,
        "floor_peak_rss_gib": max(r["floor_rss"] for r in runs) / 2**30,
        "rows": rows,
        "ids": ids,
        "rows_holding_ids": runs[0]["rows"],
        "files": runs[0]["files_total"],
        "files_read": runs[0]["files_read"],
        "bytes": runs[0]["bytes_total"],
        "partitions": runs[0]["partitions_read"],
        "locations": runs[0]["locations_total"],
        "repetitions": len(runs),
    }
    for job in ("verify_store", "floor_store"):
        if runs[0][job]:
            found[job] = {k: int(statistics.median(r[job][k] for r in runs)) for k in runs[0][job]}
    print(
        f"{rows:,} rows, medians of {len(runs)}: verify_erasure {found['verify_s']:.2f} s "
        f"(own work {found['verify_own_s']:.2f} s), floor {found['floor_s']:.2f} s: ratio {found['ratio']:.2f} "
        f"(own work {found['own_ratio']:.2f}); {found['files']} files, {found['bytes'] / 2**20:.0f} MiB, "
        f"{found['locations']} locations; rows holding ids {found['rows_holding_ids']:,}",
        flush=True,
    )
    steps = {
        s: statistics.median(r["verify_steps"].get(s, 0.0) for r in runs) for s in runs[0]["verify_steps"]
    }
    found["verify_steps"] = steps
    print("  its steps (medians): " + ", ".join(f"{s} {v:.2f} s" for s, v in steps.items()), flush=True)
    if "verify_store" in found:
        print(f"  S3, verify_erasure: {describe_counters(found['verify_store'])}", flush=True)
        print(f"  S3, the floor: {describe_counters(found['floor_store'])}", flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000_000, 50_000_000])
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--touched", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep-work", action="store_true")
    cluster.add_arguments(parser)
    add_fs_argument(parser)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="verify-bench-"))
    os.environ["VERIFY_BENCH_DIR"] = str(work)
    cluster.choose_warehouse(args, "verify", work)
    try:
        run_dbt(work, "seed")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        if args.cluster:
            cluster.wait_for_executors(spark, args.executors)
        points = [series(spark, rows, args.partitions, args.touched, args.repeat) for rows in args.rows]
        if len(points) > 1:
            first, last = points[0], points[-1]
            print(
                f"growth {last['rows'] / first['rows']:.0f}x the rows: verify {last['verify_s'] / first['verify_s']:.2f}x, "
                f"its own work {last['verify_own_s'] / first['verify_own_s']:.2f}x, floor {last['floor_s'] / first['floor_s']:.2f}x"
            )
        largest = points[-1]  # the record's headline: the largest table of the run
        figures = {
            "ratio": round(largest["own_ratio"], 2),
            "whole_command_ratio": round(largest["ratio"], 2),
            "floor_s": round(largest["floor_s"], 2),
            "rows": largest["rows"],
            **record.store_figures(largest.get("verify_store"), largest.get("floor_store")),
        }
        record.write(
            figures,
            repetitions=largest["repetitions"],
            details={"points": points, "fs": args.fs, "executors": args.executors if args.cluster else None},
            environment=record.cluster_environment(args.cluster, args.fs),
        )
    finally:
        if args.cluster:
            cluster.drop_databases(DATABASE, "bench_ids", keep_warehouse=args.keep_work)
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
