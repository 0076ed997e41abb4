"""The hourly compaction's completion records and log, written in one pass after the overwrite.

The post-hook ran two `insert ... select` statements: the plan joined to a count over the
published partitions into `compaction_watermarks`, then the plan into `compaction_log`.  Each
is a Spark job with its commit protocol and a metastore refresh, most of the post-hook's
time.  Here:

- the plan (one row per hour of the window, a few dozen) is read once (`read_plan`);
- the rows of each published hour come from the footers of its partition's data files (one
  listing of the output's partitions, their footers read in one batched call through the
  Hadoop FileSystem, catalog/file_facts.py); an hour whose files cannot be
  counted that way (another format, a sub-directory, an unreadable footer) is counted by one
  Spark query, with every other such hour;
- the completion records and the log rows are appended as one parquet file each
  (`catalog.parquet_append`), or by Spark's writer where that does not apply.

The completion records are written before the log, as the statements were: a run that dies
between them has published and recorded its hours and only misses their log rows.

    plan = read_plan(spark, "db", "t__plan")
    record_completion(spark, plan, output=("db", "t"), watermarks=("db", "compaction_watermarks"),
                      log=("db", "compaction_log"), late_counts_sql=None)
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog import files, metastore, parquet_append
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.jvm import scala_list

# the actions that publish an hour, and those that write a completion record
PUBLISHING = ("compact", "recompact")
COMPLETING = ("compact", "recompact", "copy_late")


def read_plan(spark: Any, database: str, table: str) -> list[dict[str, Any]]:
    """Every row of the plan table, as dicts (one small Spark job)."""
    name = metastore.table_name(database, table)
    return [row.asDict() for row in spark.table(name).collect()]


def _hour_key(ds: Any, hr: Any) -> tuple[str, str]:
    return (str(ds), str(hr))


def published_rows(
    spark: Any, database: str, table: str, hours: list[tuple[str, str]]
) -> tuple[dict[tuple[str, str], int], str]:
    """Rows of each of `hours` (ds, hr) in the partitioned output table, and how they were counted.

    Footers first; the hours they cannot count go to one Spark `count(*) ... group by`.  An hour
    without a partition holds no rows.
    """
    counts: dict[tuple[str, str], int] = {}
    if not hours:
        return counts, "none"
    wanted = set(hours)
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    storage_format = files.storage_format(meta)
    located: dict[tuple[str, str], str] = {}
    if {str(c) for c in scala_list(meta.partitionColumnNames())} != {"ds", "hr"}:
        storage_format = None  # not one partition per hour: Spark counts every hour
        located = {key: "" for key in hours}
    else:
        for pairs, location in metastore.partition_locations(spark, database, table, ["ds", "hr"]):
            key = _hour_key(pairs[0][1], pairs[1][1])
            if key in wanted:
                located[key] = location
    unknown: list[tuple[str, str]] = []
    footer_rows = (
        FileFacts(spark).rows([located[key] for key in hours if key in located], storage_format)
        if storage_format is not None
        else {}
    )
    for key in hours:
        if key not in located:
            counts[key] = 0
        elif footer_rows.get(located[key]) is None:
            unknown.append(key)  # another format, a sub-directory or an unreadable footer: Spark counts it
        else:
            counts[key] = int(footer_rows[located[key]] or 0)
    if unknown:
        from pyspark.sql import functions as F

        frame = spark.table(metastore.table_name(database, table))
        hour = F.concat_ws("\u0000", F.col("ds").cast("string"), F.col("hr").cast("string"))
        keys = ["\u0000".join(key) for key in unknown]
        for row in frame.where(hour.isin(keys)).groupBy(hour.alias("hour")).count().collect():
            ds, _, hr = str(row["hour"]).partition("\u0000")
            counts[(ds, hr)] = int(row["count"])
        for key in unknown:
            counts.setdefault(key, 0)
    return counts, "footers" if not unknown else f"footers, Spark for {len(unknown)} hour(s)"


def _fit(value: Any, spark_type: Any) -> Any:
    """A plan value as its log column takes it, as an insert's cast would: a sum over an
    input's `decimal` expected counts into a `bigint` column, say."""
    if value is None:
        return None
    if spark_type in ("long", "integer") and not isinstance(value, int):
        return int(value)
    if spark_type == "string" and not isinstance(value, str):
        return str(value)
    return value


def append(spark: Any, database: str, table: str, rows: list[dict[str, Any]]) -> str:
    """Append `rows` (dicts keyed by column name) to an existing table: one parquet file, or
    Spark's writer where the file append does not apply.  Returns which one wrote them."""
    if not rows:
        return "nothing"
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    fields = metastore.schema_fields(meta)
    data = [tuple(_fit(row.get(str(field["name"])), field["type"]) for field in fields) for row in rows]
    if parquet_append.append_rows(spark, meta, fields, data):
        return "parquet file"
    from pyspark.sql.types import StructType

    schema = StructType.fromJson({"type": "struct", "fields": fields})
    spark.createDataFrame(data, schema).write.insertInto(metastore.table_name(database, table))
    return "spark insert"


def record_completion(
    spark: Any,
    plan: list[dict[str, Any]],
    output: list[str],
    watermarks: list[str],
    log: list[str],
    late_counts_sql: str | None = None,
) -> dict[str, Any]:
    """Write the completion records of the plan's compact, recompact and copy_late hours, then
    log every row of the plan.  `output`, `watermarks` and `log` are [database, table].

    `rows_out` of a published hour is the rows of its output partition; of a copy_late hour, its
    row in `late_counts_sql` (the late rows copied, per ds and hr), else 0.  Returns the step
    timings and counts, for the run's log.
    """
    steps: dict[str, float] = {}
    started = time.perf_counter()
    now = datetime.now(timezone.utc)
    completing = [row for row in plan if row["action"] in COMPLETING]
    published = [_hour_key(row["ds"], row["hr"]) for row in completing if row["action"] in PUBLISHING]
    counts, counted_by = published_rows(spark, output[0], output[1], published)
    late: dict[tuple[str, str], int] = {}
    if late_counts_sql and any(row["action"] == "copy_late" for row in completing):
        for ds, hr, rows_out in spark.sql(late_counts_sql).collect():
            late[_hour_key(ds, hr)] = int(rows_out)
    steps["rows out"] = time.perf_counter() - started
    records = [
        {
            **row,
            "partition": f"ds={row['ds']}/hr={row['hr']}",
            "rows_out": (late if row["action"] == "copy_late" else counts).get(
                _hour_key(row["ds"], row["hr"]), 0
            ),
            "recorded_at": now,
        }
        for row in completing
    ]
    mark = time.perf_counter()
    records_by = append(spark, watermarks[0], watermarks[1], records)
    steps["completion records"] = time.perf_counter() - mark
    mark = time.perf_counter()
    log_by = append(spark, log[0], log[1], [{**row, "logged_at": now} for row in plan])
    steps["log"] = time.perf_counter() - mark
    return {
        "completion_records": len(records),
        "logged": len(plan),
        "rows_out_from": counted_by,
        "written_by": {"completion records": records_by, "log": log_by},
        "steps": {name: round(seconds, 3) for name, seconds in steps.items()},
    }
