"""What the table formats' purge benchmarks share (delta_purge_bench.py, iceberg_purge_bench.py):
the purge node run by dbt on one copy, the floor written by hand on the other, the two timed in
turn, the arguments, the repetitions and their medians, and the record."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import record
from measure import measure as measure_call
from workload import REPO, add_fs_argument, local_warehouse, run_dbt

NODE_SECONDS: list[float] = []
MEDIANS = ("purge_s", "purge_node_s", "floor_s", "ratio", "node_ratio")


def dbt(*args: str) -> Any:
    return run_dbt(Path(os.environ["PURGE_BENCH_DIR"]), *args)


def run_purge(table: str) -> None:
    """Only the purge node (not purge_log / purge_verification) on `table`, without the audit
    hooks; its seconds in NODE_SECONDS."""
    variables = {
        "purge_whitelist": table,
        "compliance_id_table": "bench_ids.ids",
        "compliance_id_column": "guestid",
        "purge_depends_on": [],
        "audit_enabled": False,
    }
    result = dbt("run", "--select", "path:models/purge/purge.sql", "--vars", json.dumps(variables))
    NODE_SECONDS.append(sum(r.execution_time for r in result.result.results))


def timed(jobs: dict[str, Callable[[], None]], floor_first: bool) -> dict[str, float]:
    """The seconds of the `purge` and `floor` jobs, run in the order given."""
    seconds = {}
    for job in ("floor", "purge") if floor_first else ("purge", "floor"):
        seconds[job], _, _ = measure_call(jobs[job])
    return seconds


def figures(
    shape: tuple[int, int, int], listed: int, purged: int, seconds: dict[str, float]
) -> dict[str, Any]:
    """One repetition's figures: rows, P, k, ids, purged, the seconds and the ratios."""
    rows, partitions, touched = shape
    return {
        "rows": rows,
        "P": partitions,
        "k": touched,
        "ids": listed,
        "purged": purged,
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


def arguments(doc: str, files_help: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=24)
    parser.add_argument("--touched", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (medians are reported)")
    parser.add_argument(
        "--clustered", action="store_true", help="ids ordered in the data, listed as one block"
    )
    parser.add_argument("--files-per-partition", type=int, default=0, help=files_help)
    parser.add_argument(
        "--keep-work", action="store_true", help="keep the temporary warehouse and dbt's logs"
    )
    add_fs_argument(parser)
    return parser.parse_args()


def run(
    args: argparse.Namespace,
    prefix: str,
    point: Callable[..., dict[str, Any]],
    check: Callable[[Any], None] = lambda spark: None,
    more: Callable[[dict[str, Any], list[dict[str, Any]]], None] = lambda median, runs: None,
) -> None:
    """A warm-up at full size (not reported: the JVM compiles both jobs' paths, dbt parses), then
    --repeat repetitions of `point`, alternating which job runs first; their medians printed and
    recorded.  `check` refuses a session without the format; `more` adds to the medians."""
    # the formats in the session, as the Makefile sets them (docs/formats.md)
    os.environ.setdefault("LAKEHOUSE_DELTA_JARS", str(REPO / ".jars" / "formats"))
    work = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["PURGE_BENCH_DIR"] = str(work)
    local_warehouse(work, args.fs)
    shape = (args.partitions, args.touched, args.clustered, args.files_per_partition)
    try:
        dbt("run-operation", "warehouse_databases")  # starts the session with the profile's settings
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        check(spark)
        point(spark, args.rows, *shape, floor_first=False)
        runs = []
        for repetition in range(max(1, args.repeat)):
            runs.append(point(spark, args.rows, *shape, floor_first=repetition % 2 == 0))
            print(f"repetition {repetition + 1}:")
            show(runs[-1])
        median = dict(runs[0])
        for key in MEDIANS:
            median[key] = round(statistics.median(r[key] for r in runs), 2)
        more(median, runs)
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
