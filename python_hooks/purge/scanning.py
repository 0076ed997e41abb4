"""The purge's scans: which partitions hold a listed id, and how many rows (the node's second call).

Each table the footers did not rule out is scanned once with the SQL its materialization
rendered (`purge_scan_sql`: a broadcast semi-join with the ids, rows counted per partition):
over the table, or over a temporary view of the files the footers left (skipping.py), up to
`purge_scan_parallelism` tables at a time (small scans overlap their fixed costs).  Every count
is Spark's own.  The partitions of the tables the data skipping did not list are listed from the
metastore meanwhile (one call for all of them), and matched with what the scan found; a
partition the scan found that the listing does not hold is asked for again (it may have been
added since), and if the metastore still does not list it, it fails the table instead of being
skipped.  For a dry run, the rows of each partition to rewrite are read
from its files' footers (rows_before).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from python_hooks.catalog import console, metastore
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.work import Pool
from python_hooks.errors import CancelledError, first_line
from python_hooks.purge.plan import PartitionRewrite, PurgePlan, ScannedPlan, TablePlan
from python_hooks.purge.skipping import listings_of
from python_hooks.purge.units import listing_key, scan_key, whole_table


def run_scans(
    spark: Any, plan: PurgePlan, scans: dict[str, dict[str, str]], cancellation: Any
) -> ScannedPlan:
    """A new plan with each table's partitions to rewrite (`todo`, rows_purged set) and its
    listing; `plan` is left as it was."""
    tables = plan.scanned
    found: dict[str, Future] = {}
    # the partitions of the tables the data skipping did not list, listed while the scans run
    unlisted = [t for t in tables if t.partitioned and t.listing is None]
    workers = max(1, min(plan.config.scan_parallelism, len(tables))) + (1 if unlisted else 0)
    with Pool(spark, workers) as pool:
        listed = pool.submit(listings_of, spark, unlisted) if unlisted else None
        for table in tables:
            found[table.name] = pool.submit(scan_table, spark, table, scans[table.name])
    try:
        listings = listed.result() if listed is not None else {}
    except Exception as exc:  # noqa: BLE001 - each table's FAILED row says why
        listings = {t.name: first_line(exc) for t in unlisted}
    scanned = []
    for table in plan.tables:
        if table.name not in found:
            scanned.append(replace(table))
            continue
        scanned.append(_scanned(spark, table, found[table.name], listings.get(table.name), cancellation))
    cancellation.check("after the scans, before any table was changed")
    result = ScannedPlan.of(plan, scanned)
    if plan.config.dry_run:
        rows_before(spark, result.rewriting)
    _say_skipping(result)
    return result


_ID_RANGE = re.compile(r"\bbetween\s+-?\d+\s+and\s+-?\d+", re.IGNORECASE)


def as_logged(sql: str) -> str:
    """A scan's SQL as the log may show it: the range it filters on is the smallest and the
    largest listed id, and no log line holds an id (docs/erasure.md)."""
    return _ID_RANGE.sub("between <smallest listed id> and <largest listed id>", sql)


def scan_table(spark: Any, table: TablePlan, sql: dict[str, str]) -> list[list[Any]]:
    """The rows of one table's scan: [partition values as strings..., rows holding an id]."""
    if table.scan != "files" or table.narrowed is None:
        console.debug(f"purge step scan ({table.name}):\n{as_logged(sql['table'])}")
        return [list(row) for row in spark.sql(sql["table"]).collect()]
    make_view(spark, table, table.scan_view, table.narrowed.files)
    try:
        console.debug(
            f"purge step scan ({table.name}, the files the footers left):\n{as_logged(sql['files'])}"
        )
        return [list(row) for row in spark.sql(sql["files"]).collect()]
    finally:
        spark.catalog.dropTempView(table.scan_view)


def make_view(spark: Any, table: TablePlan, view: str, files: dict[str, list[str]]) -> None:
    """A temporary view over only `files` ({partition spec: [path]}): the table's data columns
    read with its schema (as Spark reads the table), its partition columns as each partition's
    values, so that a statement reads it in place of the table."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    meta = metastore.session_catalog(spark).getTableMetadata(
        metastore.identifier(spark, table.database, table.table)
    )
    data_schema = StructType.fromJson(json.loads(str(meta.dataSchema().json())))
    partition_schema = StructType.fromJson(json.loads(str(meta.partitionSchema().json())))
    values = {part.path: {k.lower(): v for k, v in part.values} for part in (table.listing or [])}
    frames = []
    for spec, paths in files.items():
        frame = spark.read.format(table.storage_format).schema(data_schema).load(paths)
        for item in partition_schema.fields:
            value = values[spec][item.name.lower()]
            value = None if value == "__HIVE_DEFAULT_PARTITION__" else value
            frame = frame.withColumn(item.name, F.lit(value).cast(item.dataType))
        frames.append(frame)
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    union.createOrReplaceTempView(view)


def _scanned(
    spark: Any, table: TablePlan, scan: Future, listed: list[PartitionRewrite] | str | None, cancellation: Any
) -> TablePlan:
    """A copy of `table` with what its scan found (`_assign`), or with the error that fails it."""
    try:
        rows = scan.result()
    except Exception as exc:  # noqa: BLE001 - the table's FAILED row
        cancellation.check(f"the scan of {table.name} was stopped")
        return replace(table, error=f"Table {table.name}: the scan for listed ids failed: {first_line(exc)}")
    if isinstance(listed, str):
        return replace(
            table,
            error=f"Table {table.name}: its partitions could not be listed: {listed}; nothing was purged,"
            " run the purge again",
        )
    assigned = _assign(table, rows, listed)
    if assigned.error is not None:
        # a partition the listing does not hold: listed before the scan, it may have been added
        # since; the metastore is asked again before the table fails
        again = listings_of(spark, [table])[table.name]
        if isinstance(again, str):
            return assigned
        assigned = _assign(replace(table, listing=None), rows, again)
    console.debug(f"purge: {table.name}: the scan found ids in {len(assigned.todo)} partition(s)")
    return assigned


def _assign(table: TablePlan, rows: list[list[Any]], listed: list[PartitionRewrite] | None) -> TablePlan:
    """The scan's rows onto a copy of the table's partitions (the data skipping's listing, else
    `listed`): `todo` those holding ids, the rest skipped."""
    if not table.partitioned:
        unit = replace(whole_table(table), rows_purged=int(rows[0][-1]) if rows else 0)
        return replace(table, listing=[unit], todo=[unit] if unit.rows_purged > 0 else [])
    counts, missing = {}, []
    listed = table.listing if table.listing is not None else listed or []
    by_key = {listing_key(table, part): part for part in listed}
    for row in rows:
        part = by_key.get(scan_key(table, row[:-1]))
        if part is None:
            missing.append(
                "/".join(f"{c}={v}" for c, v in zip(table.partition_columns, row[:-1], strict=False))
            )
            continue
        counts[part.path] = int(row[-1])
    if missing:
        return replace(
            table,
            listing=list(listed),
            todo=[],
            error=f"Table {table.name}: the scan found listed ids in partition(s) {', '.join(missing)}, which the"
            " metastore does not list (a partition added without `alter table ... add partition`?): nothing was"
            " purged; register the partitions (`msck repair table`) and run the purge again",
        )
    listing = [replace(p, rows_purged=counts.get(p.path, p.rows_purged)) for p in listed]
    return replace(table, listing=listing, todo=[p for p in listing if p.path in counts])


def rows_before(spark: Any, tables: list[TablePlan]) -> None:
    """Each partition to rewrite gets its rows from its files' footers (Spark counts where they
    cannot be read)."""
    facts = FileFacts(spark)
    for table in tables:
        listed = facts.list([p.location for p in table.todo], recursive=not table.partitioned)
        for part in table.todo:
            part.rows_before = count_rows(
                spark,
                facts,
                (table.database, table.table),
                table.storage_format,
                part.values,
                listed[part.location],
            )


def count_rows(
    spark: Any,
    facts: FileFacts,
    name: tuple[str, str],
    storage_format: str | None,
    values: list[list[str]],
    listing: Any,
) -> int:
    """Rows of one partition (`values`; [] for an unpartitioned table) of the table `name` from
    its listed files' footers, or counted by Spark when the footers cannot say (another format,
    an unreadable footer, a sub-directory)."""
    if storage_format is not None and not listing.subdirectories and listing.error is None:
        footers = facts.footers([f.path for f in listing.files if f.size > 0], storage_format, None)
        if all(f.error is None and f.rows is not None for f in footers.values()):
            return sum(int(f.rows) for f in footers.values())
    frame = spark.table(metastore.table_name(*name))
    for column, value in values:
        frame = frame.where(
            frame[column].isNull() if value == "__HIVE_DEFAULT_PARTITION__" else frame[column] == value
        )
    return int(frame.count())


def _say_skipping(plan: ScannedPlan) -> None:
    for table in plan.tables:
        narrowed = table.narrowed
        if narrowed is None:
            continue
        ruled_out = narrowed.files_read - narrowed.files_left
        what = (
            f"the scan read {narrowed.files_left} file(s) in {len(narrowed.partitions)} partition(s)"
            if narrowed.files_left
            else "no file can hold a listed id, nothing was scanned"
        )
        console.say(
            f"purge: {table.name}: the footers' min/max rule out {ruled_out} of {narrowed.files_read} file(s): {what}"
        )


__all__ = ["CancelledError", "run_scans", "make_view", "count_rows"]
