"""Columns of the upstream relations for column lineage: the Spark catalog first, then the yml."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit.manifest import relation_name
from python_hooks.catalog import metastore


def relation_columns(spark: SparkSession, schema: str, names: Sequence[str]) -> dict[str, dict[str, str]]:
    """{table: {column: type}} of those of `names` that exist in `schema`, in one metastore call.

    Hive's getTableObjectsByName answers for many tables at once, and reads no file listing
    (`show table extended`, which dbt-spark's catalog uses, describes every table of the schema
    with its files).  Types are Spark's type
    names (`long`, `string`, `decimal(10,2)`, `array`), as `show table extended` prints them.
    """
    try:
        found = metastore.tables_by_name(spark, schema, sorted(set(names)))
    except Exception:  # the schema does not exist yet, or the catalog refuses a name
        return {}
    return {
        str(meta.identifier().table()).lower(): {
            str(field["name"]): field["type"]
            if isinstance(field["type"], str)
            else str(field["type"]["type"])
            for field in metastore.schema_fields(meta)
        }
        for meta in found
    }


def catalog_columns(
    spark: SparkSession, manifest: Mapping[str, Any], results: Sequence[Mapping[str, Any]] = ()
) -> Any:
    """A `columns_of(relation)` for column lineage: the Spark catalog first, then the yml.

    The relations the run's nodes write and read (`results`) are fetched together, one call per
    schema, on the first lookup in that schema; any other relation on its own.
    """
    declared: dict[str, dict[str, str]] = {}
    for section in ("nodes", "sources"):
        for node in manifest.get(section, {}).values():
            relation = relation_name(node)
            if relation and node.get("columns"):
                declared[relation.lower()] = {
                    c: (v.get("data_type") or "string") for c, v in node["columns"].items()
                }
    nodes = {**manifest.get("nodes", {}), **manifest.get("sources", {})}
    wanted: dict[str, set[str]] = {}
    for result in results:
        node = nodes.get(str(result.get("unique_id") or "")) or {}
        for unique_id in [node.get("unique_id"), *((node.get("depends_on") or {}).get("nodes") or [])]:
            relation = relation_name(nodes.get(str(unique_id)) or {})
            if relation:
                schema, _, name = relation.lower().rpartition(".")
                wanted.setdefault(schema, set()).add(name)
    fetched: dict[str, dict[str, str]] = {}
    asked: set[str] = set()

    def columns_of(relation: str) -> dict[str, str] | None:
        key = relation.lower()
        schema, _, name = key.rpartition(".")
        if key not in asked and schema:
            names = {name} | wanted.pop(schema, set())
            fresh = relation_columns(spark, schema, sorted(names))
            fetched.update({f"{schema}.{table}": columns for table, columns in fresh.items()})
            asked.update(f"{schema}.{n}" for n in names)
        # not built yet: fall back to the columns the yml declares
        return fetched.get(key) or declared.get(key)

    return columns_of
