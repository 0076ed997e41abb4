"""Benchmark: the project's purge of an Apache Iceberg table against Iceberg's own recipe by hand.

Generates a partitioned Iceberg table of N rows over P partitions (format 2, merge-on-read
deletes and merges, an identity partition `ds`, onboarded by its `dataset.descriptor`), created
through Iceberg's catalog `iceberg` over the same metastore (docs/formats.md), lists about 1% of
the ids, all in k partitions, and in the same process (one Spark session) runs on two identical
copies:

- the purge: the project's `purge` node on one copy (its scan, a MERGE with the id table over the
  partitions that held ids, then, those partitions having delete files, `rewrite_data_files` with
  a delete-file threshold of 1 and `rewrite_position_delete_files` over them, then
  `rewrite_manifests`);
- the floor: what a careful engineer writes by hand with Iceberg's own procedures on the other:
  the same MERGE with the id table (a join, over the whole table), the partitions it left delete
  files in (the `delete_files` metadata table), then `rewrite_data_files` over them with
  `delete-file-threshold` 1 (and `min-file-size-bytes` 0, as the purge: rewrite the files a delete
  applies to, compact no other), `rewrite_position_delete_files` over them, and
  `rewrite_manifests`, as the purge does, so that no manifest keeps a removed file's statistics.
  `rewrite_position_delete_files` is given `rewrite-all`: the rewrite of the data files leaves
  their position delete files live (they name files no longer live, and its new files carry the
  delete's sequence number, so `remove-dangling-deletes` would not drop them), and without it the
  procedure leaves a partition's one small delete file alone.

Neither runs `expire_snapshots`: retention does, after the purge
(python_hooks/retention/iceberg_snapshots.py; the purge node runs none).  Prints the purge command's and node's wall time
against the floor's and their ratios, medians of --repeat repetitions after a discarded warm-up
at full size; the two jobs alternate which runs first.  Checks that both leave the same rows, no
listed id, and no delete file.

    .venv/bin/python bench/iceberg_purge_bench.py                       # 5M rows, P=24, k=4, x5
    .venv/bin/python bench/iceberg_purge_bench.py --rows 50000000 --repeat 3
    .venv/bin/python bench/iceberg_purge_bench.py --clustered --files-per-partition 16 --repeat 3
    .venv/bin/python bench/iceberg_purge_bench.py --fs s3a --repeat 3    # the warehouse on `make s3-up`'s store

Each copy is written by Iceberg's own writer, which shuffles the rows by partition: one file per
partition, or, with --files-per-partition F, F appends of a slice of each partition's rows (F
files per partition, each an id range of it, as a day's partition built from several appends).
With --clustered the ids are ordered in the data (each file a contiguous id range) and listed as
one block: the purge's scan carries the id range, which Iceberg's file statistics use to skip
files; the floor's MERGE joins every file of the table.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import format_purge  # noqa: E402
from workload import DESCRIPTOR, events_table, listed_ids  # noqa: E402

CATALOG = "iceberg"  # Iceberg's catalog in the session (python_hooks/catalog/iceberg.py)
FLOOR_STEPS: list[dict[str, float]] = []


def drop_copy(spark: Any, database: str) -> None:
    """`<database>` and its Iceberg table, the table's files with it."""
    spark.sql(f"drop table if exists {CATALOG}.{database}.events purge")
    spark.sql(f"drop database if exists {database} cascade")


def sliced_source(spark: Any, source: str, rows: int, partitions: int, clustered: bool, files: int) -> str:
    """A cached view of `source` with each row's `slice`: which of `files` id ranges of its
    partition it is in (clustered: its offset in the partition's id range; spread, where id % P
    picks the partition: id div P).  Cached, the copies' 2 x `files` appends read it from memory."""
    per_partition = max(1, rows // partitions)
    place = f"metadata.guestid % {per_partition}" if clustered else f"metadata.guestid div {partitions}"
    spark.sql(f"""
        cache table bench_iceberg_sliced as
        select metadata, payload, ds, least({files - 1}, ({place}) * {files} div {per_partition}) as slice
        from {source}""")
    return "bench_iceberg_sliced"


def iceberg_copy(spark: Any, source: str, database: str, files: int) -> None:
    """`iceberg.<database>.events`: an Iceberg copy of `source` (format 2, merge-on-read,
    partitioned by ds), onboarded as the Hive benchmark's table is (metadata.guestid).  Iceberg's
    writer shuffles the rows by partition: one file per partition and append, so with `files` > 0
    (`source` a sliced_source) each slice is an append of its own."""
    drop_copy(spark, database)
    spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {CATALOG}.{database}.events (
            metadata struct<guestid: bigint, session: string>, payload string, ds string)
        using iceberg partitioned by (ds)
        tblproperties ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
            'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read',
            'dataset.descriptor' = '{DESCRIPTOR}')""")
    for i in range(files) if files > 0 else [None]:
        where = "" if i is None else f" where slice = {i}"
        spark.sql(
            f"insert into {CATALOG}.{database}.events select metadata, payload, ds from {source}{where}"
        )


def run_floor(spark: Any, database: str) -> None:
    """Iceberg's own recipe: a MERGE with the id table, then the rewrites over the partitions it
    left delete files in, then rewrite_manifests; each step's seconds in FLOOR_STEPS."""
    table = f"{CATALOG}.{database}.events"
    steps: dict[str, float] = {}
    last = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal last
        now = time.perf_counter()
        steps[step], last = round(now - last, 2), now

    spark.sql(f"""
        merge into {table} as a
        using (select distinct guestid from bench_ids.ids where guestid is not null) as b
        on a.metadata.guestid = b.guestid
        when matched then delete""")
    lap("merge")
    touched = sorted(
        r.ds for r in spark.sql(f"select distinct partition.ds as ds from {table}.delete_files").collect()
    )
    where = " or ".join(f"ds = '{ds}'" for ds in touched)
    lap("delete_files")
    if touched:
        spark.sql(f"""
            call {CATALOG}.system.rewrite_data_files(
                table => '{database}.events', where => "{where}",
                options => map('delete-file-threshold', '1', 'min-file-size-bytes', '0'))""").collect()
        lap("rewrite_data_files")
        spark.sql(f"""
            call {CATALOG}.system.rewrite_position_delete_files(
                table => '{database}.events', where => "{where}",
                options => map('rewrite-all', 'true'))""").collect()
        lap("rewrite_position_delete_files")
    spark.sql(f"call {CATALOG}.system.rewrite_manifests(table => '{database}.events')").collect()
    lap("rewrite_manifests")
    FLOOR_STEPS.append(steps)


def data_files(spark: Any, database: str) -> int:
    return int(spark.sql(f"select count(*) from {CATALOG}.{database}.events.data_files").collect()[0][0])


def state(spark: Any, database: str) -> tuple[int, int, int, int]:
    """(rows, a checksum of them, listed ids left, live delete files)."""
    table = f"{CATALOG}.{database}.events"
    rows, checksum = spark.sql(
        f"select count(*), coalesce(sum(hash(metadata.guestid, metadata.session, payload, ds)), 0) from {table}"
    ).collect()[0]
    listed = spark.sql(
        f"select count(*) from {table} as a left semi join bench_ids.ids as b on a.metadata.guestid = b.guestid"
    ).collect()[0][0]
    deletes = spark.sql(f"select count(*) from {table}.delete_files").collect()[0][0]
    return int(rows), int(checksum), int(listed), int(deletes)


def point(
    spark: Any, rows: int, partitions: int, touched: int, clustered: bool, files: int, floor_first: bool
) -> dict[str, Any]:
    events_table(spark, "bench_iceberg_src", rows, partitions, clustered)
    source = "bench_iceberg_src.events"
    if files > 0:
        source = sliced_source(spark, source, rows, partitions, clustered, files)
    try:
        for database in ("bench_iceberg_purge", "bench_iceberg_floor"):
            iceberg_copy(spark, source, database, files)
    finally:
        if files > 0:
            spark.sql(f"uncache table if exists {source}")
            spark.sql(f"drop view if exists {source}")
    files_before = data_files(spark, "bench_iceberg_purge")
    listed = listed_ids(spark, rows, partitions, touched, clustered)
    jobs = {
        "floor": lambda: run_floor(spark, "bench_iceberg_floor"),
        "purge": lambda: format_purge.run_purge("bench_iceberg_purge.events"),
    }
    seconds = format_purge.timed(jobs, floor_first)
    left, checksum, ids_left, deletes = state(spark, "bench_iceberg_purge")
    floor_left, floor_checksum, floor_ids_left, floor_deletes = state(spark, "bench_iceberg_floor")
    if (left, checksum) != (floor_left, floor_checksum) or left == rows:
        raise SystemExit(f"purge left {left} rows, the floor {floor_left} (of {rows}): they disagree")
    if ids_left or floor_ids_left or deletes or floor_deletes:
        raise SystemExit(
            f"listed ids left: purge {ids_left}, floor {floor_ids_left}; "
            f"delete files left: purge {deletes}, floor {floor_deletes}"
        )
    return {
        **format_purge.figures((rows, partitions, touched), listed, rows - left, seconds),
        "data_files": files_before,
        "floor_steps_s": FLOOR_STEPS[-1],
    }


def check(spark: Any) -> None:
    if not spark.conf.get(f"spark.sql.catalog.{CATALOG}", None):
        raise SystemExit(
            f"no Iceberg catalog `{CATALOG}` in the session: LAKEHOUSE_DELTA_JARS must name the"
            " jars with Iceberg's runtime (`make setup` puts them in .jars/formats)"
        )


def floor_steps(median: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    median["floor_steps_s"] = {
        step: round(statistics.median(r["floor_steps_s"].get(step, 0.0) for r in runs), 2)
        for step in runs[0]["floor_steps_s"]
    }
    print(
        "the floor's steps (medians): "
        + ", ".join(f"{k} {v:.2f}s" for k, v in median["floor_steps_s"].items())
    )


def main() -> None:
    args = format_purge.arguments(__doc__, "this many files (appends) per partition")
    format_purge.run(args, "iceberg-purge-bench-", point, check, floor_steps)


if __name__ == "__main__":
    main()
