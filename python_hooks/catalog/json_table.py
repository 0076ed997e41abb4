"""A small relation whose rows are replaced as a whole: one JSON-lines file, no Spark job.

The purge node's relation holds only its run's result rows (one per table and partition), and
is replaced on every run.  A Spark write of a few rows costs a job, a commit protocol and a
table refresh; writing the file through the session's Hadoop FileSystem costs a create, a
rename and a refresh, on local disk, HDFS and object stores
alike.  The table is a Spark `using json` table with declared column types, so Spark readers
see typed columns; other engines (Hive, Trino) read `purge_log`, the parquet table that copies
the rows on every run.

    replace_rows(spark, database, table, columns=[[name, type], ...], rows=[{name: value}])

Timestamps are given as `yyyy-MM-dd HH:mm:ss[.ffffff]` strings in UTC, and the table reads them
in UTC whatever the session's time zone.
"""

from __future__ import annotations

import json
from typing import Any

from python_hooks.catalog.files import publish_file
from python_hooks.catalog.jvm import jvm as jvm_view
from python_hooks.catalog.metastore import identifier, provider, quote, session_catalog, table_name

FILE_NAME = "part-00000-rows.json"
TIMESTAMP_FORMAT = "yyyy-MM-dd HH:mm:ss[.SSSSSS]"


def _existing(spark: Any, database: str, table: str) -> Any:
    """The table's CatalogTable, or None when it does not exist."""
    catalog = session_catalog(spark)
    ident = identifier(spark, database, table)
    return catalog.getTableMetadata(ident) if catalog.tableExists(ident) else None


def _layout_matches(meta: Any, columns: list[list[str]]) -> bool:
    """True when `meta` (None: no table) is a json table with exactly these columns and types."""
    if meta is None:
        return False
    if provider(meta) != "json" or str(meta.tableType().name()) == "VIEW":
        return False
    fields = [(str(f.name()), str(f.dataType().simpleString())) for f in meta.schema().fields()]
    options = meta.storage().properties()
    failfast = options.contains("mode") and str(options.apply("mode")).upper() == "FAILFAST"
    utc = options.contains("timeZone") and str(options.apply("timeZone")) == "UTC"
    return failfast and utc and fields == [(name, data_type) for name, data_type in columns]


def _create(spark: Any, database: str, table: str, columns: list[list[str]]) -> None:
    spark.sql(f"drop table if exists {table_name(database, table)}")
    spark.sql(
        f"create table {table_name(database, table)} ("
        + ", ".join(f"{quote(name)} {data_type}" for name, data_type in columns)
        + f") using json options (timestampFormat '{TIMESTAMP_FORMAT}', timeZone 'UTC', mode 'FAILFAST')"
    )


def replace_rows(
    spark: Any,
    database: str,
    table: str,
    columns: list[list[str]],
    rows: list[dict[str, Any]],
    meta: Any = None,
) -> bool:
    """Make `database.table` hold exactly `rows`; True when the table was (re)created.

    The table is (re)created when it is missing or laid out differently (another format, other
    columns).  The rows go to a hidden temporary file; the old data file is then deleted and the
    new one renamed into its place (Hadoop's rename does not replace a file), so a reader in
    that instant sees no rows.  Any other file in the directory is removed.  The table reads in
    FAILFAST mode: a value that does not fit its column is an error, not a silent NULL.
    `meta`: the table's CatalogTable when the caller has it (`metastore.tables_by_names`).
    """
    created = False
    if meta is None:
        meta = _existing(spark, database, table)
    if not _layout_matches(meta, columns):
        _create(spark, database, table, columns)
        created = True
        meta = _existing(spark, database, table)
    directory = jvm_view(spark).org.apache.hadoop.fs.Path(meta.location())
    fs = directory.getFileSystem(spark._jsc.hadoopConfiguration())
    names = [name for name, _ in columns]
    text = "".join(
        json.dumps({name: row.get(name) for name in names}, ensure_ascii=False, default=str) + "\n"
        for row in rows
    )
    publish_file(spark, directory, FILE_NAME, text.encode("utf-8"), replace=True)
    for status in fs.listStatus(directory):
        child = status.getPath()
        if str(child.getName()) != FILE_NAME and not str(child.getName()).startswith("."):
            fs.delete(child, True)
    session_catalog(spark).refreshTable(meta.identifier())
    return created
