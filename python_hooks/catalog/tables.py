"""Tables as the macros see them: plain Python from the session catalog, for Jinja.

These only read the metastore (or run one guarded statement), return plain Python, and never
raise for a table that is missing: the caller decides what is an error.  Partition values come
back unescaped (`10:00`, `o'b`), locations fully qualified and decoded (a Hadoop `Path`, not a
URI).  Statements and metadata changes that must not stop a macro return the one result shape
`{ok, error, ...}` (python_hooks.errors.result).
"""

from __future__ import annotations

import json
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.jvm import path_string, scala_list
from python_hooks.errors import result

_SKIP_TYPES = ("VIEW",)
# the table property that onboards a table for the purge (its identifier field, as JSON)
DESCRIPTOR = "dataset.descriptor"


def descriptor_identifier(descriptor: str | None) -> str | None:
    """`complianceSpec.identifierField` of a descriptor, stripped, or None when it has none (or is
    not JSON).  The purge's planning says which of the two is wrong; readers that only ask whether
    a table names an identifier use this."""
    if not descriptor:
        return None
    try:
        parsed = json.loads(descriptor)
    except ValueError:
        return None
    spec = parsed.get("complianceSpec") if isinstance(parsed, dict) else None
    field = spec.get("identifierField") if isinstance(spec, dict) else None
    return field.strip() if isinstance(field, str) and field.strip() else None


def list_databases(spark: Any) -> list[str]:
    """Every database name in the metastore, lower case, sorted."""
    return sorted(str(name).lower() for name in scala_list(metastore.session_catalog(spark).listDatabases()))


def list_tables(spark: Any, database: str) -> list[str]:
    """Table names of one database (temporary views left out), lower case, sorted."""
    catalog = metastore.session_catalog(spark)
    if not catalog.databaseExists(database):
        return []
    names = []
    for ident in scala_list(catalog.listTables(database)):
        if ident.database().isDefined():
            names.append(str(ident.table()).lower())
    return sorted(names)


def read_schema(meta: Any) -> Any:
    """The table's schema (as Spark reads it: data columns, then partition columns) from its
    catalog entry, without analysing a query over the table."""
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(str(meta.schema().json())))


def describe_table(spark: Any, database: str, table: str) -> dict[str, Any]:
    """What the purge needs to know about a table, from the metastore only.

    {exists, database, table, table_type, provider, location, database_location,
     partition_columns: [name], data_columns: [name], columns: {name: type},
     properties: {key: value}}
    """
    catalog = metastore.session_catalog(spark)
    ident = metastore.identifier(spark, database, table)
    if not catalog.tableExists(ident):
        return {"exists": False, "database": database, "table": table}
    meta = catalog.getTableMetadata(ident)
    partition_columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
    schema = read_schema(meta)
    properties = {}
    for key in scala_list(meta.properties().keys()):
        properties[str(key)] = str(meta.properties().apply(key))
    db_meta = catalog.getDatabaseMetadata(database)
    return {
        "exists": True,
        "database": database,
        "table": table,
        "table_type": str(meta.tableType().name()),
        "is_view": str(meta.tableType().name()) in _SKIP_TYPES,
        "provider": metastore.provider(meta),
        "location": path_string(spark, meta.location())
        if str(meta.tableType().name()) not in _SKIP_TYPES
        else None,
        "database_location": path_string(spark, db_meta.locationUri()),
        "partition_columns": partition_columns,
        "data_columns": [f.name for f in schema.fields if f.name not in partition_columns],
        "columns": {f.name: str(f.dataType.simpleString()) for f in schema.fields},
        "properties": properties,
    }


def field_in_schema(schema: Any, field: str) -> dict[str, Any] | None:
    """A column or nested struct field of a schema (`metadata.guestid`, matched case-insensitively):
    {path: [names with the table's own spelling], type: simpleString}, or None when there is none."""
    from pyspark.sql.types import StructType

    current: Any = schema
    resolved = []
    for part in field.split("."):
        if not isinstance(current, StructType):
            return None
        match = [f for f in current.fields if f.name.lower() == part.strip("`").lower()]
        if not match:
            return None
        resolved.append(match[0].name)
        current = match[0].dataType
    return {"path": resolved, "type": str(current.simpleString())}


def list_partitions(spark: Any, database: str, table: str) -> list[dict[str, Any]]:
    """Every partition: {values: [[key, unescaped value], ...] in partition-column order, location}."""
    catalog = metastore.session_catalog(spark)
    ident = metastore.identifier(spark, database, table)
    meta = catalog.getTableMetadata(ident)
    keys = [str(c) for c in scala_list(meta.partitionColumnNames())]
    if not keys:
        return []
    found = [
        {"values": [[key, value] for key, value in pairs], "location": location}
        for pairs, location in metastore.partition_locations(spark, database, table, keys)
    ]
    return sorted(found, key=lambda p: [v for _, v in p["values"]])


def partition_location(spark: Any, database: str, table: str, values: list[list[str]]) -> str | None:
    """The location of one partition ([[key, unescaped value], ...]), or None when it does not exist."""
    wanted = [[str(k), str(v)] for k, v in values]
    for part in list_partitions(spark, database, table):
        if part["values"] == wanted:
            return str(part["location"])
    return None


def execute(spark: Any, sql: str) -> dict[str, Any]:
    """Run one statement; never raise.  {ok, error, rows} with rows as lists (for small results).

    Jinja has no try/except, and one failing partition must not stop the others, so the purge
    runs each step through here and records the error instead of aborting the run.
    """
    try:
        rows = [list(row) for row in spark.sql(sql).collect()]
    except Exception as exc:  # noqa: BLE001 - any failure of the step is reported to the caller
        return result(exc, rows=[])
    return result(rows=rows)


def refresh_table(spark: Any, database: str, table: str) -> dict[str, Any]:
    """Forget what Spark cached for a table: its relation and its files' listing.

    What `refresh table` does, without parsing a statement: the purge calls it before the rewrite
    so that the rewrite lists exactly the files the commit check fingerprinted.  {ok, error}.
    """
    try:
        spark.catalog.refreshTable(metastore.table_name(database, table))
    except Exception as exc:  # noqa: BLE001 - reported to the caller like a failed statement
        return result(exc)
    return result()


def field_paths(schema: Any, prefix: str = "") -> list[str]:
    """Every column and nested struct field of a schema as a dotted path (`metadata.guestid`)."""
    from pyspark.sql.types import StructType

    paths = []
    for item in schema.fields:
        path = f"{prefix}{item.name}"
        paths.append(path)
        if isinstance(item.dataType, StructType):
            paths.extend(field_paths(item.dataType, f"{path}."))
    return paths
