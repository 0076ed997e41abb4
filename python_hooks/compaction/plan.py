"""The hourly compaction's plan: computed by one query, kept as `<model>__plan`, read back once.

The plan is a few dozen rows (one per hour of the window), but it was written by `create table
... as select`: a write job with its commit protocol and a metastore refresh on top of the
query, a large part of the step.  Here the query's rows
are collected, the table is made from the query's schema (metadata only) and the rows are
appended as one parquet file (`records.append`: no Spark job; Spark's writer where a column
type needs it).  The table holds exactly what `create table ... as` would have put in it.

The post-hook of the same node reads the rows again from the table (`records.read_plan`, one
small query): nothing is kept in this process between the hooks.

    write_plan(spark, "db", "t__plan", sql) -> {rows, written_by}
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import metastore
from python_hooks.compaction.records import append


def write_plan(spark: Any, database: str, table: str, sql: str) -> dict[str, Any]:
    """Run the plan query `sql` and replace the table `database.table` with its rows.

    The old table is dropped and a new one made with the query's columns (every column
    nullable, as `create table ... as select` makes them), then the rows are appended as one
    parquet file.  Returns {rows, written_by} for the run's log; raises on any failure (the
    pre-hook fails, and the model with it, before anything is published).
    """
    frame = spark.sql(sql)
    rows = [row.asDict() for row in frame.collect()]
    name = metastore.table_name(database, table)
    columns = ", ".join(
        f"{metastore.quote(field.name)} {field.dataType.simpleString()}" for field in frame.schema.fields
    )
    spark.sql(f"drop table if exists {name}")
    spark.sql(f"create table {name} ({columns}) using parquet")
    written_by = append(spark, database, table, rows)
    return {"rows": len(rows), "written_by": written_by}
