"""Data skipping: which files' footers prove they hold no listed id (file_facts.may_hold).

Two uses, one rule:

- before the scan (`narrow`): a table none of whose files can hold a listed id is not scanned
  at all; one where few can is scanned over those files only (a temporary view, scanning.py);
  otherwise the table is scanned whole, and Spark still skips row groups by the scan's range;
- in the rewrite (`split`): in a partition with ids, the files that cannot hold one are copied
  byte for byte into the new directory, and only the others are rewritten (the file-level
  rewrite, as Delta calls it).

A file is ruled out only when every row group's statistics for the identifier lie outside
[smallest listed id, largest listed id] (or hold only NULLs), read as Spark reads the column:
integral identifiers of the id column's kind, files Spark reads with its own parquet/ORC reader
matched by name, the identifier not a partition column.  Everything else is read.  The footers
are read through the Hadoop FileSystem (file_facts.py), so local disk, HDFS, S3 and the cluster
target get the same skipping.

What is read first is bounded: up to SAMPLE files under the table's directory, from partitions
picked at random, without a metastore call; when none of them is ruled out (ids spread over the
range) the footers are given up for a plain scan.  Otherwise the partitions are listed and every
footer read, up to FOOTERS_AT_MOST files.
"""

from __future__ import annotations

import zlib
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.file_facts import FileFacts, Listing, integral, may_hold
from python_hooks.purge.plan import INTEGRAL, IdSource, Narrowed, PartitionRewrite, PurgePlan, TablePlan
from python_hooks.purge.units import partition_of, whole_table

SAMPLE = 64
FOOTERS_AT_MOST = 20_000
# a view over the files left is one file scan per partition, unioned: it pays off only when it
# leaves most of the table out (docs/benchmarks.md)
NARROW_AT_MOST = 0.25
VIEW_PARTITIONS_AT_MOST = 64


def reads_like_the_table(spark: Any, meta: Any, storage_format: str) -> bool:
    """Spark reads the table with its own parquet/ORC reader, matching columns by name: what the
    footers say of a column is then what Spark reads of it."""
    if str(spark.conf.get("spark.sql.parquet.fieldId.read.enabled", "false")).lower() == "true":
        return False
    if metastore.provider(meta) in ("parquet", "orc"):
        return True
    key = f"spark.sql.hive.convertMetastore{'Parquet' if storage_format == 'parquet' else 'Orc'}"
    return str(spark.conf.get(key, "true")).lower() == "true"


def bounds_for(ids: IdSource | None, table: TablePlan) -> tuple[int, int] | None:
    """The listed ids' range when the footers may decide for this table, else None."""
    identifier = table.identifier
    if ids is None or ids.bounds is None or identifier is None or table.storage_format is None:
        return None
    if identifier.type not in INTEGRAL or ids.type not in INTEGRAL:
        return None
    if any("." in part for part in identifier.path):
        return None  # a name with a dot cannot be told from a nested path in the footers
    if identifier.path[0].lower() in {c.lower() for c in table.partition_columns}:
        return None  # read from the partition's value, not the files
    return ids.bounds


def column_path(table: TablePlan) -> str:
    assert table.identifier is not None
    return ".".join(table.identifier.path)


def narrow(spark: Any, plan: PurgePlan) -> None:
    """Decide each table's scan from its files' footers: `none`, `files` or `table`."""
    facts = None
    for table in plan.tables:
        bounds = bounds_for(plan.ids, table) if table.error is None else None
        if bounds is None:
            continue
        facts = facts or FileFacts(spark)
        if table.partitioned:
            _narrow_partitioned(spark, facts, table, bounds)
        else:
            _narrow_unpartitioned(facts, table, bounds)


def _narrow_unpartitioned(facts: FileFacts, table: TablePlan, bounds: tuple[int, int]) -> None:
    listing = facts.list([table.location], recursive=True)[table.location]
    if listing.error or len(listing.files) > FOOTERS_AT_MOST:
        return
    paths = [f.path for f in listing.files if f.size > 0]
    footers = facts.footers(paths, table.storage_format or "parquet", column_path(table))
    if not any(may_hold(footers[p], bounds) for p in paths):
        table.scan = "none"
        table.narrowed = Narrowed(files_read=len(paths), files_left=0, partitions=[])
        table.listing = [whole_table(table)]  # its SKIPPED row


def _narrow_partitioned(spark: Any, facts: FileFacts, table: TablePlan, bounds: tuple[int, int]) -> None:
    storage, column = table.storage_format or "parquet", column_path(table)
    sample = facts.sample(
        table.location, len(table.partition_columns), SAMPLE, zlib.crc32(table.name.encode())
    )
    if sample:
        footers = facts.footers(sample, storage, column)
        if all(may_hold(footers[p], bounds) for p in sample):
            return  # ids spread over the range: the scan reads the table
    listing = list_partitions(spark, table)
    listed = facts.list([p.location for p in listing])
    if any(item.error or item.subdirectories for item in listed.values()):
        return
    paths = [f.path for item in listed.values() for f in item.files if f.size > 0]
    if len(paths) > FOOTERS_AT_MOST:
        return
    footers = facts.footers(paths, storage, column)
    left: dict[str, list[str]] = {}
    with_files = []
    for part in listing:
        kept = [
            f.path for f in listed[part.location].files if f.size > 0 and may_hold(footers[f.path], bounds)
        ]
        if kept:
            left[part.path] = kept
            with_files.append(part)
    table.listing = listing
    files_left = sum(len(v) for v in left.values())
    narrowed = Narrowed(files_read=len(paths), files_left=files_left, partitions=with_files, files=left)
    if files_left == 0:
        table.scan, table.narrowed = "none", narrowed
    elif files_left <= NARROW_AT_MOST * len(paths) and len(with_files) <= VIEW_PARTITIONS_AT_MOST:
        table.scan, table.narrowed = "files", narrowed


def footer_bounds(
    spark: Any, location: str, storage_format: str, column: str
) -> tuple[int, int] | None | bool:
    """(min, max) of an integral column over the files under `location`, from their footers;
    None when it holds no non-NULL value; False when the footers cannot say (a file without
    statistics, of another type, unreadable): the caller asks Spark."""
    facts = FileFacts(spark)
    listing = facts.list([location], recursive=True)[location]
    if listing.error is not None:
        return False
    paths = [f.path for f in listing.files if f.size > 0]
    low: int | None = None
    high: int | None = None
    for footer in facts.footers(paths, storage_format, column).values():
        if (
            footer.error is not None
            or footer.rows is None
            or footer.matches > 1
            or (footer.matches == 1 and not integral(footer.type))
        ):
            return False
        if footer.matches == 0:
            continue  # a file without the column holds no id (Spark reads NULLs)
        for group in footer.groups:
            if group.rows == 0:
                continue
            if not group.has_statistics:
                return False
            if group.min is None:
                if group.nulls is not None and group.nulls == group.rows:
                    continue
                return False
            low = int(group.min) if low is None else min(low, int(group.min))
            high = int(group.max) if high is None else max(high, int(group.max))
    return None if low is None else (low, high)


def list_partitions(spark: Any, table: TablePlan) -> list[PartitionRewrite]:
    """Every partition of the table from the metastore (one call), sorted by its values."""
    found = [
        partition_of(table, [[k, v] for k, v in pairs], location)
        for pairs, location in metastore.partition_locations(
            spark, table.database, table.table, table.partition_columns
        )
    ]
    return sorted(found, key=lambda p: [v for _, v in p.values])


def split(
    facts: FileFacts, table: TablePlan, listings: dict[str, Listing], bounds: tuple[int, int]
) -> tuple[dict[str, int], dict[str, list[str]], dict[str, list[str]]] | None:
    """For the file-level rewrite: per partition location, its rows and the files that may hold
    an id (rewritten) and those that cannot (copied); None when a footer cannot be read."""
    paths = [f.path for item in listings.values() for f in item.files]
    footers = facts.footers(paths, table.storage_format or "parquet", column_path(table))
    rows: dict[str, int] = {}
    rewrite: dict[str, list[str]] = {}
    copy: dict[str, list[str]] = {}
    for location, item in listings.items():
        rows[location], rewrite[location], copy[location] = 0, [], []
        for data_file in item.files:
            footer = footers[data_file.path]
            if footer.error is not None or footer.rows is None:
                return None
            rows[location] += footer.rows
            if data_file.size == 0 or not may_hold(footer, bounds):
                copy[location].append(data_file.path)
            else:
                rewrite[location].append(data_file.path)
    return rows, rewrite, copy
