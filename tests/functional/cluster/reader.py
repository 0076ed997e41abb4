"""A second Spark application on the cluster's metastore that reads tables in a loop.

    python -m tests.functional.cluster.reader <out.jsonl> <stop-file> <warehouse-root> db.t[:p1,p2] ...

For every table, over and over until the stop file appears: a `count(*)`, and a full scan that
returns each partition's row count and the sum of a hash of every column of every row.  Each
result (or error) is one JSON line of <out.jsonl>, with its start and end times.  After the stop
file, it runs `refresh table` on each and reads them once more (kind `after_refresh`): what another
engine's user does after a swap.  Nothing here refreshes or clears a cache before that.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from tests.conftest import cluster_parameters


def session(root: Path):
    from dbt.adapters.lakehouse.connections import session_parameters
    from pyspark.sql import SparkSession

    # completed as the adapter completes every session's (S3A's jars and endpoint on an s3a warehouse)
    params = session_parameters(cluster_parameters(root, "concurrent-reader"))
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in params.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def scans(spark, table: str, partition_columns: list[str], data_columns: list[str]) -> dict[str, list]:
    """{partition key: [rows, hash sum]} of one full scan."""
    key = (
        "concat_ws('/', " + ", ".join(f"cast(`{c}` as string)" for c in partition_columns) + ")"
        if partition_columns
        else "''"
    )
    digest = "xxhash64(" + ", ".join(f"`{c}`" for c in data_columns) + ")"
    rows = spark.sql(
        f"select {key} as k, count(*) as n, sum({digest}) as h from {table} group by 1"
    ).collect()
    return {r.k: [int(r.n), int(r.h or 0)] for r in rows}


def main() -> None:
    out, stop, root = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    spark = session(root)
    spark.sparkContext.setLogLevel("ERROR")
    tables = []
    for arg in sys.argv[4:]:
        name, _, parts = arg.partition(":")
        partition_columns = [p for p in parts.split(",") if p]
        data_columns = [f.name for f in spark.table(name).schema if f.name not in partition_columns]
        tables.append((name, partition_columns, data_columns))

    def read(kind: str, handle) -> None:
        for name, partition_columns, data_columns in tables:
            for query in ("count", "scan"):
                started = time.time()
                record = {"table": name, "query": query, "kind": kind, "started": started}
                try:
                    if query == "count":
                        record["count"] = int(spark.sql(f"select count(*) from {name}").collect()[0][0])
                    else:
                        record["partitions"] = scans(spark, name, partition_columns, data_columns)
                except Exception as exc:  # every failure is a finding: record it, keep reading
                    record["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
                record["ended"] = time.time()
                handle.write(json.dumps(record) + "\n")
                handle.flush()

    with open(out, "a", encoding="utf-8") as handle:
        while not stop.exists():
            read("loop", handle)
        for name, _, _ in tables:
            spark.sql(f"refresh table {name}")
        read("after_refresh", handle)
    spark.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
