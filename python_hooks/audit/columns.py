"""Columns of the upstream relations for column lineage: the Spark catalog first, then the yml."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit.manifest import relation_name


def schema_columns(spark: SparkSession, schema: str) -> dict[str, dict[str, str]]:
    """{table: {column: type}} of every table in a schema, in one metastore call.

    `show table extended ... like '*'` is what dbt-spark's catalog uses: one round trip per
    schema instead of one per relation (a 500-model project would otherwise make 500).
    """
    tables: dict[str, dict[str, str]] = {}
    try:
        rows = spark.sql(f"show table extended in `{schema}` like '*'").collect()
    except Exception:  # the schema does not exist yet
        return tables
    for row in rows:
        columns: dict[str, str] = {}
        in_schema = False
        for line in str(row.information).splitlines():
            if line.startswith("Schema:"):
                in_schema = True
                continue
            if in_schema and line.startswith(" |-- "):
                name, _, rest = line[5:].partition(": ")
                columns[name] = rest.split(" (nullable", 1)[0]
        tables[str(row.tableName).lower()] = columns
    return tables


def catalog_columns(spark: SparkSession, manifest: Mapping[str, Any]) -> Any:
    """A `columns_of(relation)` for column lineage: the Spark catalog first, then the yml."""
    declared: dict[str, dict[str, str]] = {}
    for section in ("nodes", "sources"):
        for node in manifest.get(section, {}).values():
            relation = relation_name(node)
            if relation and node.get("columns"):
                declared[relation.lower()] = {
                    c: (v.get("data_type") or "string") for c, v in node["columns"].items()
                }
    schemas: dict[str, dict[str, dict[str, str]]] = {}

    def columns_of(relation: str) -> dict[str, str] | None:
        schema, _, name = relation.lower().rpartition(".")
        if schema not in schemas:
            schemas[schema] = schema_columns(spark, schema) if schema else {}
        # not built yet: fall back to the columns the yml declares
        return schemas[schema].get(name) or declared.get(relation.lower())

    return columns_of
