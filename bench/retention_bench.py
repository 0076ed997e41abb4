"""Retention over many partitions: a pass with nothing to delete, against one listing of them.

One embedded warehouse, one process: `--tables` partitioned tables of `--partitions`
partitions each (registered in one `alter table ... add partition` per table, empty
directories), in one database.  Two of them hold a few rows with listed ids and are purged, so
that the pass has side tables (backups) and stale-location records to consider; their policy
keeps them (7 days), so the pass deletes nothing.  Timed, medians of `--repeat`:

- the retention node (`dbt run --select retention`, retention_scope the bench database, audit
  hooks off), from dbt's results, and the whole command;
- the floor: one listing of every partition of every table through the catalog
  (`listPartitionsByFilter` without predicates, the metastore's fastest listing).

Target (issue 15): the pass at most 1x the listing, that is, its cost follows the side tables
and what they reference, not every partition.  Writes its record in bench/results/ (bench/record.py).

    .venv/bin/python bench/retention_bench.py [--tables 20] [--partitions 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import record  # noqa: E402
from measure import median_of, ratios  # noqa: E402
from workload import (  # noqa: E402
    DESCRIPTOR,
    add_fs_argument,
    counters_between,
    describe_counters,
    local_warehouse,
    run_dbt,
    start_session,
    store_counters,
)

DATABASE = "bench_ret"


def make_tables(spark: Any, tables: int, partitions: int) -> None:
    started = time.perf_counter()
    spark.sql(f"drop database if exists {DATABASE} cascade")
    spark.sql(f"create database {DATABASE}")
    for n in range(tables):
        name = f"{DATABASE}.t{n:03d}"
        spark.sql(f"""
            create table {name} (metadata struct<guestid: bigint>, payload string)
            partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')""")
        specs = " ".join(f"partition (ds = 'd{p:05d}')" for p in range(partitions))
        spark.sql(f"alter table {name} add {specs}")
        if (n + 1) % 10 == 0:
            print(f"  {n + 1} tables, {(n + 1) * partitions:,} partitions", flush=True)
    for n in (0, 1):
        spark.sql(
            f"insert into {DATABASE}.t{n:03d} partition (ds = 'd00000') "
            "values (named_struct('guestid', 7L), 'pii'), (named_struct('guestid', 8L), 'keep')"
        )
    spark.sql("create database if not exists bench_ids")
    spark.sql("drop table if exists bench_ids.ids")
    spark.sql("create table bench_ids.ids (guestid bigint) using parquet")
    spark.sql("insert into bench_ids.ids values (7)")
    print(
        f"created {tables} tables, {tables * partitions:,} partitions in {time.perf_counter() - started:.0f}s"
    )


def listing(spark: Any) -> tuple[float, int]:
    """Every partition of every table of the database through the catalog: (seconds, partitions)."""
    from python_hooks.catalog import metastore

    started = time.perf_counter()
    found = sum(
        len(metastore.list_partitions(spark, DATABASE, t)) for t in metastore.table_names(spark, DATABASE)
    )
    return time.perf_counter() - started, found


def retention(work: Path) -> dict[str, float]:
    variables = {"retention_scope": DATABASE, "audit_enabled": False}
    started = time.perf_counter()
    result = run_dbt(work, "run", "--select", "retention", "--vars", json.dumps(variables))
    wall = time.perf_counter() - started
    return {"command_s": wall, "retention_node_s": sum(r.execution_time for r in result.result.results)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    add_fs_argument(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="retention-bench-"))
    local_warehouse(work, args.fs)
    try:
        spark = start_session(work)
        make_tables(spark, args.tables, args.partitions)
        purge_vars = {
            "purge_whitelist": f"{DATABASE}.t000,{DATABASE}.t001",
            "compliance_id_table": "bench_ids.ids",
            "compliance_id_column": "guestid",
            "purge_depends_on": [],
            "audit_enabled": False,
        }
        run_dbt(work, "run", "--select", "purge", "purge_log", "--vars", json.dumps(purge_vars))
        side = [
            r.tableName
            for r in spark.sql(f"show tables in {DATABASE}").collect()
            if "_backup_" in r.tableName
        ]
        print(f"purged 2 tables: {len(side)} backup table(s) for retention to consider")
        retention(work)  # warm-up, not reported
        listing(spark)
        runs = []
        for repetition in range(max(1, args.repeat)):
            floor_s, found = listing(spark)
            before = store_counters(spark)
            node = retention(work)
            store = counters_between(before, store_counters(spark))
            runs.append({**node, "listing_s": floor_s, **{f"store_{k}": v for k, v in store.items()}})
            if store:
                print(f"    S3, the retention command: {describe_counters(store)}", flush=True)
            print(
                f"repetition {repetition + 1}: retention node {node['retention_node_s']:.1f}s, command "
                f"{node['command_s']:.1f}s; listing of {found:,} partitions {floor_s:.1f}s",
                flush=True,
            )
        kept = [
            r.tableName
            for r in spark.sql(f"show tables in {DATABASE}").collect()
            if "_backup_" in r.tableName
        ]
        if sorted(kept) != sorted(side):
            raise SystemExit(f"the passes were to delete nothing, but the backups went from {side} to {kept}")
        ratios(runs, "ratio_to_listing", lambda r: r["retention_node_s"], "listing_s")
        median = {k: median_of(runs, k) for k in runs[0]}
        median.update(
            tables=args.tables,
            partitions=args.tables * args.partitions,
            side_tables=len(side),
            repetitions=len(runs),
        )
        median["target_met"] = median["ratio_to_listing"] <= 1.0
        print(
            f"medians of {len(runs)}: retention node {median['retention_node_s']:.1f}s = "
            f"{median['ratio_to_listing']:.2f}x one listing of {median['partitions']:,} partitions "
            f"({median['listing_s']:.1f}s; target 1.0: {'met' if median['target_met'] else 'MISSED'}); "
            f"command {median['command_s']:.1f}s"
        )
        median.update(fs=args.fs)
        figures = {"ratio": median["ratio_to_listing"], "floor_s": median["listing_s"]}
        if "store_requests" in median:
            figures["requests"] = int(median["store_requests"])
        record.write(figures, repetitions=len(runs), details=median)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
