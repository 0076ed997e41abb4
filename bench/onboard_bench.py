"""Onboarding at scale: `dbt run-operation onboard_tables` over a list of 100 and 200 tables.

In one process (one Spark start, paid once by the first command and reported apart): N
partitioned parquet tables with a nested identifier, then, for each N, the command three times
on a fresh database (every table added), on the same list again (nothing to change: the
idempotent re-run) and as a dry run.  The floor is what a person would otherwise run: one
`alter table ... set tblproperties` per table, through spark.sql in the same session.  Target:
at most 2 s per 100 tables for the command (issue 15).

    .venv/bin/python bench/onboard_bench.py [--tables 100 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import record  # noqa: E402
from measure import median_of, ratios  # noqa: E402
from workload import DESCRIPTOR, add_fs_argument, local_warehouse, run_dbt, start_session  # noqa: E402


def make_tables(spark, database: str, count: int) -> None:
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    for n in range(count):
        spark.sql(
            f"create table {database}.t{n:04d} (metadata struct<guestid: bigint>, payload string) "
            "partitioned by (ds string) stored as parquet"
        )


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def point(spark, work: Path, count: int) -> dict:
    database = f"bench_onb_{count}"
    make_tables(spark, database, count)
    listing = work / f"onboarding_{count}.csv"
    listing.write_text(
        "table,identifier\n" + "".join(f"{database}.t{n:04d},metadata.guestid\n" for n in range(count))
    )
    args = json.dumps({"file": str(listing)})
    dry = timed(
        lambda: run_dbt(
            work,
            "run-operation",
            "onboard_tables",
            "--args",
            json.dumps({"file": str(listing), "dry_run": True}),
        )
    )
    first = timed(lambda: run_dbt(work, "run-operation", "onboard_tables", "--args", args))
    again = timed(lambda: run_dbt(work, "run-operation", "onboard_tables", "--args", args))
    written = sum(
        1
        for n in range(count)
        if any(
            r.key == "dataset.descriptor"
            for r in spark.sql(f"show tblproperties {database}.t{n:04d}").collect()
        )
    )
    assert written == count, f"{written} of {count} tables carry a descriptor"
    floor_db = f"bench_onb_floor_{count}"
    make_tables(spark, floor_db, count)
    floor = timed(
        lambda: [
            spark.sql(
                f"alter table {floor_db}.t{n:04d} set tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')"
            )
            for n in range(count)
        ]
    )
    for name in (database, floor_db):
        spark.sql(f"drop database {name} cascade")
    return {"tables": count, "onboard_s": first, "rerun_s": again, "dry_run_s": dry, "floor_alter_s": floor}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--repeat", type=int, default=3)
    add_fs_argument(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="onboard-bench-"))
    local_warehouse(work, args.fs)
    try:
        started = time.perf_counter()
        spark = start_session(work)
        start = time.perf_counter() - started
        print(f"first dbt command (Spark start, parse): {start:.1f}s, paid once")
        point(spark, work, 20)  # warm-up, not reported
        results = []
        for count in args.tables:
            runs = [point(spark, work, count) for _ in range(max(1, args.repeat))]
            ratios(runs, "floor_ratio", lambda r: r["onboard_s"], "floor_alter_s")
            median = {key: median_of(runs, key) for key in runs[0] if key != "tables"}
            median["tables"] = count
            median["onboard_s_per_100"] = round(median["onboard_s"] * 100 / count, 2)
            median["target_met"] = median["onboard_s_per_100"] <= 2.0
            median["repetitions"] = len(runs)
            results.append(median)
            print(
                f"{count} tables, medians of {len(runs)}: onboard {median['onboard_s']:.2f}s "
                f"({median['onboard_s_per_100']:.2f}s per 100 tables, target 2.0: "
                f"{'met' if median['target_met'] else 'MISSED'}), re-run {median['rerun_s']:.2f}s, "
                f"dry run {median['dry_run_s']:.2f}s; floor (alter table per table) {median['floor_alter_s']:.2f}s, "
                f"ratio {median['floor_ratio']:.2f}"
            )
        largest = results[-1]
        figures = {
            "seconds_per_100_tables": largest["onboard_s_per_100"],
            "ratio": largest["floor_ratio"],
            "floor_s": largest["floor_alter_s"],
            "tables": largest["tables"],
        }
        record.write(figures, repetitions=largest["repetitions"], details=results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
