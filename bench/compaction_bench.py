"""Compaction benchmark: the dbt models against a plain PySpark floor, in one invocation.

    .venv/bin/python bench/compaction_bench.py --rows 5000000

1. builds the demo project's inputs at the requested size in a throwaway warehouse (not timed);
2. hourly dedup: `dbt run --select page_view_hourly` (key mode, completeness verification,
   watermarks, log) against a plain PySpark job that filters the same hours and keeps
   row_number() = 1 per (ds, hr, event_id) by event_ts desc, ingested_at desc, written as a
   partitioned parquet table;
3. merge: `dbt run --select member_merge_inputs member_merged` against a plain PySpark
   union-and-window job over the same snapshot and deltas.

For each: wall time of the dbt command, the model node's own time (dbt's `execution_time`,
without dbt start-up and project hooks), rows/s, and the peak RSS of this process tree (Python
plus the Spark JVM) sampled every 50 ms.  Ratios are dbt / plain.  Each job first runs untimed
(--warmup, default 1) so that both are measured with a warm JVM; the timed repetitions
(--repeat, default 3) alternate which job goes first, and medians are reported.

    .venv/bin/python bench/compaction_bench.py --cluster --executors 1 --rows 1000000 --repeat 1

With --cluster (bench/cluster.py) it runs as the `cluster` target on the cluster of
`make cluster-up`; the inputs are the demo's `kafka` and `crm` databases there (a demo built on
that cluster is replaced), the outputs go to the schema `bench_compaction`, and all are dropped
at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import cluster  # noqa: E402
import record  # noqa: E402
from measure import measure  # noqa: E402


def dbt(args: list[str], project: Path = REPO) -> Any:
    """A dbt command of the product (the repo root), or of the demo project for the inputs."""
    from dbt.cli.main import dbtRunner

    outcome = dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(REPO)])
    if not outcome.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {outcome.exception or outcome.result}")
    return outcome.result


def node_time(result: Any, name: str) -> float:
    return sum(r.execution_time for r in result.results if r.node.name == name)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000, help="staging rows (and snapshot members)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway warehouse")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each job; medians are reported")
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs of each job before the timed ones (JIT, dbt's parse)",
    )
    parser.add_argument(
        "--jobs", choices=["all", "hourly", "merge"], default="all", help="which comparisons to run"
    )
    cluster.add_arguments(parser)
    options = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="compaction-bench-"))
    if options.cluster:
        cluster.use_cluster("compaction", options.executors)
        os.environ["DBT_SCHEMA"] = "bench_compaction"
    else:
        os.environ["SPARK_WAREHOUSE_DIR"] = str(root / "warehouse")
        os.environ["SPARK_METASTORE_DIR"] = str(root / "metastore_db")
    schema = os.environ.get("DBT_SCHEMA", "lakehouse")
    common = ["--target-path", str(root / "target"), "--log-path", str(root / "logs"), "--quiet"]
    now = time.strftime("%Y-%m-%d %H:00:00", time.gmtime())
    hours = 24 + int(now[11:13]) + 2
    # the staging model lands ~1.243 records per event: 1 + 1/10 exact duplicates + 1/7 re-sent
    per_hour = max(1, int(options.rows / hours / 1.243))
    variables = f"{{compaction_now: '{now}', demo_page_view_rows_per_hour: {per_hour}, demo_member_count: {options.rows}}}"
    try:
        # the inputs come from the demo project (demo/), which installs the product as a package;
        # the timed runs are the product's own, reading them as its default sources
        # its own target directory: the demo's partial parse (where the product is a package and
        # its example sources are disabled) must not be reused by the product's runs
        demo = ["--target-path", str(root / "demo-target"), "--log-path", str(root / "logs"), "--quiet"]
        dbt(["deps", "--quiet"], project=REPO / "demo")
        dbt(
            [
                "run",
                "--select",
                "demo_page_view_hourly_staging",
                "demo_ingestion_counts",
                "demo_member_snapshot",
                "demo_member_delta_1",
                "demo_member_delta_2",
                "--vars",
                variables,
                *demo,
            ],
            project=REPO / "demo",
        )
        from pyspark.sql import SparkSession, Window
        from pyspark.sql import functions as F

        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        if options.cluster:
            cluster.wait_for_executors(spark, options.executors)
        staged = spark.table("kafka.page_view_hourly_staging")
        staged_rows = staged.count()
        members = spark.table("crm.member_snapshot").count()

        runs: dict[str, list[tuple[float, float, int]]] = {}

        def keep(job: str, wall: float, node: float, peak: int) -> None:
            runs.setdefault(job, []).append((wall, node, peak))

        window_rows = spark.sql(
            "select count(*) from kafka.page_view_hourly_staging where"
            f" to_timestamp(concat(ds, ' ', lpad(cast(hr as string), 2, '0')), 'yyyy-MM-dd HH')"
            f" between to_timestamp('{now}') - interval 3 days + interval 1 second and to_timestamp('{now}') - interval 1 hour"
        ).first()[0]

        def reset_hourly() -> None:
            # every repetition is a first run: no output, watermarks or log yet
            for table in (
                "page_view_hourly",
                "page_view_hourly__plan",
                "page_view_hourly__recompact",
                "page_view_hourly_late",
                "compaction_watermarks",
                "compaction_log",
                "bench_plain_hourly",
            ):
                spark.sql(f"drop table if exists {schema}.{table}")

        def plain_dedup() -> None:
            hour = F.to_timestamp(
                F.concat_ws(" ", "ds", F.lpad(F.col("hr").cast("string"), 2, "0")), "yyyy-MM-dd HH"
            )
            window = Window.partitionBy("ds", "hr", "event_id").orderBy(
                F.desc("event_ts"), F.desc("ingested_at")
            )
            (
                spark.table("kafka.page_view_hourly_staging")
                .where(
                    (hour <= F.expr(f"to_timestamp('{now}') - interval 1 hour"))
                    & (hour > F.expr(f"to_timestamp('{now}') - interval 3 days"))
                )
                .withColumn("_rank", F.row_number().over(window))
                .where("_rank = 1")
                .drop("_rank")
                .write.mode("overwrite")
                .format("parquet")
                .partitionBy("ds", "hr")
                .saveAsTable(f"{schema}.bench_plain_hourly")
            )

        def dbt_dedup() -> None:
            wall, peak, result = measure(
                lambda: dbt(["run", "--select", "page_view_hourly", "--vars", variables, *common])
            )
            keep("hourly dedup, dbt", wall, node_time(result, "page_view_hourly"), peak)

        def plain_dedup_timed() -> None:
            wall, peak, _ = measure(plain_dedup)
            keep("hourly dedup, plain PySpark", wall, wall, peak)

        if options.jobs in ("all", "hourly"):
            # warm-up, not reported: the JVM compiles the scan, window and write paths of both
            # jobs, and dbt parses the project, before anything is timed
            for _ in range(options.warmup):
                reset_hourly()
                dbt(["run", "--select", "page_view_hourly", "--vars", variables, *common])
                plain_dedup()
        for repetition in range(options.repeat if options.jobs in ("all", "hourly") else 0):
            reset_hourly()
            # alternate which job goes first, so that neither always gets the warmer caches
            for job in (dbt_dedup, plain_dedup_timed)[:: 1 if repetition % 2 == 0 else -1]:
                job()

        def plain_merge() -> None:
            inputs = [
                spark.table(t) for t in ("crm.member_snapshot", "crm.member_delta_1", "crm.member_delta_2")
            ]
            last = inputs[-1]
            types = dict(last.dtypes)
            union = None
            for position, df in enumerate(inputs):
                aligned = df.select(
                    *[
                        (F.col(c) if c in df.columns else F.lit(None)).cast(types[c]).alias(c)
                        for c in last.columns
                    ],
                    F.lit(position).alias("_position"),
                )
                union = aligned if union is None else union.unionByName(aligned)
            window = Window.partitionBy("member_id").orderBy(F.desc("_position"))
            (
                union.withColumn("_rank", F.row_number().over(window))
                .where("_rank = 1")
                .drop("_rank", "_position")
                .write.mode("overwrite")
                .format("parquet")
                .saveAsTable(f"{schema}.bench_plain_merged")
            )

        merge_runs = options.repeat if options.jobs in ("all", "merge") else 0
        for _ in range(options.warmup if merge_runs else 0):
            dbt(["run", "--select", "member_merge_inputs", "member_merged", "--vars", variables, *common])
            plain_merge()
        for _ in range(merge_runs):
            wall, peak, result = measure(
                lambda: dbt(
                    ["run", "--select", "member_merge_inputs", "member_merged", "--vars", variables, *common]
                )
            )
            keep("merge, dbt", wall, node_time(result, "member_merged"), peak)
            wall, peak, _ = measure(plain_merge)
            keep("merge, plain PySpark", wall, wall, peak)

        print(
            f"\ncompaction bench: {staged_rows:,} staged rows ({window_rows:,} in the window),"
            f" {members:,} members; medians of {options.repeat} repetition(s)"
        )
        print(f"{'job':32} {'wall s':>8} {'node s':>8} {'rows/s (node)':>14} {'peak RSS MiB':>13}")
        figures = {
            job: tuple(median(run[i] for run in values) for i in range(3)) for job, values in runs.items()
        }
        for job, (wall, node, peak) in figures.items():
            rows = window_rows if job.startswith("hourly") else members
            print(f"{job:32} {wall:8.1f} {node:8.1f} {rows / node:14,.0f} {peak / 2**20:13,.0f}")
        headline: dict[str, float] = {}
        for what, prefix in (("hourly dedup", "dedup"), ("merge", "merge")):
            if f"{what}, dbt" not in runs:
                continue
            pairs = list(zip(runs[f"{what}, dbt"], runs[f"{what}, plain PySpark"], strict=True))
            node_ratios = [d[1] / p[0] for d, p in pairs]
            wall_ratios = [d[0] / p[0] for d, p in pairs]
            peak_ratios = [d[2] / p[2] for d, p in pairs]
            print(
                f"ratio {what}: node {median(node_ratios):.2f}, wall {median(wall_ratios):.2f},"
                f" peak memory {median(peak_ratios):.2f} (medians of per-repetition ratios; target <= 1.3);"
                f" node ratio per repetition: {', '.join(f'{r:.2f}' for r in node_ratios)}"
            )
            headline[f"{prefix}_node_ratio"] = round(median(node_ratios), 2)
            headline[f"{prefix}_command_ratio"] = round(median(wall_ratios), 2)
            headline[f"{prefix}_floor_s"] = round(figures[f"{what}, plain PySpark"][0], 2)
        record.write(
            headline,
            repetitions=options.repeat,
            details={job: {"wall_s": w, "node_s": n, "peak_bytes": m} for job, (w, n, m) in figures.items()},
            environment=record.cluster_environment(options.cluster, "file"),
        )
    finally:
        if options.cluster and not options.keep:
            from workload import running_session

            active = running_session()
            for database in ("kafka", "crm", schema):
                if active is not None:
                    active.sql(f"drop database if exists {database} cascade")
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
