"""Append a few rows to an unpartitioned parquet table as one new data file: no Spark job.

A Spark `insertInto` of a handful of rows costs a job, the commit protocol and a metastore
refresh; the audit hooks write five tables on every dbt
command.  Here the rows become one parquet file in memory (pyarrow), written through the
session's Hadoop FileSystem to a hidden temporary name in the table's directory and renamed to a
`part-` name (`files.publish_file`), so a reader sees the whole file or none of it.  Then the
table's cached file listing is refreshed.  The same code serves local disk, HDFS and object
stores, as the purge's JSON results table does (`json_table.py`).

The file is laid out as Spark writes the table: its column names and order, snappy
compression, timestamps as INT96 (Spark's default, for Hive compatibility).  The rows reach
arrow as JSON lines parsed against the table's schema (pyarrow's JSON reader), not through
`pa.array` on Python values: that conversion imports pandas on first use, a cost of the first
audit write of every dbt command.  Anything else (a
partitioned or bucketed table, another format, a view, a column type this module does not map,
a value that does not fit its column, pyarrow missing) returns False and the caller uses
Spark's writer.

    append_rows(spark, meta, metastore.schema_fields(meta), rows) -> bool   # rows in the fields' order
"""

from __future__ import annotations

import io
import json
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


def _json_value(value: Any) -> Any:
    """A value as the JSON reader parses it into its column: a datetime as an ISO-8601 UTC
    instant with microseconds (a naive one is local time, as Spark's Python reader takes it)."""
    if isinstance(value, datetime):
        v = value.astimezone(timezone.utc)
        return (
            f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
            f".{v.microsecond:06d}Z"
        )
    return value


def _arrow_table(pa: Any, names: list[str], types: list[Any], rows: list[tuple[Any, ...]]) -> Any:
    """The rows as an arrow table of the given columns (JSON lines read with an explicit schema)."""
    import pyarrow.json as pa_json

    lines = "".join(
        json.dumps(
            {name: _json_value(value) for name, value in zip(names, row, strict=True)}, ensure_ascii=False
        )
        + "\n"
        for row in rows
    ).encode("utf-8")
    schema = pa.schema(list(zip(names, types, strict=True)))
    return pa_json.read_json(
        io.BytesIO(lines),
        read_options=pa_json.ReadOptions(use_threads=False, block_size=max(len(lines), 1 << 20)),
        parse_options=pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
    )


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
    names = [str(field["name"]) for field in fields]
    try:
        table = _arrow_table(pa, names, types, rows)
    except (pa.ArrowException, TypeError, ValueError):  # (UnicodeError is a ValueError)
        return False  # a value the column's type does not hold as given: Spark's writer casts it
    if table.num_rows != len(rows):
        return False
    buffer = io.BytesIO()
    pq.write_table(
        table,
        buffer,
        compression="snappy",
        use_deprecated_int96_timestamps=True,
    )
    directory = jvm_view(spark).org.apache.hadoop.fs.Path(meta.location())
    publish_file(spark, directory, f"part-00000-{uuid.uuid4()}-c000.snappy.parquet", buffer.getvalue())
    session_catalog(spark).refreshTable(meta.identifier())
    return True
