"""The audit tables: their columns (one definition, shared by the loader and the tests) and bulk writes.

The tables are dbt models in `models/audit/` (so they are documented and appear in `dbt docs`);
the models own each table's definition as an empty incremental select, and the run hooks append
rows to them.  Whichever runs first on a fresh warehouse creates the table with the same columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from python_hooks.audit.manifest import write_target_json
from python_hooks.catalog import metastore, parquet_append
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.files import publish_file
from python_hooks.catalog.jvm import jvm as jvm_view

S, TS, B, D, L = StringType(), TimestampType(), BooleanType(), DoubleType(), LongType()
AS = ArrayType(StringType())


def _schema(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, dtype, True) for name, dtype in fields])


SCHEMAS: dict[str, StructType] = {
    "dbt_invocations": _schema(
        ("invocation_id", S),
        ("command", S),
        ("args", S),
        ("selection", S),
        ("target_name", S),
        ("target_schema", S),
        ("vars", S),
        ("dbt_version", S),
        ("project_name", S),
        ("full_refresh", B),
        ("started_at", TS),
        ("ended_at", TS),
        ("status", S),
        ("nodes_total", L),
        ("nodes_failed", L),
        ("message", S),
        ("run_by", S),
        ("host", S),
        ("loaded_from", S),
        ("loaded_at", TS),
    ),
    "dbt_node_results": _schema(
        ("result_id", S),
        ("invocation_id", S),
        ("unique_id", S),
        ("node_name", S),
        ("resource_type", S),
        ("materialization", S),
        ("relation_name", S),
        ("status", S),
        ("thread_id", S),
        ("compile_started_at", TS),
        ("execute_started_at", TS),
        ("completed_at", TS),
        ("execution_time", D),
        ("message", S),
        ("failures", L),
        ("rows_affected", L),
        ("partitions_read", AS),
        ("partitions_written", AS),
        ("loaded_at", TS),
    ),
    "dbt_nodes": _schema(
        ("node_version_id", S),
        ("invocation_id", S),
        ("unique_id", S),
        ("resource_type", S),
        ("name", S),
        ("package_name", S),
        ("original_file_path", S),
        ("materialization", S),
        ("language", S),
        ("checksum", S),
        ("tags", AS),
        ("description", S),
        ("relation_name", S),
        ("change", S),
        ("recorded_at", TS),
    ),
    "dbt_lineage_edges": _schema(
        ("edge_id", S),
        ("invocation_id", S),
        ("parent_unique_id", S),
        ("child_unique_id", S),
        ("parent_resource_type", S),
        ("child_resource_type", S),
        ("loaded_at", TS),
    ),
    "dbt_column_lineage": _schema(
        ("lineage_id", S),
        ("invocation_id", S),
        ("model_unique_id", S),
        ("column_name", S),
        ("source_unique_id", S),
        ("source_relation", S),
        ("source_column", S),
        ("lineage_level", S),
        ("is_python_model", B),
        ("loaded_at", TS),
    ),
}

KEYS: dict[str, str] = {
    "dbt_invocations": "invocation_id",
    "dbt_node_results": "result_id",
    "dbt_nodes": "node_version_id",
    "dbt_lineage_edges": "edge_id",
    "dbt_column_lineage": "lineage_id",
}


def _split(spark: SparkSession, relation: str) -> tuple[str, str]:
    database, _, table = relation.rpartition(".")
    return database or spark.catalog.currentDatabase(), table


class Lookups:
    """Which audit tables exist, and their CatalogTables, for one load: made by the load and
    passed down, so nothing outlives it.

    The `relations` it is told of (the audit tables, which a load appends to but does not alter)
    come from one `getTablesByName` per database, made at the first lookup (none when nothing is
    looked up), instead of two catalog calls per table and write.  A relation it was not told of,
    or that did not exist then, is asked for each time.
    """

    def __init__(self, spark: SparkSession, relations: Iterable[str] = ()) -> None:
        self.spark = spark
        self._wanted = list(relations)
        self._found: dict[tuple[str, str], Any] = {}  # (db, table), lower case -> CatalogTable

    def _key(self, relation: str) -> tuple[str, str]:
        database, table = _split(self.spark, relation)
        return database.lower(), table.lower()

    def _fetch(self) -> None:
        wanted, self._wanted = self._wanted, []
        self._found.update(metastore.tables_by_names(self.spark, [_split(self.spark, r) for r in wanted]))

    def exists(self, relation: str) -> bool:
        """Whether `schema.table` exists (the catalog's table_exists, on a dotted name)."""
        if self._wanted:
            self._fetch()
        if self._key(relation) in self._found:
            return True
        return bool(metastore.table_exists(self.spark, *_split(self.spark, relation)))

    def metadata(self, relation: str) -> Any:
        """The CatalogTable of an existing `schema.table` (one catalog call, or none when fetched)."""
        if self._wanted:
            self._fetch()
        meta = self._found.get(self._key(relation))
        if meta is not None:
            return meta
        return metastore.session_catalog(self.spark).getTableMetadata(
            metastore.identifier(self.spark, *_split(self.spark, relation))
        )


def relation_exists(spark: SparkSession, relation: str) -> bool:
    """Whether `schema.table` exists (one catalog call; a load asks its `Lookups`)."""
    return Lookups(spark).exists(relation)


def table_metadata(spark: SparkSession, relation: str) -> Any:
    """The CatalogTable of an existing `schema.table` (one catalog call; a load asks its `Lookups`)."""
    return Lookups(spark).metadata(relation)


def plain_value(value: Any) -> Any:
    """A value as a builtin type, so Spark's serializer never needs dbt's classes (StrEnum, ...)."""
    if value is None or type(value) in (str, int, float, bool, datetime):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime):
        return datetime.fromtimestamp(value.timestamp()) if value.tzinfo else value.replace()
    if isinstance(value, (list, tuple, set)):
        return [plain_value(v) for v in value]
    return str(value)


def write_rows(
    spark: SparkSession,
    table: str,
    kind: str,
    rows: Sequence[Mapping[str, Any]],
    lookups: Lookups | None = None,
) -> int:
    """Append `rows` to the audit table `table` (`db.name`) of kind `kind`, as one parquet file
    without a Spark job (`parquet_append`), or one Spark insert where that does not apply.

    Creates the table (parquet, the model's columns) when it does not exist yet.  Columns are
    matched by name, so the table may have been created by its dbt model or by this function.
    """
    schema = SCHEMAS[kind]
    if not rows:
        return 0
    lookups = lookups or Lookups(spark)
    data = [tuple(plain_value(row.get(field.name)) for field in schema.fields) for row in rows]
    if not lookups.exists(table):
        database = table.rpartition(".")[0]
        if database:
            spark.sql(f"create database if not exists `{database}`")
        spark.createDataFrame(data, schema).write.format("parquet").saveAsTable(table)
        return len(rows)
    meta = lookups.metadata(table)
    fields = metastore.schema_fields(meta)
    columns = [str(field["name"]) for field in fields]
    missing = [c for c in columns if c not in schema.fieldNames()]
    if missing:
        raise ValueError(f"audit table {table} has columns {missing} that the loader does not know")
    position = {name: i for i, name in enumerate(schema.fieldNames())}
    # one parquet file written through the filesystem (no Spark job); Spark's writer otherwise
    if parquet_append.append_rows(
        spark, meta, fields, [tuple(r[position[c]] for c in columns) for r in data]
    ):
        return len(rows)
    spark.createDataFrame(data, schema).select(*columns).write.insertInto(table)
    return len(rows)


def existing_values(
    spark: SparkSession, table: str, column: str, values: Iterable[str], lookups: Lookups | None = None
) -> set[str]:
    """Which of `values` already appear in `table.column` (an empty set when the table is absent)."""
    wanted = sorted(set(values))
    if not wanted or not (lookups or Lookups(spark)).exists(table):
        return set()
    from pyspark.sql import functions as F

    found = spark.table(table).where(F.col(column).isin(wanted)).select(column).distinct().collect()
    return {row[0] for row in found}


def _location(lookups: Lookups, table: str) -> str:
    return str(lookups.metadata(table).location())


def _data_files(spark: SparkSession, location: str) -> list[str]:
    """The names of a table directory's data files (readers skip names starting with `_` or
    `.`), listed through the session's FileSystem in one call (catalog/file_facts.py)."""
    listing = FileFacts(spark).list([location])[location]
    return sorted(f.path.rstrip("/").rsplit("/", 1)[-1] for f in listing.files)


def _files_now(lookups: Lookups, tables: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each table's location and data file names: what a saved state is valid for."""
    return {
        table: {"location": location, "files": _data_files(lookups.spark, location)}
        for table, location in ((t, _location(lookups, t)) for t in tables)
    }


def _unchanged(spark: SparkSession, saved: dict[str, Any], tables: Sequence[str]) -> bool:
    """Whether the `tables` of a saved state still hold exactly the data files they held."""
    recorded = saved.get("tables") or {}
    return sorted(recorded) == sorted(tables) and all(
        _data_files(spark, entry["location"]) == entry["files"] for entry in recorded.values()
    )


def read_side_state(spark: SparkSession, table: str, name: str, lookups: Lookups | None = None) -> Any:
    """A value saved beside `table`'s data by write_side_state, or None when there is none or the
    table's data files have changed since (rows added or rewritten by anything else)."""
    try:
        jvm = jvm_view(spark)
        location = _location(lookups or Lookups(spark), table)
        path = jvm.org.apache.hadoop.fs.Path(jvm.org.apache.hadoop.fs.Path(location), name)
        fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()
        saved = json.loads(str(text))
        return saved.get("value") if _unchanged(spark, saved, [table]) else None
    except Exception:  # a cache: anything unexpected means "read the table"
        return None


def write_side_state(
    spark: SparkSession, table: str, name: str, value: Any, lookups: Lookups | None = None
) -> None:
    """Save `value` in a hidden file beside `table`'s data files, with their names (best effort)."""
    try:
        files = _files_now(lookups or Lookups(spark), [table])
        directory = jvm_view(spark).org.apache.hadoop.fs.Path(files[table]["location"])
        text = json.dumps({"tables": files, "value": value}, sort_keys=True)
        publish_file(spark, directory, name, text.encode("utf-8"), replace=True)
    except Exception:  # the next load reads the table instead
        return


def write_local_state(
    spark: SparkSession, tables: Sequence[str], path: Path, value: Any, lookups: Lookups | None = None
) -> None:
    """Save `value` in the local file `path` (the target directory), with the location and data
    file names of each of `tables` now; best effort (a failure removes the file)."""
    try:
        files = _files_now(lookups or Lookups(spark), tables)
        write_target_json(path, {"tables": files, "value": value})
    except Exception:  # the next load reads the tables instead
        path.unlink(missing_ok=True)


def read_local_state(spark: SparkSession, tables: Sequence[str], path: Path) -> Any:
    """The value write_local_state saved for `tables`, or None when there is none or any of their
    data files have changed since (rows added or rewritten by anything else, a table dropped)."""
    try:
        saved = json.loads(path.read_text())
        return saved.get("value") if _unchanged(spark, saved, tables) else None
    except Exception:  # a cache: anything unexpected means "read the tables"
        return None
