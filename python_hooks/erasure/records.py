"""What a verification records: four append-only tables, their columns defined here once.

    erasure_verification_runs        one row per verification: when it started and ended, what it
                                     read (tables, partitions, locations, files, bytes), its scope
    erasure_verification_locations   one row per verification and location read: its kind, the
                                     onboarded table it belongs to, files and bytes, any error
    erasure_verification_findings    one row per verification, request and location holding at
                                     least one of the request's ids: how many rows (never an id)
    erasure_verification             one row per verification and request: the totals the ledger
                                     (models/erasure/erasure_requests.sql) and the certificate read

The dbt models of the same names own the tables' documentation (their yml lists these columns,
tests/python_hooks/test_column_contracts.py checks it); the verification creates a table that
does not exist yet and appends its rows, as one parquet file per table and run when it can
(catalog.parquet_append, no Spark job), through Spark's writer otherwise.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import log_tables, metastore
from python_hooks.errors import ConfigError

RUN_COLUMNS: list[tuple[str, str]] = [
    ("verification_id", "string"),
    ("invocation_id", "string"),
    ("trigger", "string"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
    ("scope", "string"),
    ("out_of_scope_tables", "string"),
    ("requests_verified", "bigint"),
    ("ids_listed", "bigint"),
    ("tables_read", "bigint"),
    ("side_tables_read", "bigint"),
    ("partitions_read", "bigint"),
    ("locations_total", "bigint"),
    ("locations_existing", "bigint"),
    ("files_total", "bigint"),
    ("files_read", "bigint"),
    ("files_skipped", "bigint"),
    ("bytes_total", "bigint"),
    ("bytes_read", "bigint"),
    ("location_errors", "bigint"),
    ("rows_holding_ids", "bigint"),
    ("last_change_seen_at", "timestamp"),
    ("product_version", "string"),
]

LOCATION_COLUMNS: list[tuple[str, str]] = [
    ("verification_location_id", "string"),
    ("verification_id", "string"),
    ("location_kind", "string"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("referenced_by", "string"),
    ("location", "string"),
    ("location_exists", "boolean"),
    ("files_total", "bigint"),
    ("files_read", "bigint"),
    ("files_skipped", "bigint"),
    ("bytes_total", "bigint"),
    ("bytes_read", "bigint"),
    ("error", "string"),
]

FINDING_COLUMNS: list[tuple[str, str]] = [
    ("finding_id", "string"),
    ("verification_id", "string"),
    ("request_id", "string"),
    ("location_kind", "string"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("location", "string"),
    ("rows_holding_ids", "bigint"),
]

REQUEST_COLUMNS: list[tuple[str, str]] = [
    ("verification_request_id", "string"),
    ("verification_id", "string"),
    ("invocation_id", "string"),
    ("request_id", "string"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
    ("ids_listed", "bigint"),
    ("locations_read", "bigint"),
    ("live_rows", "bigint"),
    ("copy_rows", "bigint"),
    ("unread_live", "bigint"),
    ("unread_copies", "bigint"),
    ("live_holding", "string"),
    ("copies_holding", "string"),
    ("unread_locations", "string"),
    ("verdict", "string"),
]

TABLES: dict[str, list[tuple[str, str]]] = {
    "erasure_verification_runs": RUN_COLUMNS,
    "erasure_verification_locations": LOCATION_COLUMNS,
    "erasure_verification_findings": FINDING_COLUMNS,
    "erasure_verification": REQUEST_COLUMNS,
}


def check_columns(database: str, table: str, meta: Any) -> None:
    """An existing table (its CatalogTable `meta`) must have the columns (names and types) of
    TABLES: an older version's table is refused with the way to keep its history."""
    columns = TABLES[table]
    found = [(str(f["name"]).lower(), _simple(f["type"])) for f in metastore.schema_fields(meta)]
    if found != [(name, kind) for name, kind in columns]:
        raise ConfigError(
            f"{database}.{table} exists with the columns {', '.join(n + ' ' + k for n, k in found)}, not the ones "
            f"a verification writes ({', '.join(n + ' ' + k for n, k in columns)}): it was made by an older "
            f"version. Keep its history under another name (alter table {database}.{table} rename to "
            f"{database}.{table}_v1) and run the verification again."
        )


def _simple(spark_type: Any) -> str:
    """A schema JSON type as the DDL type name: `long` -> bigint, `integer` -> int."""
    text = spark_type if isinstance(spark_type, str) else str(spark_type.get("type"))
    return {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}.get(text, text)


def append(spark: Any, database: str, rows_by_table: dict[str, list[dict[str, Any]]]) -> None:
    """Append each table's `rows` ({column: value}) to that verification table of `database`
    (created when missing), as every log table of the product is appended (catalog/log_tables.py).
    The existing tables' columns are checked first, all of them in one metastore call, so that an
    older version's table refuses the run before any of them is written."""
    known = metastore.tables_by_names(spark, [(database, table) for table in rows_by_table])
    metas = {table: known.get((database.lower(), table.lower())) for table in rows_by_table}
    for table, meta in metas.items():
        if meta is not None:
            check_columns(database, table, meta)
    for table, rows in rows_by_table.items():
        log_tables.append(spark, database, table, TABLES[table], rows, metas[table])


def as_view(spark: Any, view_name: str, table: str, rows: list[dict[str, Any]]) -> None:
    """`rows` as the temporary view `view_name`, with the columns of `table` (for a model that
    appends them itself)."""
    columns = TABLES[table]
    values = [tuple(row.get(name) for name, _ in columns) for row in rows]
    frame = spark.createDataFrame(values, ", ".join(f"`{name}` {kind}" for name, kind in columns))
    frame.createOrReplaceTempView(view_name)
