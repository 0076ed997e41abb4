"""Coverage listing speed: the catalog side of `pii_coverage` over hundreds of tables.

Creates N empty tables with nested schemas (a struct in a struct, an array of structs) in one
database of a throwaway embedded metastore, then times what pii_coverage does per database:
`list_tables`, `describe_tables` (one getTablesByName) and the name matching, three times (the
first pays the JVM's warm-up).  No floor: there is no row to read, only metadata.

    .venv/bin/python bench/coverage_bench.py [--tables 300]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=300)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from python_hooks.catalog import tables as catalog_tables
    from python_hooks.erasure import coverage

    root = tempfile.mkdtemp(prefix="coverage-bench-")
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.warehouse.dir", f"{root}/warehouse")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={root}/metastore_db;create=true",
        )
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sql("create database bench_cov")
    started = time.time()
    for i in range(args.tables):
        spark.sql(
            f"create table bench_cov.t{i} (id bigint, meta struct<guestid: bigint, s: struct<a: string, "
            f"email: string>>, items array<struct<sku: string, guestid: bigint>>, c{i} string) using parquet"
        )
    print(f"created {args.tables} tables in {time.time() - started:.1f}s")
    for attempt in range(3):
        started = time.time()
        names = catalog_tables.list_tables(spark, "bench_cov")
        described = coverage.describe_tables(spark, [["bench_cov", n] for n in names])
        matched = coverage.match_columns(spark, described, ["guestid"], ["*email*"])
        print(
            f"run {attempt + 1}: listed, described and matched {len(described)} tables in "
            f"{time.time() - started:.2f}s ({len(matched)} with matching fields)"
        )


if __name__ == "__main__":
    main()
