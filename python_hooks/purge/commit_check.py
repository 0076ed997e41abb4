"""The purge's commit check: a fingerprint and a footer row count of each location, before and after.

Gobblin's commit check compares the fingerprint of a partition's data files before the rewrite
and again before the swap; the footer row counts spare a Spark job per partition.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse import filesystem

from python_hooks.catalog import files as data_files
from python_hooks.catalog import metastore
from python_hooks.catalog.jvm import scala_list
from python_hooks.purge import file_level


def location_snapshots(
    spark: Any,
    database: str,
    table: str,
    locations: list[str],
    exclude: str | None = None,
    count_rows: bool = True,
    skip_by: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """For each location of `database.table`: {fingerprint, rows, clean, candidates}; never raises.

    `fingerprint` is the adapter's `filesystem.digest` of the data files' paths, sizes and
    modification times, recursively
    (Gobblin's commit check compares it before the rewrite and before the swap); `rows` is the
    row count read from the footers of the files Spark reads there, or None when the table is not
    parquet or ORC, a partition has a sub-directory, a footer cannot be read, or `count_rows` is
    false (the caller then counts with Spark SQL).  A location that cannot be listed gets
    fingerprint None.

    With `skip_by` ({path: the identifier's field path, bounds: purge_id_bounds}) the same footer
    read also sorts a partition's files (python_hooks/purge/file_level.py): `clean` lists the
    paths of the files whose statistics rule out every listed id (copied, not rewritten) and
    `candidates` the others; both stay empty when the footers were not read that way.
    """
    storage_format = None
    partitioned = True
    bucketed = False
    if count_rows:
        try:
            meta = metastore.session_catalog(spark).getTableMetadata(
                metastore.identifier(spark, database, table)
            )
            storage_format = data_files.storage_format(meta)
            partitioned = bool(scala_list(meta.partitionColumnNames()))
            bucketed = bool(meta.bucketSpec().isDefined())
        except Exception:  # noqa: BLE001 - rows stay unknown; the caller counts with Spark SQL
            storage_format = None
    # a bucketed table's files are named after their buckets (Hive wants one file per bucket):
    # its partitions are rewritten whole
    bounds = file_level.usable_bounds(skip_by.get("bounds")) if skip_by and not bucketed else None
    snapshots: dict[str, dict[str, Any]] = {}
    for location in locations:
        try:
            files = data_files.data_files(spark, location, exclude)
        except Exception:  # noqa: BLE001 - an unlistable location fails the commit check
            snapshots[location] = {"fingerprint": None, "rows": None, "clean": [], "candidates": []}
            continue
        rows = None
        clean: list[Any] = []
        candidates: list[Any] = []
        read = data_files.read_files(spark, location, files, recursive=not partitioned)
        if storage_format is not None and read is not None:
            try:
                if bounds is not None and partitioned:
                    rows, clean, candidates = file_level.split_files(
                        spark, read, storage_format, list(skip_by["path"]), bounds
                    )
                else:
                    rows = data_files.footer_rows(spark, read, storage_format)
            except Exception:  # noqa: BLE001 - an unreadable footer: the caller counts with Spark
                rows, clean, candidates = None, [], []
        fingerprint = filesystem.digest(
            (str(status.getPath().toString()), int(status.getLen()), int(status.getModificationTime()))
            for status in files
        )
        snapshots[location] = {
            "fingerprint": fingerprint,
            "rows": rows,
            "clean": [str(status.getPath().toString()) for status in clean],
            "candidates": [str(status.getPath().toString()) for status in candidates],
        }
    return snapshots
