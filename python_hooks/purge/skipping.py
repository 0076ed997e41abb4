"""Data skipping: which files' footers prove they hold no listed id (file_facts.may_hold).

Two uses, one rule:

- before the scan (`narrow`): a table none of whose files can hold a listed id is not scanned
  at all; one where few can is scanned over those files only (a temporary view, scanning.py);
  otherwise the table is scanned whole, and Spark still skips row groups by the scan's range;
- in the rewrite (`footers.split`): in a partition with ids, the files that cannot hold one are
  copied byte for byte into the new directory, and only the others are rewritten (the
  file-level rewrite, as Delta calls it).

A file is ruled out only when every row group's statistics for the identifier lie outside
[smallest listed id, largest listed id] (or hold only NULLs).  Whether a footer may decide at
all, and how it is read, is footers.py's; every other file is read.

What is read first is bounded: up to SAMPLE files under the table's directory, from partitions
picked at random (at most SAMPLE_PER_PARTITION from each, at every level), without a metastore
call; when none of them is ruled out (ids spread over the range) the footers are given up for a
plain scan.  Otherwise the partitions are listed and every footer read, up to FOOTERS_AT_MOST
files.

Every table's directory is listed once, whole, before anything else (FileFacts.tree: on an object
store one paged listing of its prefix); the sample and the partitions' listings are taken from
that listing, and each footer is read with the size it listed (on S3A without a HEAD, the parquet
tail in one GET).  A partition outside its table's directory is listed on its own.
"""

from __future__ import annotations

import zlib
from typing import Any

from python_hooks.catalog import console, metastore
from python_hooks.catalog.file_facts import FileFacts, Footer, Listing, may_hold
from python_hooks.purge.footers import bounds_for, column_path
from python_hooks.purge.plan import Narrowed, PartitionRewrite, PurgePlan, TablePlan
from python_hooks.purge.units import partition_of, whole_table

# The sample only decides whether to read every footer, never what is skipped.  Its files come
# from at least SAMPLE / SAMPLE_PER_PARTITION partitions, so that ids clustered in a few
# partitions rarely fill it; a table with ids spread costs 16 footers before its plain scan.
SAMPLE = 16
SAMPLE_PER_PARTITION = 2
FOOTERS_AT_MOST = 20_000
# a view over the files left is one file scan per partition, unioned: it pays off only when it
# leaves most of the table out (docs/benchmarks.md)
NARROW_AT_MOST = 0.25
VIEW_PARTITIONS_AT_MOST = 64


def narrow(spark: Any, plan: PurgePlan) -> None:
    """Decide each table's scan from its files' footers: `none`, `files` or `table`.  Batched over
    the node's tables: one listing call and one sample call, one footer call, the metastore's
    partitions of the tables still in doubt, then one listing call and one footer call for them
    (a footer already read is not read again)."""
    work = [(t, b) for t in plan.tables if t.error is None and (b := bounds_for(plan.ids, t)) is not None]
    if not work:
        return
    facts = FileFacts(spark)
    footers = _Footers(facts)
    flat = [(t, b) for t, b in work if not t.partitioned]
    parted = [(t, b) for t, b in work if t.partitioned]
    console.debug(f"purge step skipping tables listed ({len(work)} table(s))")
    facts.tree([t.location for t, _ in work])
    console.debug(
        f"purge step skipping samples ({len(parted)} partitioned, {len(flat)} unpartitioned table(s))"
    )
    listed = facts.list([t.location for t, _ in flat], recursive=True)
    samples = facts.samples(
        [(t.location, len(t.partition_columns), zlib.crc32(t.name.encode())) for t, _ in parted],
        SAMPLE,
        SAMPLE_PER_PARTITION,
    )
    flat_paths = {t.name: _readable(listed[t.location]) for t, _ in flat}
    console.debug("purge step skipping sampled footers")
    footers.read(
        [(p, t) for t, _ in flat for p in flat_paths[t.name] or []]
        + [(p, t) for (t, _), sample in zip(parted, samples, strict=True) for p in sample]
    )
    for table, bounds in flat:
        paths = flat_paths[table.name]
        if paths is not None and not any(may_hold(footers.of(p, table), bounds) for p in paths):
            table.scan = "none"
            table.narrowed = Narrowed(files_read=len(paths), files_left=0, partitions=[])
            table.listing = [whole_table(table)]  # its SKIPPED row
    doubt = [
        (t, b)
        for (t, b), sample in zip(parted, samples, strict=True)
        if not (sample and all(may_hold(footers.of(p, t), b) for p in sample))  # ids spread: scan it
    ]
    _narrow_partitioned(spark, facts, footers, doubt)


def _readable(listing: Listing) -> list[str] | None:
    """The data files of a listing whose footers are worth reading, or None (an error, too many)."""
    if listing.error or len(listing.files) > FOOTERS_AT_MOST:
        return None
    return [f.path for f in listing.files if f.size > 0]


class _Footers:
    """The footers read in one `narrow` call, by path and what was asked of them; each `read`
    reads only those not read yet, one call per storage format and column."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.found: dict[tuple[str, str, str], Footer] = {}

    @staticmethod
    def _key(path: str, table: TablePlan) -> tuple[str, str, str]:
        return (path, table.storage_format or "parquet", column_path(table))

    def read(self, wanted: list[tuple[str, TablePlan]]) -> None:
        groups: dict[tuple[str, str], set[str]] = {}
        for path, table in wanted:
            key = self._key(path, table)
            if key not in self.found:
                groups.setdefault(key[1:], set()).add(path)
        for (storage, column), paths in groups.items():
            for path, footer in self.facts.footers(sorted(paths), storage, column).items():
                self.found[(path, storage, column)] = footer

    def of(self, path: str, table: TablePlan) -> Footer:
        return self.found[self._key(path, table)]


def _narrow_partitioned(
    spark: Any, facts: FileFacts, footers: _Footers, tables: list[tuple[TablePlan, tuple[int, int]]]
) -> None:
    """The tables whose sample did not show ids spread: every partition's files, every footer.
    A table whose partitions cannot be listed is not narrowed (its scan reads it, or fails it)."""
    console.debug(f"purge step skipping partitions ({len(tables)} table(s) in doubt)")
    asked = listings_of(spark, [t for t, _ in tables])
    listings = {name: found for name, found in asked.items() if not isinstance(found, str)}
    tables = [(t, b) for t, b in tables if t.name in listings]
    console.debug("purge step skipping listing")
    listed = facts.list(sorted({p.location for t, _ in tables for p in listings[t.name]}))
    readable: dict[str, list[str]] = {}
    for table, _ in tables:
        items = [listed[p.location] for p in listings[table.name]]
        if any(item.error or item.subdirectories for item in items):
            continue
        paths = [f.path for item in items for f in item.files if f.size > 0]
        if len(paths) <= FOOTERS_AT_MOST:
            readable[table.name] = paths
    console.debug("purge step skipping footers")
    footers.read([(p, t) for t, _ in tables for p in readable.get(t.name, [])])
    console.debug("purge step skipping decided")
    for table, bounds in tables:
        if table.name in readable:
            _decide(table, listings[table.name], listed, footers, bounds, len(readable[table.name]))


def _decide(
    table: TablePlan,
    listing: list[PartitionRewrite],
    listed: dict[str, Listing],
    footers: _Footers,
    bounds: tuple[int, int],
    files_read: int,
) -> None:
    left: dict[str, list[str]] = {}
    with_files = []
    for part in listing:
        kept = [
            f.path
            for f in listed[part.location].files
            if f.size > 0 and may_hold(footers.of(f.path, table), bounds)
        ]
        if kept:
            left[part.path] = kept
            with_files.append(part)
    table.listing = listing
    files_left = sum(len(v) for v in left.values())
    narrowed = Narrowed(files_read=files_read, files_left=files_left, partitions=with_files, files=left)
    if files_left == 0:
        table.scan, table.narrowed = "none", narrowed
    elif files_left <= NARROW_AT_MOST * files_read and len(with_files) <= VIEW_PARTITIONS_AT_MOST:
        table.scan, table.narrowed = "files", narrowed


def listings_of(spark: Any, tables: list[TablePlan]) -> dict[str, list[PartitionRewrite] | str]:
    """Every partition of each of `tables` (by name), sorted by its values, or the message of
    what stopped its listing: one metastore call for all of them."""
    asked = metastore.partition_locations_of(
        spark, [(t.database, t.table, t.partition_columns) for t in tables]
    )
    return {
        t.name: found if isinstance(found, str) else _partitions(t, found)
        for t, found in zip(tables, asked, strict=True)
    }


def _partitions(table: TablePlan, listed: list[tuple[list[tuple[str, str]], str]]) -> list[PartitionRewrite]:
    found = [partition_of(table, [[k, v] for k, v in pairs], location) for pairs, location in listed]
    return sorted(found, key=lambda p: [v for _, v in p.values])
