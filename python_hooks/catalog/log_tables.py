"""Append-only log tables the product keeps beside the data (purge_log, stale_data_records):
made when missing, appended as one parquet file per write.

The rows are few (one per partition and run); a Spark insert of them costs a job, a commit
protocol and a refresh.  `parquet_append` writes them as one file through the Hadoop FileSystem
(every filesystem), and Spark's writer takes over where it does not apply (another layout,
a value its column does not hold as given).
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import metastore, parquet_append
from python_hooks.errors import StatementError


def ensure(spark: Any, database: str, table: str, columns: list[tuple[str, str]]) -> None:
    """`create table if not exists` with these columns, as parquet, in its database (made when
    missing too); asked of the catalog first: no statement when it exists."""
    if metastore.table_exists(spark, database, table):
        return
    spark.sql(f"create database if not exists {metastore.quote(database)}")
    spark.sql(
        f"create table if not exists {metastore.table_name(database, table)} ("
        + ", ".join(f"{metastore.quote(name)} {kind}" for name, kind in columns)
        + ") using parquet"
    )


def append(
    spark: Any,
    database: str,
    table: str,
    columns: list[tuple[str, str]],
    rows: list[dict[str, Any]],
    meta: Any = None,
) -> str:
    """Append `rows` (dicts keyed by column) to the table, making it when missing (even for no
    rows); returns which writer wrote them ("parquet file", "spark insert" or "nothing").
    `meta`: the table's CatalogTable when the caller has it (`metastore.tables_by_names`): no
    catalog call."""
    if meta is None:
        ensure(spark, database, table, columns)
    if not rows:
        return "nothing"
    if meta is None:
        meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    fields = metastore.schema_fields(meta)
    found = [str(f["name"]).lower() for f in fields]
    if found != [name.lower() for name, _ in columns]:
        raise StatementError(
            f"{database}.{table} has the columns {', '.join(found)}, not {', '.join(n for n, _ in columns)}:"
            " it is not this product's table (rename or drop it, and run again)"
        )
    data = [tuple(row.get(str(field["name"])) for field in fields) for row in rows]
    if parquet_append.append_rows(spark, meta, fields, data):
        return "parquet file"
    from pyspark.sql.types import StructType

    schema = StructType.fromJson({"type": "struct", "fields": fields})
    spark.createDataFrame(data, schema).write.insertInto(metastore.table_name(database, table))
    return "spark insert"


def existing(spark: Any, database: str, table: str, column: str, values: list[str]) -> set[str]:
    """Which of `values` the table's `column` already holds (none when the table is missing)."""
    if not values or not metastore.table_exists(spark, database, table):
        return set()
    from pyspark.sql import functions as F

    frame = spark.table(metastore.table_name(database, table))
    found = frame.where(F.col(column).isin(list(values))).select(column).distinct().collect()
    return {str(row[0]) for row in found}
