"""Audit loading speed: a 500-node project's run metadata into the audit tables.

Builds a synthetic manifest of N models (SQL, each selecting from its parent with a few
columns), one seed and N tests, and the run results of a build over them, then times
`python_hooks.audit.artifacts.write_audit` (five bulk inserts: invocations, node results, node
registry, lineage edges, column lineage parsed with sqlglot) on a local Spark session.
The floor is the same rows written one INSERT per row (what a row-at-a-time uploader does),
timed on a sample and extrapolated.

    .venv/bin/python bench/audit_bench.py [--nodes 500] [--floor-sample 20]
    .venv/bin/python bench/audit_bench.py --cluster --executors 2    # on `make cluster-up`'s cluster
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import cluster  # noqa: E402
import record  # noqa: E402


def synthetic(n: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    nodes: dict[str, Any] = {
        "seed.bench.base": {
            "resource_type": "seed",
            "name": "base",
            "schema": "bench",
            "alias": "base",
            "package_name": "bench",
            "original_file_path": "seeds/base.csv",
            "checksum": {"name": "sha256", "checksum": "0"},
            "columns": {c: {"data_type": "bigint"} for c in ("id", "a", "b")},
            "config": {"materialized": "seed"},
        }
    }
    parent_map: dict[str, list[str]] = {"seed.bench.base": []}
    results = []
    now = datetime.now(timezone.utc).isoformat()
    for i in range(n // 2):
        uid = f"model.bench.m{i}"
        parent = "seed.bench.base" if i == 0 else f"model.bench.m{i - 1}"
        parent_rel = "bench.base" if i == 0 else f"bench.m{i - 1}"
        nodes[uid] = {
            "resource_type": "model",
            "name": f"m{i}",
            "schema": "bench",
            "alias": f"m{i}",
            "package_name": "bench",
            "original_file_path": f"models/m{i}.sql",
            "language": "sql",
            "checksum": {"name": "sha256", "checksum": str(i)},
            "tags": ["bench"],
            "description": f"model {i}",
            "columns": {c: {"data_type": "bigint"} for c in ("id", "a", "b")},
            "depends_on": {"nodes": [parent]},
            "config": {"materialized": "table"},
        }
        parent_map[uid] = [parent]
        sql = f"with src as (select * from `bench`.`{parent_rel.split('.')[1]}`) select id, a + b as a, b * 2 as b from src"
        results.append(
            {
                "unique_id": uid,
                "status": "success",
                "execution_time": 0.5,
                "timing": [{"name": "execute", "started_at": now, "completed_at": now}],
                "message": "OK",
                "adapter_response": {},
                "compiled_code": sql,
            }
        )
        tid = f"test.bench.not_null_m{i}_id"
        nodes[tid] = {
            "resource_type": "test",
            "name": f"not_null_m{i}_id",
            "package_name": "bench",
            "config": {},
        }
        parent_map[tid] = [uid]
        results.append({"unique_id": tid, "status": "pass", "failures": 0, "timing": [], "message": None})
    manifest = {"nodes": nodes, "sources": {}, "macros": {}, "parent_map": parent_map}
    return manifest, results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--floor-sample", type=int, default=20)
    cluster.add_arguments(parser)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from python_hooks.audit import artifacts, audit_tables
    from python_hooks.audit import rows as audit_rows

    root = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    builder = SparkSession.builder.appName("audit-bench").config("spark.ui.enabled", "false")
    if args.cluster:
        cluster.use_cluster("audit", args.executors)
        settings = cluster.spark_settings()
    else:
        settings = {
            "spark.master": "local[2]",
            "spark.sql.warehouse.dir": str(root / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root / 'ms'};create=true",
        }
    for key, value in {**settings, "spark.sql.shuffle.partitions": "2"}.items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    if args.cluster:
        cluster.wait_for_executors(spark, args.executors)
        calls = cluster.MetastoreCalls().start()
        for database in ("bench", "audit"):
            spark.sql(f"drop database if exists {database} cascade")
    spark.sparkContext.setLogLevel("ERROR")
    manifest, results = synthetic(args.nodes)
    spark.sql("create database if not exists bench")
    spark.sql("create table bench.base (id bigint, a bigint, b bigint) using parquet")

    def invocation() -> dict[str, Any]:
        return audit_rows.invocation_row(
            str(uuid.uuid4()),
            {"which": "build"},
            results,
            target_name="bench",
            target_schema="audit",
            dbt_version="bench",
            project_name="bench",
            started_at=datetime.now(timezone.utc),
            ended_at=datetime.now(timezone.utc),
            loaded_from="bench",
        )

    # the first load creates the tables; the timed loads are the steady state
    artifacts.write_audit(spark, manifest, "audit", invocation(), results)
    timings = []
    counts: dict[str, int] = {}
    for _ in range(3):
        started = time.perf_counter()
        counts = artifacts.write_audit(spark, manifest, "audit", invocation(), results)
        timings.append(time.perf_counter() - started)
    rows = sum(v for k, v in counts.items() if k != "unparsed_models")
    best = min(timings)

    # floor: one INSERT per row, on a sample of node-result rows, extrapolated to all rows
    sample = artifacts.node_result_rows("floor", results[: args.floor_sample], manifest)
    started = time.perf_counter()
    for row in sample:
        audit_tables.write_rows(spark, "audit.dbt_node_results", "dbt_node_results", [row])
    per_row = (time.perf_counter() - started) / len(sample)

    print(f"nodes: {len(manifest['nodes'])} ({args.nodes // 2} models, {args.nodes // 2} tests, 1 seed)")
    print(f"rows written per load: {rows} {counts}")
    print(
        f"bulk load (5 inserts, sqlglot column lineage included): median {statistics.median(timings):.2f}s,"
        f" best {best:.2f}s, runs {[round(t, 2) for t in timings]}"
    )
    print(
        f"row-at-a-time floor: {per_row:.3f}s per row -> {per_row * rows:.0f}s for {rows} rows (extrapolated)"
    )
    print(f"ratio: bulk is {per_row * rows / statistics.median(timings):.0f}x faster than row-at-a-time")
    figures = {
        "seconds": round(statistics.median(timings), 2),
        "floor_s": round(per_row * rows),
        "rows": rows,
    }
    details = {
        "timings_s": [round(t, 2) for t in timings],
        "floor_per_row_s": round(per_row, 4),
        "counts": counts,
    }
    if args.cluster:
        calls.stop()
        print(f"metastore calls over the whole benchmark: {calls.summary()}")
        figures["metastore_calls"] = calls.total
    record.write(
        figures,
        repetitions=len(timings),
        details=details,
        environment=record.cluster_environment(args.cluster, "file"),
        approximate=["floor_s"],
    )
    if args.cluster:
        for database in ("bench", "audit"):
            spark.sql(f"drop database if exists {database} cascade")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
