"""The session catalog for the purge: tables, their columns, properties, partitions and files.

The purge macros call these through `adapter.python_hook('python_hooks.catalog.tables:<fn>', ...)`.
Most only read the metastore, return plain Python for Jinja, and never raise for a table that is
missing: the caller decides what is an error.  The others never raise either:
`location_snapshots` lists partitions' data files and reads their footers (the commit check's
fingerprint and the rows before a rewrite), `partition_row_counts` reads the footers of a table's
data files, `create_staging_table` and `drop_staging_table` create and forget the purge's
staging table, `refresh_table` drops Spark's cached listing of a table, and
`set_partition_locations` swaps several partitions' locations in one metastore call.  Partition values come back unescaped (`10:00`, `o'b`),
locations fully qualified and decoded (a Hadoop `Path`, not a URI).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from python_hooks.catalog import metastore

_SKIP_TYPES = ("VIEW",)


_catalog = metastore._catalog
_identifier = metastore._ident
_jvm = metastore._jvm
_seq = metastore._scala_list


def _path(spark: Any, uri: Any) -> str:
    """A catalog URI as the decoded, qualified path string Spark SQL expects in LOCATION '...'."""
    return metastore._path(_jvm(spark), uri)


def list_databases(spark: Any) -> list[str]:
    """Every database name in the metastore, lower case, sorted."""
    return sorted(str(name).lower() for name in _seq(_catalog(spark).listDatabases()))


def list_tables(spark: Any, database: str) -> list[str]:
    """Table names of one database (temporary views left out), lower case, sorted."""
    catalog = _catalog(spark)
    if not catalog.databaseExists(database):
        return []
    names = []
    for ident in _seq(catalog.listTables(database)):
        if ident.database().isDefined():
            names.append(str(ident.table()).lower())
    return sorted(names)


def table_exists(spark: Any, database: str, table: str) -> bool:
    return bool(_catalog(spark).tableExists(_identifier(spark, database, table)))


def _schema(meta: Any) -> Any:
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
    catalog = _catalog(spark)
    ident = _identifier(spark, database, table)
    if not catalog.tableExists(ident):
        return {"exists": False, "database": database, "table": table}
    meta = catalog.getTableMetadata(ident)
    partition_columns = [str(c) for c in _seq(meta.partitionColumnNames())]
    schema = _schema(meta)
    properties = {}
    for key in _seq(meta.properties().keys()):
        properties[str(key)] = str(meta.properties().apply(key))
    db_meta = catalog.getDatabaseMetadata(database)
    return {
        "exists": True,
        "database": database,
        "table": table,
        "table_type": str(meta.tableType().name()),
        "is_view": str(meta.tableType().name()) in _SKIP_TYPES,
        "provider": metastore.provider(meta),
        "location": _path(spark, meta.location())
        if str(meta.tableType().name()) not in _SKIP_TYPES
        else None,
        "database_location": _path(spark, db_meta.locationUri()),
        "partition_columns": partition_columns,
        "data_columns": [f.name for f in schema.fields if f.name not in partition_columns],
        "columns": {f.name: str(f.dataType.simpleString()) for f in schema.fields},
        "properties": properties,
    }


def resolve_field(spark: Any, database: str, table: str, field: str) -> dict[str, Any] | None:
    """A column or nested struct field (`metadata.guestid`, matched case-insensitively):
    {path: [names with the table's own spelling], type: simpleString}, or None when there is none.
    """
    from pyspark.sql.types import StructType

    catalog = _catalog(spark)
    ident = _identifier(spark, database, table)
    if not catalog.tableExists(ident):
        return None
    current: Any = _schema(catalog.getTableMetadata(ident))
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
    catalog = _catalog(spark)
    ident = _identifier(spark, database, table)
    meta = catalog.getTableMetadata(ident)
    keys = [str(c) for c in _seq(meta.partitionColumnNames())]
    if not keys:
        return []
    result = [
        {"values": [[key, value] for key, value in pairs], "location": location}
        for pairs, location in metastore.partition_locations(spark, database, table, keys)
    ]
    return sorted(result, key=lambda p: [v for _, v in p["values"]])


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
        message = metastore.error_message(exc)
        return {"ok": False, "error": message, "rows": []}
    return {"ok": True, "error": None, "rows": rows}


def _storage_format(meta: Any) -> str | None:
    """`parquet` or `orc` for a table whose files the footer count can read, else None."""
    provider = metastore.provider(meta)
    if provider in ("parquet", "orc"):
        return provider
    if provider != "hive":
        return None
    storage = meta.storage()
    described = " ".join(
        str(option.get()).lower() if option.isDefined() else ""
        for option in (storage.inputFormat(), storage.serde())
    )
    for name in ("parquet", "orc"):
        if name in described:
            return name
    return None


def _file_rows(spark: Any, status: Any, storage_format: str) -> int:
    jvm = _jvm(spark)
    conf = spark._jsc.hadoopConfiguration()
    if storage_format == "parquet":
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
            jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromStatus(status, conf)
        )
        try:
            return int(reader.getRecordCount())
        finally:
            reader.close()
    path = status.getPath()
    options = jvm.org.apache.orc.OrcFile.readerOptions(conf).filesystem(path.getFileSystem(conf))
    reader = jvm.org.apache.orc.OrcFile.createReader(path, options)
    try:
        return int(reader.getNumberOfRows())
    finally:
        reader.close()


def _footer_rows(spark: Any, files: list[Any], storage_format: str) -> int:
    """Rows in `files` (Hadoop FileStatus), from their footers; empty files hold none."""
    return sum(_file_rows(spark, status, storage_format) for status in files if status.getLen() > 0)


def _data_files(spark: Any, location: str, exclude: str | None = None) -> list[Any]:
    """The data files under `location`, recursively, as Hadoop FileStatus objects.

    Names starting with `_` or `.` are left out at every level (Spark's rule), and so is the
    directory `exclude` (an unpartitioned table's staging directory lies inside its location).
    A location that does not exist has no files.
    """
    jvm = _jvm(spark)
    path = jvm.org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    skip = str(fs.makeQualified(jvm.org.apache.hadoop.fs.Path(exclude)).toString()) if exclude else None
    files: list[Any] = []
    pending = [path]
    while pending:
        directory = pending.pop()
        if not fs.exists(directory):
            continue
        for status in fs.listStatus(directory):
            child = status.getPath()
            if str(child.getName()).startswith(("_", ".")):
                continue
            if skip is not None and str(child.toString()) == skip:
                continue
            if status.isDirectory():
                pending.append(child)
            else:
                files.append(status)
    return sorted(files, key=lambda status: str(status.getPath().toString()))


def _read_files(spark: Any, location: str, files: list[Any], recursive: bool) -> list[Any] | None:
    """Of `files` (all under `location`), the ones Spark reads, or None when that is unclear.

    Spark reads an unpartitioned table's location recursively, but a partition's directory only
    at its top level; a partition with a sub-directory (Hive-on-Tez's HIVE_UNION_SUBDIR_n, say)
    gives None, and the caller counts its rows with Spark SQL instead of from footers.
    """
    if recursive:
        return files
    top = str(_jvm(spark).org.apache.hadoop.fs.Path(location).toUri().getPath()).rstrip("/")
    if any(str(status.getPath().getParent().toUri().getPath()).rstrip("/") != top for status in files):
        return None
    return files


def _location_rows(spark: Any, location: str, storage_format: str) -> int:
    """Rows in the data files directly under a partition `location`, from their footers.

    A sub-directory (which Spark would not read as part of a Hive partition) raises.
    """
    files = _read_files(spark, location, _data_files(spark, location), recursive=False)
    if files is None:
        raise ValueError(f"{location} holds a sub-directory")
    return _footer_rows(spark, files, storage_format)


def location_snapshots(
    spark: Any,
    database: str,
    table: str,
    locations: list[str],
    exclude: str | None = None,
    count_rows: bool = True,
) -> dict[str, dict[str, Any]]:
    """For each location of `database.table`: {fingerprint, rows}; never raises.

    `fingerprint` is an md5 of the data files' paths, sizes and modification times, recursively
    (Gobblin's commit check compares it before the rewrite and before the swap); `rows` is the
    row count read from the footers of the files Spark reads there, or None when the table is not
    parquet or ORC, a partition has a sub-directory, a footer cannot be read, or `count_rows` is
    false (the caller then counts with Spark SQL).  A location that cannot be listed gets
    fingerprint None.
    """
    storage_format = None
    partitioned = True
    if count_rows:
        try:
            meta = _catalog(spark).getTableMetadata(_identifier(spark, database, table))
            storage_format = _storage_format(meta)
            partitioned = bool(_seq(meta.partitionColumnNames()))
        except Exception:  # noqa: BLE001 - rows stay unknown; the caller counts with Spark SQL
            storage_format = None
    snapshots: dict[str, dict[str, Any]] = {}
    for location in locations:
        try:
            files = _data_files(spark, location, exclude)
        except Exception:  # noqa: BLE001 - an unlistable location fails the commit check
            snapshots[location] = {"fingerprint": None, "rows": None}
            continue
        lines = "\n".join(
            f"{status.getPath().toString()}|{status.getLen()}|{status.getModificationTime()}"
            for status in files
        )
        rows = None
        read = _read_files(spark, location, files, recursive=not partitioned)
        if storage_format is not None and read is not None:
            try:
                rows = _footer_rows(spark, read, storage_format)
            except Exception:  # noqa: BLE001 - an unreadable footer: the caller counts with Spark
                rows = None
        digest = hashlib.md5(lines.encode(), usedforsecurity=False).hexdigest()
        snapshots[location] = {"fingerprint": digest, "rows": rows}
    return snapshots


def refresh_table(spark: Any, database: str, table: str) -> dict[str, Any]:
    """Forget what Spark cached for a table: its relation and its files' listing.

    What `refresh table` does, without parsing a statement: the purge calls it before the rewrite
    so that the rewrite lists exactly the files the commit check fingerprinted.  {ok, error}.
    """
    try:
        spark.catalog.refreshTable(metastore._name(database, table))
    except Exception as exc:  # noqa: BLE001 - reported to the caller like a failed statement
        message = metastore.error_message(exc)
        return {"ok": False, "error": message}
    return {"ok": True, "error": None}


def _spark_writes_hive_table(spark: Any, storage_format: str) -> bool:
    """Whether an insert into a partitioned Hive parquet/ORC table goes through Spark's own
    file writer (its defaults), as a datasource staging table's insert does."""
    convert = f"spark.sql.hive.convertMetastore{'Parquet' if storage_format == 'parquet' else 'Orc'}"
    return all(
        str(spark.conf.get(key, "true")).lower() == "true"
        for key in (convert, "spark.sql.hive.convertInsertingPartitionedTable")
    )


def create_staging_table(
    spark: Any, database: str, staging: str, table: str, location: str
) -> dict[str, Any]:
    """Step 1 for a partitioned parquet or ORC table, without per-partition metastore work.

    Creates `database.staging`, external, at `location`, with the table's columns, partition
    columns, file format and format options (its parquet.* / orc.* table properties and its serde
    properties, as Spark's own conversion of a Hive table write uses them), as a Spark datasource
    table whose partitions are found on the filesystem rather than registered in the metastore.
    The rewrite's insert then registers no partition, and dropping the table removes no partition
    either: the two metastore steps that, for a Hive-format staging table, grow with the number
    of partitions rewritten.  The rewritten directories are the same `<location>/<k>=<v>`.

    {created, error}: created false (with no error) for a table this does not apply to
    (unpartitioned, bucketed, in another format, or written by Hive's own writer because the
    session does not convert its inserts), and false with the error when the catalog refused;
    the caller then creates it with `create table ... like`.
    """
    try:
        jvm = _jvm(spark)
        catalog = _catalog(spark)
        source = catalog.getTableMetadata(_identifier(spark, database, table))
        storage_format = _storage_format(source)
        if (
            storage_format is None
            or not _seq(source.partitionColumnNames())
            or source.bucketSpec().isDefined()
        ):
            return {"created": False, "error": None}
        if metastore.provider(source) == "hive" and not _spark_writes_hive_table(spark, storage_format):
            # Hive's own writer (its defaults, its decimal encoding) writes this table: so must the staging
            return {"created": False, "error": None}
        options = {
            str(key): str(source.properties().apply(key))
            for key in _seq(source.properties().keys())
            if str(key).lower().startswith(f"{storage_format}.") or f".{storage_format}." in str(key).lower()
        }
        for key in _seq(source.storage().properties().keys()):
            if str(key).lower() != "path":
                options[str(key)] = str(source.storage().properties().apply(key))
        none = jvm.scala.Option.empty()
        storage = source.storage().copy(
            jvm.scala.Option.apply(jvm.org.apache.hadoop.fs.Path(location).toUri()),
            none,
            none,
            none,
            source.storage().compressed(),
            metastore._spec_map(spark, list(options.items())),
        )
        staging_meta = source.copy(
            _identifier(spark, database, staging),
            jvm.org.apache.spark.sql.catalyst.catalog.CatalogTableType.EXTERNAL(),
            storage,
            source.schema(),
            jvm.scala.Option.apply(storage_format),
            source.partitionColumnNames(),
            none,
            source.owner(),
            int(jvm.java.lang.System.currentTimeMillis()),
            -1,
            source.createVersion(),
            metastore._spec_map(spark, []),
            none,
            none,
            none,
            source.unsupportedFeatures(),
            False,
            True,
            metastore._spec_map(spark, []),
            none,
        )
        catalog.createTable(staging_meta, False, True)
    except Exception as exc:  # noqa: BLE001 - the caller creates the staging table with SQL instead
        message = metastore.error_message(exc)
        return {"created": False, "error": message}
    return {"created": True, "error": None}


def drop_staging_table(spark: Any, database: str, table: str) -> dict[str, Any]:
    """Step 5: forget the (external) staging table; its files, now live, are not touched.

    Through the catalog rather than `drop table`, which first resolves the table as a query
    (listing its files) to uncache it; a staging table is never cached.  {ok, refused, error}:
    refused for a table that is not external, which the caller must not drop at all.
    """
    try:
        catalog = _catalog(spark)
        ident = _identifier(spark, database, table)
        meta = catalog.getTableMetadata(ident)
        if str(meta.tableType().name()) != "EXTERNAL":
            # dropping a managed table deletes its directory, where the swapped partitions now live
            return {
                "ok": False,
                "refused": True,
                "error": f"{database}.{table} is not an external table: not dropped, or its files (now live) would go",
            }
        catalog.dropTable(ident, True, False)
        catalog.refreshTable(ident)
    except Exception as exc:  # noqa: BLE001 - the caller drops it with SQL instead
        return {"ok": False, "refused": False, "error": metastore.error_message(exc)}
    return {"ok": True, "refused": False, "error": None}


def _partition_directories(spark: Any, location: str, columns: list[str]) -> list[dict[str, Any]]:
    """The partition directories `<location>/<c1>=<v1>/.../<cn>=<vn>` on the filesystem.

    [{values: [[column, unescaped value], ...], location}] for a table whose partitions are not
    registered in the metastore (the purge's staging table).
    """
    from dbt.adapters.lakehouse.partitions import unescape_path_name

    jvm = _jvm(spark)
    root = jvm.org.apache.hadoop.fs.Path(location)
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    level: list[tuple[list[list[str]], Any]] = [([], root)] if fs.exists(root) else []
    for column in columns:
        deeper = []
        for values, directory in level:
            for status in fs.listStatus(directory):
                key, sep, value = str(status.getPath().getName()).partition("=")
                if status.isDirectory() and sep and unescape_path_name(key).lower() == column.lower():
                    deeper.append(([*values, [column, unescape_path_name(value)]], status.getPath()))
        level = deeper
    return [{"values": values, "location": str(path.toString())} for values, path in level]


def partition_row_counts(spark: Any, database: str, table: str) -> dict[str, Any]:
    """Every partition of a (staging) table with its row count read from the data files' footers.

    The partitions registered in the metastore, or, for a table that does not register them (the
    staging table `create_staging_table` makes), the partition directories under its location.

    {ok, error, partitions: [{values, location, rows}]}.  One metastore call and a footer read per
    file instead of a Spark job: the purge checks each rewritten partition's row count this way.
    Not ok (the caller counts with Spark SQL instead) for a format other than parquet and ORC, or
    when a file cannot be read.
    """
    try:
        meta = _catalog(spark).getTableMetadata(_identifier(spark, database, table))
        storage_format = _storage_format(meta)
        if storage_format is None:
            return {"ok": False, "error": "not a parquet or ORC table", "partitions": []}
        if meta.tracksPartitionsInCatalog() or metastore.provider(meta) == "hive":
            partitions = list_partitions(spark, database, table)
        else:
            columns = [str(c) for c in _seq(meta.partitionColumnNames())]
            partitions = _partition_directories(spark, _path(spark, meta.location()), columns)
        for part in partitions:
            part["rows"] = _location_rows(spark, part["location"], storage_format)
    except Exception as exc:  # noqa: BLE001 - the caller falls back to counting with Spark SQL
        message = metastore.error_message(exc)
        return {"ok": False, "error": message, "partitions": []}
    return {"ok": True, "error": None, "partitions": partitions}


def set_partition_locations(
    spark: Any, database: str, table: str, partitions: list[list[Any]]
) -> dict[str, Any]:
    """Point several partitions at new locations in one metastore call; never raise.

    `partitions` is [[values, location], ...] with values as [[key, unescaped value], ...].  It
    does what `alter table ... partition (...) set location '...'` does for each of them (the same
    catalog calls: read the partition, alter it, refresh the table, drop the table's now stale
    statistics), with one `alterPartitions` for all of them.  {ok, error}: on an error nothing may
    have changed or all of it; the caller checks each location and swaps the rest one by one.
    """
    try:
        metastore.set_partition_locations(
            spark,
            database,
            table,
            [([(str(k), str(v)) for k, v in values], str(location)) for values, location in partitions],
        )
    except Exception as exc:  # noqa: BLE001 - the caller swaps one partition at a time instead
        message = metastore.error_message(exc)
        return {"ok": False, "error": message}
    return {"ok": True, "error": None}
