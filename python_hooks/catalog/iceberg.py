"""Apache Iceberg tables as the session and the metastore show them: Iceberg's catalog
(`iceberg`, beside Delta's `spark_catalog`: docs/formats.md), whether a metastore entry is one of
its tables, and a table's identity partitions.  The purge, retention, restore and the verifier
all reach Iceberg tables through here."""

from __future__ import annotations

from typing import Any

CATALOG = "iceberg"  # Iceberg's catalog in the session (adapter storage.py, ICEBERG_CATALOG)


def in_session(spark: Any) -> bool:
    """Whether Iceberg's catalog is in the session (its runtime jar and settings)."""
    return bool(spark.conf.get(f"spark.sql.catalog.{CATALOG}", None))


def is_iceberg(meta: Any) -> bool:
    """A metastore entry of Iceberg's Hive catalog (its `table_type` property)."""
    found = meta.properties().get("table_type")
    return found.isDefined() and str(found.get()).upper() == "ICEBERG"


def qualified(database: str, table: str) -> str:
    return f"`{CATALOG}`.`{database}`.`{table}`"


def current_snapshot(spark: Any, database: str, table: str) -> int | None:
    """The current snapshot of the table's main branch (None for a table never written)."""
    rows = spark.sql(
        f"select snapshot_id from {qualified(database, table)}.refs where name = 'main'"
    ).collect()
    return int(rows[0].snapshot_id) if rows else None


def set_properties(spark: Any, database: str, table: str, properties: dict[str, str]) -> None:
    """Table properties committed to an Iceberg table's metadata, through Iceberg's catalog (which
    mirrors them into the metastore entry); a LakehouseError when the catalog is not in the session."""
    from python_hooks.catalog.literals import string_literal
    from python_hooks.errors import LakehouseError

    if not in_session(spark):
        raise LakehouseError(
            f"{database}.{table} is an Apache Iceberg table, whose properties are written through Iceberg's"
            " catalog, which is not in this session: put Iceberg's runtime jar beside Delta's (docs/formats.md)"
        )
    pairs = ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in sorted(properties.items()))
    spark.sql(f"alter table {qualified(database, table)} set tblproperties ({pairs})")


def load(spark: Any, database: str, table: str) -> Any:
    """Iceberg's own Table object (its schema, specs, location and properties), through its catalog."""
    return spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{CATALOG}.{database}.{table}"
    )


def identity_partitions(loaded: Any) -> list[str]:
    """The columns of an Iceberg table's current partition spec, when every field of it is an
    identity partition of a top-level column; else [] (a transform's values are not a column's:
    the whole table)."""
    columns = []
    for spec_field in loaded.spec().fields():
        if not spec_field.transform().isIdentity():
            return []
        column = str(loaded.schema().findColumnName(spec_field.sourceId()))
        if "." in column:  # a struct's field: no column of the table
            return []
        columns.append(column)
    return columns
