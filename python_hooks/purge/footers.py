"""What a data file's footer tells the purge about its identifier, read as Spark reads it.

The one rule (file_facts.may_hold) is applied by skipping.py before the scan and by `split` in
the rewrite; `footer_bounds` gives the id table's range from its footers without a Spark job.
A footer decides only for integral identifiers of the id column's kind, in files Spark reads
with its own parquet/ORC reader matched by name, the identifier not a partition column
(`bounds_for`); everything else is read.  The footers are read through the Hadoop FileSystem
(file_facts.py), so local disk, HDFS, S3 and the cluster target get the same answers.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.file_facts import FileFacts, Listing, integral, may_hold
from python_hooks.purge.plan import INTEGRAL, IdSource, TablePlan


def reads_like_the_table(spark: Any, meta: Any, storage_format: str) -> bool:
    """Spark reads the table with its own parquet/ORC reader, matching columns by name: what the
    footers say of a column is then what Spark reads of it.  With parquet field ids read
    (`spark.sql.parquet.fieldId.read.enabled`, which Delta Lake's session turns on) Spark matches
    a column by its id only when the table's schema gives it one (`parquet.field.id`): a table
    whose schema carries any is read from its files."""
    if str(spark.conf.get("spark.sql.parquet.fieldId.read.enabled", "false")).lower() == "true":
        if "parquet.field.id" in str(meta.schema().json()):
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
