"""The purge's id scan, narrowed by the files' footers before Spark reads anything.

The scan finds the partitions that hold a listed id: a semi-join of the whole table with the ids.
Spark already skips the row groups whose statistics lie outside the listed ids' range (the
scan's `between`), but it still plans, opens and reads the footer of every file of the table in
its tasks.  When the identifier is clustered (a date-ordered id, sorted or bucketed files), the
footers alone rule out most files, often all of a table's.  Here they are read first, in this
process, by pyarrow (about 0.05 ms a file on the local filesystem), with the file-level
purge's own rule (`file_level.arrow_parquet_file`: every row group's min/max outside [smallest
id, largest id], or only NULLs); then

- no file can hold a listed id: the table is not scanned at all (no partition has ids);
- some can: the same scan SQL reads a temporary view over only those files (the table's data
  schema, the partition's values as columns, as `file_level.candidate_view` builds it);
- every file can (ids spread over the range), more than a quarter of them can, or the footers
  cannot decide: the scan reads the table, as before.

The answer is the same as the full scan's: a file is left out only when its statistics prove it
holds no listed id.  What is read first is bounded: up to 64 files under the table's directory,
from partitions picked at random, without a metastore call; when none of them rules out every
id (ids spread over the range), the footers are given up and the table is scanned, for a few
milliseconds.  Otherwise the partitions are listed from the metastore and every file's footer is
read.  Only a partitioned parquet table on the local filesystem (a `file:` warehouse), read by
Spark's own parquet reader, with an integral identifier of the id column's type, is narrowed; a
partition with a sub-directory, or any file pyarrow cannot read, leaves the table to the full
scan.

    run(spark, spec)  ->  {ok, error, rows, narrowed: {files, read, partitions} | None[, partitions]}
    read_ahead(spark, {key: spec}, workers)   # catalog.background's threads; collect(key) gives run's result
"""

from __future__ import annotations

import os
import random
from typing import Any

from python_hooks.catalog import background, files, metastore, tables
from python_hooks.catalog.jvm import path_string, scala_list
from python_hooks.errors import result
from python_hooks.purge import file_level

# files read before the footers are given up when none of them rules out every listed id
GIVE_UP_AFTER = 64
# The view over the files that may hold an id is one file scan per partition, unioned: it pays
# off when it leaves most of the table out.  With more than a quarter of the files left to read,
# or more than this many partitions among them, the table is scanned whole (Spark's row-group
# skipping still applies).  A table of 10 partitions with half its files ruled out was scanned in
# 250 ms over the view against 80 ms whole.
NARROW_AT_MOST = 0.25
VIEW_PARTITIONS_AT_MOST = 64


def _partition_files(directory: str) -> list[str] | None:
    """The data files Spark reads in a local partition directory, or None when it holds a
    sub-directory (Spark does not read those for a Hive partition; the full scan decides)."""
    if not os.path.isdir(directory):
        return []
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(("_", ".")):
                continue
            if entry.is_dir():
                return None
            if entry.stat().st_size > 0:
                found.append(entry.path)
    return sorted(found)


def _sample(root: str, depth: int, seed: str) -> list[str]:
    """Up to GIVE_UP_AFTER data files under a local table directory, from partition directories
    picked at random (`col=value` names, `depth` levels down), without asking the metastore."""
    rng = random.Random(seed)
    found: list[str] = []

    def visit(directory: str, level: int) -> None:
        try:
            with os.scandir(directory) as entries:
                listed = [e for e in entries if not e.name.startswith(("_", "."))]
        except OSError:
            return
        if level == depth:
            found.extend(e.path for e in listed if e.is_file() and e.stat().st_size > 0)
            return
        children = [e.path for e in listed if e.is_dir() and "=" in e.name]
        rng.shuffle(children)
        for child in children:
            if len(found) >= GIVE_UP_AFTER:
                return
            visit(child, level + 1)

    visit(root, 0)
    return found[:GIVE_UP_AFTER]


def candidate_files(
    spark: Any,
    database: str,
    table: str,
    path: list[str],
    bounds: tuple[int, int],
    location: str | None = None,
    partition_columns: list[str] | None = None,
) -> dict[str, Any] | None:
    """{partitions: [{pairs, files}], files, read} of the partitions with files that may hold a
    listed id (`files` of them only), or None when the footers do not narrow the scan.

    First a sample of the files under the table's `location` (up to 64, from partitions picked at
    random, no metastore call): when none of them rules out every id, the footers are given up.
    Only then are the partitions listed from the metastore and every file's footer read.
    """
    if any("." in part for part in path):
        return None
    if location is None or partition_columns is None:
        meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
        location = path_string(spark, meta.location())
        partition_columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
    root = files.local_path(location)
    columns = list(partition_columns)
    if root is None or not columns:
        return None
    sampled = _sample(root, len(columns), f"{database}.{table}")
    if not any((file_level.arrow_parquet_file(name, path, bounds) or (0, False))[1] for name in sampled):
        return None
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    if files.storage_format(meta) != "parquet" or not file_level.reads_like_the_table(spark, meta, "parquet"):
        return None
    listed = metastore.partition_locations(spark, database, table, columns)
    local = [files.local_path(location) for _, location in listed]
    if any(directory is None for directory in local):
        return None
    partitions: list[dict[str, Any]] = []
    read = clean = 0
    for (pairs, _), directory in zip(listed, local, strict=True):
        found = _partition_files(directory)  # type: ignore[arg-type]
        if found is None:
            return None
        candidates = []
        for name in found:
            decided = file_level.arrow_parquet_file(name, path, bounds)
            if decided is None:
                return None
            read += 1
            if decided[1]:
                clean += 1
            else:
                candidates.append("file:" + name)  # a Hadoop Path string again, for Spark's reader
        if candidates:
            partitions.append({"pairs": [list(pair) for pair in pairs], "files": candidates})
    if clean == 0:
        return None
    left = read - clean
    if left and (left > NARROW_AT_MOST * read or len(partitions) > VIEW_PARTITIONS_AT_MOST):
        return None
    listing = sorted(
        ({"values": [list(pair) for pair in pairs], "location": location} for pairs, location in listed),
        key=lambda part: [value for _, value in part["values"]],
    )
    return {"partitions": partitions, "files": read, "read": read - clean, "listing": listing}


def run(spark: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """The id scan of one table: {ok, error, rows, narrowed}; never raises.

    `spec`: {database, table, location, partition_columns, sql (the scan of the table),
    narrow_sql (the same scan of `view`), view, path (the identifier's field path), bounds
    (purge_id_bounds)}.  `narrowed` says what
    the footers did: None when the table was scanned whole, else {files, read, partitions}.
    When they rule out every file, `partitions` is the table's partition listing they were read
    from (as catalog.tables.list_partitions gives it): every partition is SKIPPED, and the purge
    lists nothing again.
    """
    bounds = file_level.usable_bounds(spec.get("bounds"))
    narrowed = None
    if bounds is not None and spec.get("narrow_sql"):
        try:
            narrowed = candidate_files(
                spark,
                spec["database"],
                spec["table"],
                list(spec["path"]),
                bounds,
                spec.get("location"),
                spec.get("partition_columns"),
            )
        except Exception:  # noqa: BLE001 - the footers are an optimisation: the full scan decides
            narrowed = None
    if narrowed is None:
        return {**tables.execute(spark, str(spec["sql"])), "narrowed": None}
    summary = {
        "files": narrowed["files"],
        "read": narrowed["read"],
        "partitions": len(narrowed["partitions"]),
    }
    if not narrowed["partitions"]:
        # no partition holds a listed id: the listing just read serves for their SKIPPED rows
        return result(rows=[], narrowed=summary, partitions=narrowed["listing"])
    view = str(spec["view"])
    made = file_level.candidate_view(spark, spec["database"], spec["table"], view, narrowed["partitions"])
    if not made["ok"]:
        return {**tables.execute(spark, str(spec["sql"])), "narrowed": None}
    try:
        return {**tables.execute(spark, str(spec["narrow_sql"])), "narrowed": summary}
    finally:
        file_level.drop_view(spark, view)


def read_ahead(spark: Any, scans: dict[str, dict[str, Any]], workers: int) -> int:
    """Start the scans of `scans` ({key: spec}) on `workers` threads, in the order given
    (catalog.background); `catalog_collect(key)` waits for one and gives what `run` returned."""
    return background.read_ahead_calls({key: (run, (spark, spec)) for key, spec in scans.items()}, workers)
