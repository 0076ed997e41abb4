"""Append a few rows to an unpartitioned parquet table as one new data file: no Spark job.

A Spark `insertInto` of a handful of rows costs a job, the commit protocol and a metastore
refresh (300 ms to 1 s each on a 2-core machine); the audit hooks write five tables on every dbt
command.  Here the rows become one parquet file in memory (pyarrow), written through the
session's Hadoop FileSystem to a hidden temporary name in the table's directory and renamed to a
`part-` name (`files.publish_file`), so a reader sees the whole file or none of it.  Then the
table's cached file listing is refreshed.  The same code serves local disk, HDFS and object
stores, as the purge's JSON results table does (`json_table.py`).

The file is laid out as Spark writes the table: its column names and order, snappy
compression, timestamps as INT96 (Spark's default, for Hive compatibility).  Anything else (a
partitioned or bucketed table, another format, a view, a column type this module does not map,
a value that does not fit its column, pyarrow missing) returns False and the caller uses
Spark's writer.

    append_rows(spark, meta, metastore.schema_fields(meta), rows) -> bool   # rows in the fields' order
"""

from __future__ import annotations

import io
import uuid
from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog.files import publish_file, storage_format
from python_hooks.catalog.jvm import jvm as jvm_view
from python_hooks.catalog.metastore import session_catalog


def _arrow_type(pa: Any, spark_type: Any) -> Any:
    """The arrow type for a Spark type (its JSON form), or None when this module does not map it."""
    if isinstance(spark_type, dict):
        if spark_type.get("type") == "array" and spark_type.get("elementType") == "string":
            return pa.list_(pa.string())
        return None
    return {
        "string": pa.string(),
        "long": pa.int64(),
        "integer": pa.int32(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }.get(spark_type)


def _instant(value: Any) -> Any:
    """A datetime as an aware UTC instant (a naive one is local time, as Spark's Python reader takes it)."""
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    return value


def _eligible(meta: Any) -> bool:
    """An unpartitioned, unbucketed parquet table (Spark's or Hive's format)."""
    if meta.partitionColumnNames().nonEmpty() or meta.bucketSpec().isDefined():
        return False
    return str(meta.tableType().name()) != "VIEW" and storage_format(meta) == "parquet"


def append_rows(spark: Any, meta: Any, fields: list[dict[str, Any]], rows: list[tuple[Any, ...]]) -> bool:
    """Append `rows` (tuples, values in the order of `fields`) to the table `meta` as one parquet file.

    `meta` is the table's CatalogTable and `fields` its `metastore.schema_fields`.  Returns False, having
    written nothing, when the table, a column type or a value is not one this module writes;
    raises on a filesystem error (nothing visible was written: the temporary file is hidden and
    removed).
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    types = [_arrow_type(pa, field["type"]) for field in fields]
    if any(t is None for t in types) or not _eligible(meta):
        return False
    try:
        columns = [
            pa.array([_instant(row[i]) for row in rows], type=arrow_type)
            for i, arrow_type in enumerate(types)
        ]
    except (pa.ArrowException, TypeError, ValueError):
        return False  # a value the column's type does not hold as given: Spark's writer casts it
    buffer = io.BytesIO()
    pq.write_table(
        pa.Table.from_arrays(columns, names=[field["name"] for field in fields]),
        buffer,
        compression="snappy",
        use_deprecated_int96_timestamps=True,
    )
    directory = jvm_view(spark).org.apache.hadoop.fs.Path(meta.location())
    publish_file(spark, directory, f"part-00000-{uuid.uuid4()}-c000.snappy.parquet", buffer.getvalue())
    session_catalog(spark).refreshTable(meta.identifier())
    return True
