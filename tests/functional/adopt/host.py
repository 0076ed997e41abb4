"""A user's own dbt project that adopts the product, as docs/adopt.md tells: its files, its lake,
and the two programs the host-project test runs with the venv's Python.

    python host.py lake <warehouse> <metastore>   # the tables the user's lake already holds, and its state
    python host.py dbt <dbt args ...>             # `dbt <args>` in this process, then the lake's state

The second runs the command with dbt's own programmatic entry point (what the `dbt` script runs),
then, in the same process and Spark session, prints one line `HOST_STATE <json>`: every table's
partitions, locations, descriptor and rows, every data file under the warehouse with its hash,
and the product's logs.  Reading the state costs no Spark start of its own.  It imports nothing
from the repository: it runs against the installed distribution only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

# ---- the user's project ------------------------------------------------------------------------
PROJECT = "shop_analytics"
SCHEMA = "analytics"  # the profile's target schema: the user's marts and the product's tables
LAKE_TABLES = ["sales.orders", "crm.contacts"]
MART = f"{SCHEMA}.customer_revenue"
ID_TABLE = "privacy.erasure_ids"
WATCHED = LAKE_TABLES + [MART, ID_TABLE]

# (order_id, customer_id, amount, order_date): customer 3 only on 2024-01-02; 7 and 8 on
# 2024-01-01 and 2024-01-02; 2024-01-03 holds no listed id
ORDERS = [
    (1, 1, 10.0, "2024-01-01"),
    (2, 7, 20.0, "2024-01-01"),
    (3, 2, 30.0, "2024-01-01"),
    (4, 3, 40.0, "2024-01-02"),
    (5, 8, 50.0, "2024-01-02"),
    (6, 4, 60.0, "2024-01-02"),
    (7, 5, 70.0, "2024-01-03"),
    (8, 6, 80.0, "2024-01-03"),
]
# (person.id, person.name, email)
CONTACTS = [
    (1, "Ada", "ada@example.com"),
    (3, "Cy", "cy@example.com"),
    (7, "Gil", "gil@example.com"),
    (9, "Ivy", "ivy@example.com"),
]
# (subject_id, request_id, requested_at): the ids to erase, with their requests, received in the
# last days (requested_at sets the 30-day deadline: docs/adopt.md step 4)
_RECEIVED = datetime.now(timezone.utc).replace(microsecond=0)
ERASURE_IDS = [
    (3, "REQ-1", (_RECEIVED - timedelta(days=2)).strftime("%Y-%m-%d %H:%M:%S")),
    (7, "REQ-2", (_RECEIVED - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")),
    (8, "REQ-2", (_RECEIVED - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")),
]
ERASED = {3, 7, 8}
RESTORED_PARTITION = "order_date=2024-01-02"

DBT_PROJECT = f"""
name: {PROJECT}
version: "1.0.0"
config-version: 2
profile: shop

models:
  {PROJECT}:
    +materialized: table
    +file_format: parquet
"""

# step 4 of docs/adopt.md: what the product reads
VARS = """
vars:
  compliance_id_table: privacy.erasure_ids
  compliance_id_column: subject_id
  purge_whitelist: "sales, crm.contacts, analytics.customer_revenue"
  purge_depends_on: ["sales.orders", "crm.contacts", "customer_revenue"]
"""

SOURCES = """
version: 2

sources:
  - name: sales
    description: Orders as the shop's backend writes them.
    schema: sales
    tables:
      - name: orders
        description: One row per order, partitioned by order_date; customer_id identifies the person.
  - name: crm
    description: The CRM's export.
    schema: crm
    tables:
      - name: contacts
        description: One row per contact; person.id identifies the person.
"""

MART_SQL = """
select customer_id, count(*) as orders, sum(amount) as revenue
from {{ source('sales', 'orders') }}
group by customer_id
"""

# step 6: a table dbt builds is onboarded in its config, so that every rebuild keeps the descriptor
MART_YML = """
version: 2

models:
  - name: customer_revenue
    description: Revenue per customer.
    config:
      tblproperties:
        dataset.descriptor: '{"complianceSpec": {"identifierField": "customer_id"}}'
    columns:
      - name: customer_id
        description: The customer.
        data_tests: [unique, not_null]
"""

# step 12 of docs/adopt.md: what the coverage gate finds, a table of each kind
STORE_LOCATIONS = "id,city\n1,Lyon\n2,Porto\n"
DAILY_REVENUE_SQL = """
select order_date, sum(amount) as revenue
from {{ source('sales', 'orders') }}
group by order_date
"""
# step 13: the user's own exceptions seed, and the var that names it
COVERAGE_EXCEPTIONS = (
    "table_pattern,reason\n"
    "analytics.store_locations,store ids: no person\n"
    "analytics.daily_revenue,daily sums over every customer: no customer id\n"
)
EXCEPTIONS_VAR = "  pii_coverage_exceptions: coverage_exceptions\n"

# step 6: the tables the lake already holds, onboarded from a list
ONBOARDING = """
tables:
  - table: sales.orders
    identifier: customer_id
  - table: crm.contacts
    identifier: person.id
"""


def profile(warehouse: str, metastore: str) -> str:
    """Step 2: the user's profile, the embedded default on their own warehouse."""
    return f"""
shop:
  target: dev
  outputs:
    dev:
      type: lakehouse
      method: session
      host: localhost
      schema: {SCHEMA}
      threads: 1
      server_side_parameters:
        spark.master: "local[2]"
        spark.driver.memory: 1g
        spark.sql.warehouse.dir: "{warehouse}"
        spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={metastore};create=true"
        spark.sql.shuffle.partitions: "2"
        spark.sql.sources.partitionOverwriteMode: dynamic
"""


def packages(checkout: str) -> str:
    """Step 3: the dbt package, from the same checkout pip installed the runtime from."""
    return f"packages:\n  - local: {checkout}\n"


# ---- the programs the test runs with the venv's Python ----------------------------------------
def _session(warehouse: str, metastore: str) -> Any:
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("the user's lake")
        .config("spark.sql.warehouse.dir", warehouse)
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={metastore};create=true"
        )
        .config("spark.ui.enabled", "false")
        .enableHiveSupport()
        .getOrCreate()
    )


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def make_lake(warehouse: str, metastore: str) -> None:
    """What the user's lake holds before the product arrives: Hive tables written by other tools."""
    spark = _session(warehouse, metastore)
    for database in ("sales", "crm", "privacy"):
        spark.sql(f"create database if not exists {database}")
    spark.sql(
        "create table sales.orders (order_id bigint, customer_id bigint, amount double)"
        " partitioned by (order_date string) stored as parquet"
    )
    spark.sql(
        "insert into sales.orders partition (order_date) values "
        + ", ".join(f"({o}, {c}, {a}, '{d}')" for o, c, a, d in ORDERS)
    )
    spark.sql(
        "create table crm.contacts (person struct<id: bigint, name: string>, email string) stored as orc"
    )
    spark.sql(
        "insert into crm.contacts values "
        + ", ".join(
            f"(named_struct('id', {i}L, 'name', {_literal(n)}), {_literal(e)})" for i, n, e in CONTACTS
        )
    )
    spark.sql(
        "create table privacy.erasure_ids (subject_id bigint, request_id string, requested_at timestamp) stored as parquet"
    )
    spark.sql(
        "insert into privacy.erasure_ids values "
        + ", ".join(f"({i}, {_literal(r)}, timestamp {_literal(t)})" for i, r, t in ERASURE_IDS)
    )
    print("HOST_STATE " + json.dumps(state(spark, warehouse)), flush=True)
    spark.stop()


def _files(warehouse: str) -> dict[str, str]:
    found = {}
    for top, _, names in os.walk(warehouse):
        for name in names:
            if name.startswith((".", "_")) or name.endswith(".crc"):
                continue
            path = os.path.join(top, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, warehouse)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def _query(spark: Any, sql: str) -> list[dict[str, Any]] | None:
    try:
        return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]
    except Exception:  # noqa: BLE001 - a log table not built yet
        return None


def state(spark: Any, warehouse: str) -> dict[str, Any]:
    """The lake as a reader sees it, read from Spark's external catalog and the files."""
    external = spark._jsparkSession.sharedState().externalCatalog()
    no_filter = spark._jvm.scala.Option.empty()
    tables: dict[str, Any] = {}
    side_tables: list[str] = []
    for database in ("sales", "crm", "privacy", SCHEMA):
        if not external.databaseExists(database):
            continue
        names = external.listTables(database)
        for i in range(names.size()):
            name = f"{database}.{names.apply(i)}"
            if any(f"_{kind}_" in name for kind in ("backup", "staging", "trash")):
                side_tables.append(name)
            if name not in WATCHED:
                continue
            meta = external.getTable(database, names.apply(i))
            columns = [
                meta.partitionColumnNames().apply(j) for j in range(meta.partitionColumnNames().size())
            ]
            partitions = {}
            if columns:
                parts = external.listPartitions(database, names.apply(i), no_filter)
                for j in range(parts.size()):
                    part = parts.apply(j)
                    spec = "/".join(f"{c}={part.spec().apply(c)}" for c in columns)
                    partitions[spec] = str(part.location())
            descriptor = meta.properties().get("dataset.descriptor")
            spark.catalog.refreshTable(name)
            rows = spark.sql(f"select to_json(struct(*)) from {name}").collect()
            tables[name] = {
                "location": str(meta.location()),
                "partitions": partitions,
                "descriptor": descriptor.get() if descriptor.isDefined() else None,
                "rows": sorted(r[0] for r in rows),
            }
    return {
        "tables": tables,
        "side_tables": sorted(side_tables),
        "files": _files(warehouse),
        "purge_log": _query(
            spark,
            f"select invocation_id, database_name, table_name, partition_spec, state, rows_purged from {SCHEMA}.purge_log",
        ),
        "retention_log": _query(
            spark,
            f"select invocation_id, kind, action, database_name, table_name, location, files_deleted, succeeded,"
            f" dry_run from {SCHEMA}.retention_log",
        ),
        "erasure_requests": _query(
            spark,
            f"select request_id, status, progress, live_holding, copies_holding from {SCHEMA}.erasure_requests",
        ),
        "pii_coverage": _query(
            spark, f"select table_id, finding, status, exception_reason from {SCHEMA}.pii_coverage"
        ),
        "invocations": _query(
            spark, f"select invocation_id, command, status from {SCHEMA}.dbt_invocations order by started_at"
        ),
        "column_lineage": _query(
            spark, f"select model_unique_id, column_name from {SCHEMA}.dbt_column_lineage"
        ),
    }


def run_dbt(args: list[str]) -> int:
    """`dbt <args>` in this process (dbt's programmatic entry point), then the lake's state."""
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(args)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:  # the session the command ran in
        spark = SparkSession.builder.getOrCreate()
        warehouse = spark.conf.get("spark.sql.warehouse.dir")
        print("HOST_STATE " + json.dumps(state(spark, warehouse.removeprefix("file:"))), flush=True)
    return 0 if result.success else 1


if __name__ == "__main__":
    if sys.argv[1] == "lake":
        make_lake(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(run_dbt(sys.argv[2:]))
