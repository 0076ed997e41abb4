"""The purge over many tables: how its time grows with the number of onboarded tables.

One embedded warehouse, one process: 200 onboarded tables of 10 partitions (`--rows` rows
each), in three databases of 50, 50 and 100 tables (one per step of `--sizes`), so that
purge_whitelist selects 50, 100 or 200 of them.  The listed ids are in 5 tables (2 partitions each) of the first database.  For
each size, medians of `--repeat`:

- the purge node and the purge_verification node (`dbt run --select purge purge_verification`,
  node times from dbt's results, no audit hooks), and the whole command;
- the floor: a plain PySpark job doing the same work over the same tables: one semi-join per
  table to find the partitions holding an id, then for those the anti-join rewrite into a new
  directory and `alter table ... partition ... set location` (swapped back, untimed, after);
- the union floor: the partitions holding an id found by one `union all` query over all
  tables (the better plan for the scan alone), for comparison.

After each purge the 5 tables get their ids back (a small insert) for the next run.  Draws
bench/results/purge_many.png and writes its record in bench/results/ (bench/record.py).  Target:
the purge node at most 0.45x the floor at 200 tables (1.5x in issue 15).

The listed ids lie above every table's own ids, so the footers of the 195 clean tables rule them
out and the purge does not scan those tables (python_hooks/purge/skipping.py); `--ids-in-range`
puts them inside every table's range (the tables hold even ids, the listed ones are odd), where
no footer can rule them out and every table is scanned.

With --cluster (bench/cluster.py) the same comparison runs as the `cluster` target on the cluster
of `make cluster-up`, and it also counts the metastore calls of each purge command.

    .venv/bin/python bench/purge_many_bench.py [--sizes 50 100 200] [--rows 2000] [--repeat 3] [--ids-in-range]
    .venv/bin/python bench/purge_many_bench.py --cluster --executors 2 --sizes 200 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cluster  # noqa: E402
import record  # noqa: E402
from measure import median_of, ratios  # noqa: E402
from workload import (  # noqa: E402
    DESCRIPTOR,
    REPO,
    add_fs_argument,
    copy_free_commit,
    counters_between,
    describe_counters,
    result_name,
    run_dbt,
    start_session,
    store_counters,
    warehouse_uri,
)

RESULTS = REPO / "bench" / "results"
# one database per step of --sizes (50, 50 and 100 tables for 50 100 200), so that a whitelist
# of databases selects each size; the ids are in 5 tables of the first
GROUPS: list[tuple[str, int]] = []
DIRTY: list[tuple[str, str]] = []
PARTITIONS = 10
# the listed ids: above every table's own ids (0 .. rows-1), so each clean table's footers rule
# them out; with --ids-in-range the tables hold even ids and the listed ones are odd ids inside
# that range: no footer rules them out, and every table is scanned
IDS = list(range(1_000_000, 1_000_020))
IN_RANGE = {"on": False}
# the purge node against the floor at 200 tables (issue 30; 1.5 in issue 15)
TARGET = 0.45
# --cluster: count each purge command's calls in the metastore service's audit log
COUNT_CALLS = {"on": False}


def plan_groups(sizes: list[int]) -> None:
    previous = 0
    for step, size in enumerate(sorted(sizes)):
        GROUPS.append((f"bench_many_{step}", size - previous))
        previous = size
    first = GROUPS[0][1]
    DIRTY.extend((GROUPS[0][0], f"t{n * max(1, first // 5):03d}") for n in range(min(5, first)))


def make_tables(spark: Any, rows: int) -> None:
    """The tables, four written at once (each a small Spark job; on S3 mostly waiting on the
    store), committed without copies on S3."""
    started = time.perf_counter()
    with copy_free_commit(spark, warehouse_uri()), ThreadPoolExecutor(4) as pool:
        for database, count in GROUPS:
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
            list(pool.map(lambda n, d=database: make_table(spark, d, f"t{n:03d}", rows), range(count)))
            print(f"  {database}: {count} tables", flush=True)
    spark.sql("create database if not exists bench_ids")
    spark.sql("drop table if exists bench_ids.ids")
    spark.sql("create table bench_ids.ids (guestid bigint) using parquet")
    spark.sql(f"insert into bench_ids.ids values {', '.join(f'({i})' for i in IDS)}")
    dirty(spark)
    print(
        f"created {sum(c for _, c in GROUPS)} tables of {PARTITIONS} partitions in {time.perf_counter() - started:.0f}s"
    )


def make_table(spark: Any, database: str, table: str, rows: int) -> None:
    spark.sql(f"""
        create table {database}.{table} (metadata struct<guestid: bigint>, payload string)
        partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')""")
    spark.sql(f"""
        insert into {database}.{table} partition (ds)
        select named_struct('guestid', id * {2 if IN_RANGE["on"] else 1}), repeat('x', 40),
               format_string('d%02d', cast(id % {PARTITIONS} as int))
        from range({rows})""")


def dirty(spark: Any) -> None:
    """The listed ids back into 2 partitions of each of the 5 tables (Spark's default commit: the
    purge leaves them at locations of its own, which S3A's committers cannot write into)."""
    for database, table in DIRTY:
        for ds in ("d00", "d01"):
            values = ", ".join(f"(named_struct('guestid', {i}L), 'pii')" for i in IDS[:5])
            spark.sql(f"insert into {database}.{table} partition (ds = '{ds}') values {values}")


def tables_of(size: int) -> list[tuple[str, str]]:
    found = []
    for database, count in GROUPS:
        found += [(database, f"t{n:03d}") for n in range(count)]
    return found[:size]


def whitelist(size: int) -> str:
    chosen, total = [], 0
    for database, count in GROUPS:
        if total >= size:
            break
        chosen.append(database)
        total += count
    return ",".join(chosen)


def run_purge(work: Path, size: int, parallelism: int) -> dict[str, float]:
    variables = {
        "purge_whitelist": whitelist(size),
        "compliance_id_table": "bench_ids.ids",
        "compliance_id_column": "guestid",
        "purge_depends_on": [],
        "audit_enabled": False,
        "purge_scan_parallelism": parallelism,
    }
    calls = cluster.MetastoreCalls().start() if COUNT_CALLS["on"] else None
    started = time.perf_counter()
    result = run_dbt(
        work,
        "run",
        "--select",
        "path:models/purge/purge.sql",
        "path:models/purge/purge_verification.sql",
        "--vars",
        json.dumps(variables),
    )
    wall = time.perf_counter() - started
    nodes = {r.node.name: r.execution_time for r in result.result.results}
    found = {
        "command_s": wall,
        "purge_node_s": nodes["purge"],
        "verification_node_s": nodes["purge_verification"],
    }
    if calls is not None:
        calls.stop()
        found["metastore_calls"] = calls.total
    return found


def run_floor(spark: Any, size: int) -> dict[str, float]:
    """Semi-join scan per table, anti-join rewrite and location swap of the partitions with ids."""
    from pyspark.sql import functions as F

    ids = F.broadcast(spark.table("bench_ids.ids").where("guestid is not null").distinct())
    started = time.perf_counter()
    swapped = []
    for database, table in tables_of(size):
        frame = spark.table(f"{database}.{table}")
        hit = [
            r.ds
            for r in frame.join(ids, frame.metadata.guestid == ids.guestid, "left_semi")
            .select("ds")
            .distinct()
            .collect()
        ]
        if not hit:
            continue
        root = (
            spark.sql(f"describe formatted {database}.{table}").where("col_name = 'Location'").collect()[0][1]
        )
        target = f"{root}/floor_{int(time.time() * 1000)}"
        kept = frame.where(F.col("ds").isin(hit)).join(
            ids, frame.metadata.guestid == ids.guestid, "left_anti"
        )
        with copy_free_commit(spark, target) as magic:
            writer = kept.write.mode("overwrite").partitionBy("ds")
            if magic:  # a fresh directory; S3A's committers refuse dynamic partition overwrite
                writer = writer.option("partitionOverwriteMode", "static")
            writer.parquet(target)
        for ds in hit:
            old = spark.sql(f"describe formatted {database}.{table} partition (ds = '{ds}')")
            old = old.where("col_name = 'Location'").collect()[0][1]
            spark.sql(
                f"alter table {database}.{table} partition (ds = '{ds}') set location '{target}/ds={ds}'"
            )
            swapped.append((database, table, ds, old))
    floor = time.perf_counter() - started
    for database, table, ds, old in swapped:  # back as they were, untimed
        spark.sql(f"alter table {database}.{table} partition (ds = '{ds}') set location '{old}'")
        spark.catalog.refreshTable(f"{database}.{table}")
    return {"floor_s": floor, "floor_tables_with_ids": len({(d, t) for d, t, _, _ in swapped})}


def run_union_scan(spark: Any, size: int) -> float:
    """Only the scan, as one query over every table: which partitions hold an id."""
    parts = [
        f"select '{d}.{t}' as t, ds from {d}.{t} a left semi join bench_ids.ids b on a.metadata.guestid = b.guestid"
        for d, t in tables_of(size)
    ]
    started = time.perf_counter()
    spark.sql(f"select distinct t, ds from ({' union all '.join(parts)})").collect()
    return time.perf_counter() - started


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["tables"] for r in results]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(xs, [r["purge_node_s"] for r in results], "o-", label="purge node")
    ax.plot(xs, [r["verification_node_s"] for r in results], "^-", label="purge_verification node")
    ax.plot(xs, [r["command_s"] for r in results], "d:", label="dbt command")
    ax.plot(xs, [r["floor_s"] for r in results], "s--", label="floor (PySpark, per table)")
    ax.plot(xs, [r["union_scan_s"] for r in results], "x--", label="scan only, one union query")
    ax.set_xlabel("onboarded tables (10 partitions each, ids in 5)")
    ax.set_ylabel("seconds (medians)")
    ax.set_xticks(xs)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--rows", type=int, default=2000, help="rows per table")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--parallelism", type=int, default=4, help="purge_scan_parallelism (1: no scan read ahead)"
    )
    parser.add_argument(
        "--ids-in-range",
        action="store_true",
        help="listed ids inside every table's id range (odd ids, the tables hold even ones): no footer rules them out",
    )
    parser.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the temporary warehouse and dbt's logs (bench/purge_profile.py reads logs/dbt.log)",
    )
    cluster.add_arguments(parser)
    add_fs_argument(parser)
    args = parser.parse_args()
    if args.ids_in_range:
        IN_RANGE["on"] = True
        IDS[:] = [args.rows + 1 + 2 * n for n in range(20)]  # odd, inside [0, 2 * rows)
    plan_groups(args.sizes)
    work = Path(tempfile.mkdtemp(prefix="purge-many-bench-"))
    cluster.choose_warehouse(args, "purge_many", work)
    COUNT_CALLS["on"] = args.cluster
    try:
        spark = start_session(work)
        if args.cluster:
            cluster.wait_for_executors(spark, args.executors)
        make_tables(spark, args.rows)
        run_purge(work, min(args.sizes), args.parallelism)  # warm-up, not reported
        dirty(spark)
        results = []
        for size in sorted(args.sizes):
            runs = []
            for repetition in range(max(1, args.repeat)):
                before = store_counters(spark)
                floor = run_floor(spark, size)
                floor_store = counters_between(before, store_counters(spark))
                union = run_union_scan(spark, size)
                before = store_counters(spark)
                node = run_purge(work, size, args.parallelism)
                purge_store = counters_between(before, store_counters(spark))
                left = sum(
                    spark.sql(
                        f"select count(*) from {d}.{t} a left semi join bench_ids.ids b on a.metadata.guestid = b.guestid"
                    ).collect()[0][0]
                    for d, t in DIRTY
                )
                if left:
                    raise SystemExit(
                        f"{left} rows with a listed id are left after the purge of {size} tables"
                    )
                dirty(spark)
                runs.append({**node, **floor, "union_scan_s": union})
                print(
                    f"{size} tables, repetition {repetition + 1}: purge node {node['purge_node_s']:.1f}s, "
                    f"verification {node['verification_node_s']:.1f}s, command {node['command_s']:.1f}s; "
                    f"floor {floor['floor_s']:.1f}s, union scan {union:.1f}s"
                    + (f"; {node['metastore_calls']} metastore calls" if "metastore_calls" in node else ""),
                    flush=True,
                )
                if purge_store:
                    print(f"    S3, the purge command: {describe_counters(purge_store)}", flush=True)
                    print(f"    S3, the floor (with its untimed swap-back): {describe_counters(floor_store)}")
                    runs[-1].update(
                        {f"purge_{k}": v for k, v in purge_store.items()},
                        **{f"floor_{k}": v for k, v in floor_store.items()},
                    )
            ratios(runs, "node_ratio", lambda r: r["purge_node_s"], "floor_s")
            ratios(
                runs,
                "node_and_verification_ratio",
                lambda r: r["purge_node_s"] + r["verification_node_s"],
                "floor_s",
            )
            median = {k: median_of(runs, k) for k in runs[0]}
            median.update(
                tables=size, partitions_per_table=PARTITIONS, rows_per_table=args.rows, repetitions=len(runs)
            )
            median["node_ratio_per_repetition"] = [r["node_ratio"] for r in runs]
            median["target_met"] = median["node_ratio"] <= TARGET
            results.append(median)
            print(
                f"{size} tables, medians of {len(runs)}: purge node {median['purge_node_s']:.1f}s = "
                f"{median['node_ratio']:.2f}x the floor {median['floor_s']:.1f}s (target {TARGET}: "
                f"{'met' if median['target_met'] else 'MISSED'}); with verification "
                f"{median['node_and_verification_ratio']:.2f}x; per table {median['purge_node_s'] / size * 1000:.0f} ms;"
                f" ratios are medians of each repetition's ({', '.join(map(str, median['node_ratio_per_repetition']))})"
            )
        RESULTS.mkdir(parents=True, exist_ok=True)
        suffix = (
            ("" if args.parallelism == 4 else f"-parallelism-{args.parallelism}")
            + ("-ids-in-range" if args.ids_in_range else "")
            + (f"-cluster-{args.executors}" if args.cluster else "")
        )
        for median in results:
            median.update(fs=args.fs)
            if args.cluster:
                median["executors"] = args.executors
        largest = results[-1]  # the record's headline: the largest fleet of the run
        figures = {"ratio": largest["node_ratio"], "floor_s": largest["floor_s"], "tables": largest["tables"]}
        for name, key in (
            ("metastore_calls", "metastore_calls"),
            ("requests", "purge_requests"),
            ("floor_requests", "floor_requests"),
        ):
            if key in largest:
                figures[name] = int(largest[key])
        record.write(
            figures,
            repetitions=largest["repetitions"],
            details=results,
            environment=record.cluster_environment(args.cluster, args.fs),
        )
        if len(results) > 1:
            plot(results, RESULTS / result_name(f"purge_many{suffix}.png", args.fs))
            print(f"curve: {RESULTS / result_name(f'purge_many{suffix}.png', args.fs)}")
    finally:
        if args.cluster:
            cluster.drop_databases(
                *(database for database, _ in GROUPS), "bench_ids", keep_warehouse=args.keep_work
            )
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
