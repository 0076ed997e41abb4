"""Benchmark: verification of bytes (`dbt run-operation verify_erasure`) against a plain PySpark floor.

Generates a Hive parquet table of N rows over P partitions, lists about 1% of the ids, all in k
partitions, purges them once (`purge` and `purge_log` through dbtRunner), and then, in the same
process and Spark session, times:

- verify: `dbt run-operation verify_erasure --args '{request_id: <the purge run>}'` (the whole
  command, and the verification's own Python time as it logs it);
- the floor: plain PySpark reading the same directories (the k live partitions and their k
  pre-purge copies, which the backup references), a broadcast semi-join with the ids, rows counted
  per file; no listing of side tables, no footers, no result table.

Medians of --repeat (default 3) after a warm-up; the two jobs alternate which runs first.  Then the
warehouse grows by P more partitions of N more rows that the request never touched, and the same
request is timed again: the verification's cost follows the files under the purged partitions,
not the warehouse, so the two times should match.

    .venv/bin/python bench/erasure_verify_bench.py                      # 5M rows, P=24, k=4
    .venv/bin/python bench/erasure_verify_bench.py --rows 1000000 --repeat 1
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

from measure import measure  # noqa: E402
from workload import events_table, insert_events, listed_ids, local_warehouse, run_dbt  # noqa: E402

RESULTS = REPO / "bench" / "results"
DATABASE = "bench_verify"
VARIABLES = {
    "purge_whitelist": f"{DATABASE}.events",
    "compliance_id_table": "bench_ids.ids",
    "compliance_id_column": "guestid",
    "purge_depends_on": [],
    "audit_enabled": False,
}


def dbt(*args: str) -> Any:
    return run_dbt(Path(os.environ["VERIFY_BENCH_DIR"]), *args)


def make_world(spark: Any, rows: int, partitions: int, touched: int) -> int:
    events_table(spark, DATABASE, rows, partitions)
    return listed_ids(spark, rows, partitions, touched)


def purge(spark: Any) -> str:
    dbt("run", "--select", "purge", "purge_log", "--vars", json.dumps(VARIABLES))
    schema = "lakehouse"
    row = spark.sql(
        f"select invocation_id from {schema}.purge_log where state = 'COMMITTED' limit 1"
    ).collect()
    return str(row[0][0])


def verified_seconds() -> float:
    """The verification's own time, from the last line it logged."""
    text = (Path(os.environ["VERIFY_BENCH_DIR"]) / "logs" / "dbt.log").read_text()
    found = re.findall(r"request\(s\) verified in ([0-9.]+) s", text)
    return float(found[-1])


def run_verify(request_id: str) -> None:
    dbt(
        "run-operation",
        "verify_erasure",
        "--args",
        json.dumps({"request_id": request_id}),
        "--vars",
        json.dumps(VARIABLES),
    )


def floor_directories(spark: Any) -> list[str]:
    rows = spark.sql(
        "select old_location, new_location from lakehouse.purge_log where state = 'COMMITTED'"
    ).collect()
    return [loc for row in rows for loc in (row.old_location, row.new_location)]


def run_floor(spark: Any, directories: list[str]) -> int:
    from pyspark.sql import functions as F

    schema = spark.table(f"{DATABASE}.events").drop("ds").schema
    frame = spark.read.schema(schema).option("recursiveFileLookup", "true").parquet(*directories)
    ids = spark.table("bench_ids.ids").where("guestid is not null").distinct()
    counted = (
        frame.select(F.input_file_name().alias("f"), frame.metadata.guestid.alias("g"))
        .join(F.broadcast(ids), F.col("g") == ids.guestid, "left_semi")
        .groupBy("f")
        .count()
        .collect()
    )
    return sum(r[1] for r in counted)


def held_rows(spark: Any, request_id: str) -> tuple[int, int, int]:
    """(rows holding ids, files listed, files read) of the latest verification."""
    spark.catalog.refreshTable("lakehouse.erasure_verification")
    row = spark.sql(
        "select sum(rows_holding_ids), sum(files_total), sum(files_read) from lakehouse.erasure_verification"
        f" where request_id = '{request_id}' and invocation_id = (select max_by(invocation_id, verified_at)"
        " from lakehouse.erasure_verification)"
    ).collect()[0]
    return int(row[0]), int(row[1]), int(row[2])


def point(spark: Any, request_id: str, directories: list[str], floor_first: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    order = ["floor", "verify"] if floor_first else ["verify", "floor"]
    for job in order:
        if job == "floor":
            result["floor_s"], _, result["floor_rows"] = measure(lambda: run_floor(spark, directories))
        else:
            result["verify_s"], result["peak_rss"], _ = measure(lambda: run_verify(request_id))
            result["verify_core_s"] = verified_seconds()
            result["verify_rows"], result["files"], result["files_read"] = held_rows(spark, request_id)
    if result["floor_rows"] != result["verify_rows"]:
        raise SystemExit(f"verify and floor disagree: {result['verify_rows']} vs {result['floor_rows']} rows")
    result["ratio"] = result["verify_s"] / result["floor_s"]
    result["core_ratio"] = result["verify_core_s"] / result["floor_s"]
    return result


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("verify_s", "verify_core_s", "floor_s", "ratio", "core_ratio")
    return {
        **{k: statistics.median(r[k] for r in runs) for k in keys},
        "rows": runs[0]["verify_rows"],
        "files": runs[0]["files"],
        "files_read": runs[0]["files_read"],
        "repetitions": len(runs),
    }


def show(label: str, result: dict[str, Any]) -> None:
    print(
        f"{label}: verify_erasure {result['verify_s']:.2f} s (its own work {result['verify_core_s']:.2f} s), "
        f"floor {result['floor_s']:.2f} s, ratio {result['ratio']:.2f} (own work {result['core_ratio']:.2f}); "
        f"rows holding ids {result['rows']}; files listed {result['files']}, read {result['files_read']}",
        flush=True,
    )


def series(spark: Any, request_id: str, directories: list[str], repeat: int) -> dict[str, Any]:
    runs = [point(spark, request_id, directories, i % 2 == 0) for i in range(max(1, repeat))]
    for i, run in enumerate(runs):
        print(
            f"  repetition {i + 1}: verify {run['verify_s']:.2f} s (own {run['verify_core_s']:.2f} s), floor {run['floor_s']:.2f} s"
        )
    return medians(runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--touched", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep-work", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="verify-bench-"))
    os.environ["VERIFY_BENCH_DIR"] = str(work)
    local_warehouse(work)
    try:
        dbt("run-operation", "warehouse_databases")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        started = time.perf_counter()
        ids = make_world(spark, args.rows, args.partitions, args.touched)
        request_id = purge(spark)
        directories = floor_directories(spark)
        print(
            f"{args.rows:,} rows, P={args.partitions}, k={args.touched}: {ids:,} ids purged by run {request_id}"
            f" ({time.perf_counter() - started:.1f} s to build and purge); {len(directories)} directories verified",
            flush=True,
        )
        point(spark, request_id, directories, True)  # warm-up, not reported
        base = series(spark, request_id, directories, args.repeat)
        show(f"medians of {args.repeat}", base)
        insert_events(spark, DATABASE, args.rows, args.partitions, args.partitions, args.rows)
        partitions = spark.sql(f"show partitions {DATABASE}.events").count()
        print(
            f"the table now has {partitions} partitions, {2 * args.rows:,} rows; the request is the same",
            flush=True,
        )
        point(spark, request_id, directories, True)  # warm-up after the growth
        grown = series(spark, request_id, directories, args.repeat)
        show(f"2x the partitions, medians of {args.repeat}", grown)
        print(
            f"growth: verify {grown['verify_s'] / base['verify_s']:.2f}x, floor {grown['floor_s'] / base['floor_s']:.2f}x"
        )
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "erasure_verify.json").write_text(
            json.dumps({"base": base, "grown": grown}, indent=2) + "\n"
        )
    finally:
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
