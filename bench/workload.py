"""What the purge benchmarks share: dbt through dbtRunner in the benchmark's own process, the
embedded warehouse of a run, the events table and the list of ids to purge."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DESCRIPTOR = '{"complianceSpec": {"identifierField": "metadata.guestid"}}'


def run_dbt(work: Path, *args: str) -> Any:
    """A dbt command in this process (one Spark session), its target and logs in `work`; exits
    naming the command when it fails."""
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(
        [*args, "--target-path", str(work / "target"), "--log-path", str(work / "logs"), "--quiet"]
    )
    if not result.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {result.exception}")
    return result


def start_session(work: Path) -> Any:
    """The session of this process, started by a first dbt command (the profile's settings)."""
    run_dbt(work, "run-operation", "warehouse_databases")
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


@contextmanager
def copy_free_commit(spark: Any, location: str, on: bool = True) -> Iterator[bool]:
    """The writes of the block into `location` committed as the purge's staging writes are
    (`python_hooks.catalog.commit.staging_commit`: S3A's magic committer on `s3a://`, no byte
    copied), when `on`; yields whether the magic committer is used.  The benchmarks build their
    tables and run their floors with it, so that neither pays the default protocol's copies on
    S3.  It refuses dynamic partition overwrite: write into a fresh directory, or append."""
    if not on:
        yield False
        return
    from python_hooks.catalog import commit

    with commit.staging_commit(spark, location) as committer:
        yield committer != "rename"


def running_session() -> Any:
    """The session dbt started in this process, or None when none runs (the builder would start one)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate() if SparkContext._active_spark_context is not None else None


FILESYSTEMS = ("file", "hdfs", "s3a")


def add_fs_argument(parser: Any) -> None:
    parser.add_argument(
        "--fs",
        choices=FILESYSTEMS,
        default="file",
        help="the warehouse's filesystem: a local directory, or the HDFS / object store of "
        "`make hdfs-up` / `make s3-up` (its export lines in the environment, or .hdfs/env, .s3/env)",
    )


def result_name(name: str, fs: str) -> str:
    """`purge.json` on a local disk, `purge-hdfs.json` / `purge-s3a.json` on the others, so that
    a run on one filesystem never overwrites another's figures."""
    if fs == "file":
        return name
    stem, dot, suffix = name.partition(".")
    return f"{stem}-{fs}{dot}{suffix}"


# S3A's counters (its StorageStatistics, hadoop-aws 3.3.4 names) the benchmarks report; the
# requests among them are summed as `requests`
STORE_COUNTERS = {
    "object_put_request": "PUT requests",
    "object_multipart_initiated": "multipart uploads",
    "object_copy_requests": "COPY requests",
    "action_http_get_request": "GET requests",
    "action_http_head_request": "HEAD requests",
    "object_list_request": "LIST requests",
    "object_continue_list_request": "LIST continuations",
    "object_delete_request": "DELETE requests",
    "object_bulk_delete_request": "bulk DELETE requests",
    "object_put_bytes": "bytes put",
    "files_copied_bytes": "bytes copied",
    "committer_commits_completed": "magic commits",
}
REQUESTS = [
    name for name in STORE_COUNTERS if name.startswith(("object_", "action_")) and "bytes" not in name
]


def store_counters(spark: Any) -> dict[str, int]:
    """S3A's own counters for the warehouse's store (as python_hooks/catalog/commit.py reads
    them for the purge's log), {} on a local disk or HDFS.  They count all of this process's use
    of that store (driver and local executors share one S3A instance), so the difference of two
    readings around one job is what that job cost it.  On a cluster the executors are processes
    of their own: the counters are then the driver's requests only (`describe_counters` says so)."""
    from python_hooks.catalog.commit import store_statistics

    return store_statistics(spark, os.environ["SPARK_WAREHOUSE_DIR"], STORE_COUNTERS)


def counters_between(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What one job cost the store, with the requests summed; {} off S3."""
    if not after:
        return {}
    cost = {name: after[name] - before.get(name, 0) for name in STORE_COUNTERS if name in after}
    cost["requests"] = sum(cost.get(name, 0) for name in REQUESTS)
    return cost


def describe_counters(cost: dict[str, int]) -> str:
    """`1,234 requests (12 PUT requests, ...), 1,400,000 bytes put, 0 bytes copied, ...`"""
    parts = [
        f"{cost[name]:,} {label}"
        for name, label in STORE_COUNTERS.items()
        if cost.get(name) or name == "files_copied_bytes"
    ]
    on_cluster = os.environ.get("DBT_TARGET") == "cluster"
    whose = " (the driver's only: the cluster's executors are not counted)" if on_cluster else ""
    return f"{cost.get('requests', 0):,} requests{whose}: " + ", ".join(parts)


def store_environment(fs: str) -> str:
    """The warehouse URI of the running HDFS or object store, its settings put in os.environ."""
    prefix = {"hdfs": "hdfs://", "s3a": "s3a://"}[fs]
    if not os.environ.get("SPARK_WAREHOUSE_DIR", "").startswith(prefix):
        env_file = REPO / {"hdfs": ".hdfs", "s3a": ".s3"}[fs] / "env"
        if not env_file.is_file():
            raise SystemExit(
                f"--fs {fs}: no {prefix} SPARK_WAREHOUSE_DIR and no {env_file}: run `make {'hdfs' if fs == 'hdfs' else 's3'}-up`"
            )
        for line in env_file.read_text().splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export ") :].partition("=")
                os.environ[key] = value
    return os.environ["SPARK_WAREHOUSE_DIR"].rstrip("/")


def local_warehouse(work: Path, fs: str = "file") -> None:
    """The embedded default with its metastore in `work`, its warehouse there too or, with `fs`
    hdfs / s3a, in a fresh directory of the running store; the repo as dbt's project."""
    if fs == "file":
        os.environ["SPARK_WAREHOUSE_DIR"] = str(work / "warehouse")
    else:
        os.environ["SPARK_WAREHOUSE_DIR"] = f"{store_environment(fs)}/bench/{work.name}"
    os.environ["SPARK_METASTORE_DIR"] = str(work / "metastore_db")
    session_settings()


def warehouse_uri() -> str:
    """The warehouse of this run (local_warehouse sets it)."""
    return os.environ.get("SPARK_WAREHOUSE_DIR", "")


def session_settings() -> None:
    """What every benchmark sets before the session starts, on either target."""
    os.environ.setdefault("DBT_PROFILES_DIR", str(REPO))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    os.environ.setdefault("SPARK_SHUFFLE_PARTITIONS", "4")
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))


def events_table(
    spark: Any,
    database: str,
    rows: int,
    partitions: int,
    clustered: bool = False,
    files_per_partition: int = 0,
) -> None:
    """`<database>.events`, onboarded (metadata.guestid), N rows over P partitions `p0000`...

    Spread: row id goes to partition id % P.  Clustered (a date-ordered id): partition p holds the
    ids [p * N/P, (p+1) * N/P), written in order, so each file covers a contiguous id range.
    `files_per_partition` > 0 caps the files' rows so that each partition is written as about
    that many files (a day's partition built from several appends); 0: one file per partition
    and writing task.
    """
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {database}.events (metadata struct<guestid: bigint, session: string>, payload string)
        partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')""")
    key = "spark.sql.files.maxRecordsPerFile"
    previous = spark.conf.get(key)
    if files_per_partition > 0:
        spark.conf.set(key, str(-(-rows // (partitions * files_per_partition))))
    try:
        with copy_free_commit(spark, warehouse_uri()):
            insert_events(spark, database, rows, partitions, clustered=clustered)
    finally:
        spark.conf.set(key, previous)


def insert_events(
    spark: Any,
    database: str,
    rows: int,
    partitions: int,
    first_partition: int = 0,
    first_id: int = 0,
    clustered: bool = False,
) -> None:
    """N more rows (ids from `first_id`) over P partitions numbered from `first_partition`."""
    offset = f"(id - {first_id})"
    within = f"{offset} div {max(1, rows // partitions)}" if clustered else f"{offset} % {partitions}"
    spark.sql(f"""
        insert into {database}.events partition (ds)
        select named_struct('guestid', id, 'session', concat('s', id % 977)),
               repeat('x', 40),
               format_string('p%04d', cast({first_partition} + {within} as int))
        from range({first_id}, {first_id + rows})""")


def listed_ids(spark: Any, rows: int, partitions: int, touched: int, clustered: bool = False) -> int:
    """`bench_ids.ids`: about 1% of the rows' ids, all from the first `touched` partitions (spread),
    or one contiguous block inside the first partition (clustered).  Returns how many."""
    spark.sql("create database if not exists bench_ids")
    spark.sql("drop table if exists bench_ids.ids")
    spark.sql("create table bench_ids.ids (guestid bigint) using parquet")
    per_partition = rows // partitions
    wanted = max(1, rows // 100)
    if clustered:
        start = per_partition // 4
        spark.sql(f"insert into bench_ids.ids select id from range({start}, {start + wanted})")
    else:
        stride = max(1, (per_partition * touched) // wanted)
        spark.sql(f"""
            insert into bench_ids.ids
            select id from range({rows})
            where id % {partitions} < {touched} and (id div {partitions}) % {stride} = 0""")
    return int(spark.sql("select count(*) from bench_ids.ids").collect()[0][0])
