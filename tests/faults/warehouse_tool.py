"""The harness's own Spark process: set up a scenario's tables, or read the warehouse back.

    python -m tests.faults.warehouse_tool <warehouse> <metastore> < request.json

It opens the warehouse and Derby metastore exactly as the `local` target does (same settings,
separate process: Derby embedded allows one process at a time, so the harness never runs it
beside dbt).  The request is JSON: `{"sql": [...]}` runs statements in order; `{"inspect":
[databases]}` answers, for every table of those databases, its type, location, partitions and
every row (all columns, nested fields included), or the error reading it raised.  The answer is
one JSON document on stdout after the line `--- result ---`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARK = "--- result ---"


def session(warehouse: str, metastore: str) -> Any:
    from dbt.adapters.lakehouse.connections import session_parameters
    from dbt.adapters.lakehouse.driver import DRIVER

    return DRIVER.session(
        session_parameters(
            {
                "spark.master": "local[2]",
                "spark.app.name": "dbt-lakehouse-faults-tool",
                "spark.driver.memory": "1g",
                "spark.sql.warehouse.dir": warehouse,
                "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore};create=true",
                "spark.sql.shuffle.partitions": "2",
                "spark.sql.sources.partitionOverwriteMode": "dynamic",
                "spark.sql.hive.convertMetastoreParquet": "true",
                "spark.sql.hive.convertMetastoreOrc": "true",
            }
        )
    )


def plain(value: Any) -> Any:
    """A row value as JSON: structs as dicts, everything else by str when JSON cannot hold it."""
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _seq(seq: Any) -> list[Any]:
    items, iterator = [], seq.iterator()
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def _scala_map(mapping: Any) -> dict[Any, Any]:
    result, iterator = {}, mapping.iterator()
    while iterator.hasNext():
        pair = iterator.next()
        result[pair._1()] = pair._2()
    return result


def inspect_table(spark: Any, database: str, name: str) -> dict[str, Any]:
    """The catalog's view of a table (through Spark's own catalog, not the product's code) and its rows."""
    found: dict[str, Any] = {"database": database, "table": name}
    try:
        jvm = spark._jvm
        catalog = spark._jsparkSession.sharedState().externalCatalog()
        meta = catalog.getTable(database, name)
        columns = [str(c) for c in _seq(meta.partitionColumnNames())]
        found.update(
            location=str(meta.location()) if meta.storage().locationUri().isDefined() else None,
            table_type=str(meta.tableType().name()),
            provider=str(meta.provider().get()) if meta.provider().isDefined() else None,
            partition_columns=columns,
            properties={str(k): str(v) for k, v in _scala_map(meta.properties()).items()},
        )
        partitions = {}
        if columns:
            for part in _seq(catalog.listPartitions(database, name, jvm.scala.Option.empty())):
                spec = part.spec()
                key = "/".join(f"{c}={spec.get(c).get()}" for c in columns)
                partitions[key] = str(part.location())
        found["partitions"] = partitions
    except Exception as exc:  # noqa: BLE001 - reported, the test decides
        found["describe_error"] = str(exc)[:2000]
    qualified = f"`{database}`.`{name}`"
    try:
        frame = spark.table(qualified)
        rows = [plain(r) for r in frame.collect()]
        found["rows"] = rows
        found["count"] = int(spark.sql(f"select count(*) from {qualified}").collect()[0][0])
    except Exception as exc:  # noqa: BLE001
        found["read_error"] = str(exc)[:2000]
    return found


def main() -> None:
    warehouse, metastore_dir = sys.argv[1], sys.argv[2]
    request = json.load(sys.stdin)
    spark = session(warehouse, metastore_dir)
    answer: dict[str, Any] = {}
    for statement in request.get("sql", []):
        spark.sql(statement)
    if "inspect" in request:
        tables = []
        existing = {r[0] for r in spark.sql("show databases").collect()}
        for database in request["inspect"]:
            if database not in existing:
                continue
            for row in spark.sql(f"show tables in `{database}`").collect():
                if not row.isTemporary:
                    tables.append(inspect_table(spark, database, row.tableName))
        answer["tables"] = tables
    print(MARK)
    print(json.dumps(answer, default=str))
    sys.stdout.flush()
    spark.stop()


if __name__ == "__main__":
    main()
