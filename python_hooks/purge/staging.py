"""The purge's staging table: made and forgotten through the catalog, its rows read from footers.

Steps 1 and 5 of the purge (macros/purge/purge_table.sql) and the row check of what the rewrite
wrote.  None of these raises: each returns what the caller needs to fall back to SQL.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import background, files, metastore, tables
from python_hooks.catalog.jvm import jvm as jvm_view
from python_hooks.catalog.jvm import path_string, scala_list, scala_map
from python_hooks.errors import result


def _spark_writes_hive_table(spark: Any, storage_format: str) -> bool:
    """Whether an insert into a partitioned Hive parquet/ORC table goes through Spark's own
    file writer (its defaults), as a datasource staging table's insert does."""
    convert = f"spark.sql.hive.convertMetastore{'Parquet' if storage_format == 'parquet' else 'Orc'}"
    return all(
        str(spark.conf.get(key, "true")).lower() == "true"
        for key in (convert, "spark.sql.hive.convertInsertingPartitionedTable")
    )


def create_staging_table(
    spark: Any,
    database: str,
    staging: str,
    table: str,
    location: str,
    properties: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Step 1 for a partitioned parquet or ORC table, without per-partition metastore work.

    Creates `database.staging`, external, at `location`, with the table's columns, partition
    columns, file format and format options (its parquet.* / orc.* table properties and its serde
    properties, as Spark's own conversion of a Hive table write uses them), as a Spark datasource
    table whose partitions are found on the filesystem rather than registered in the metastore.
    The rewrite's insert then registers no partition, and dropping the table removes no partition
    either: the two metastore steps that, for a Hive-format staging table, grow with the number
    of partitions rewritten.  The rewritten directories are the same `<location>/<k>=<v>`.
    `properties` are its table properties (its side-table registration).

    {ok, error, created}: created false (with no error) for a table this does not apply to
    (unpartitioned, bucketed, in another format, or written by Hive's own writer because the
    session does not convert its inserts), and false with the error when the catalog refused;
    the caller then creates it with `create table ... like`.
    """
    try:
        jvm = jvm_view(spark)
        catalog = metastore.session_catalog(spark)
        source = catalog.getTableMetadata(metastore.identifier(spark, database, table))
        storage_format = files.storage_format(source)
        if (
            storage_format is None
            or not scala_list(source.partitionColumnNames())
            or source.bucketSpec().isDefined()
        ):
            return result(created=False)
        if metastore.provider(source) == "hive" and not _spark_writes_hive_table(spark, storage_format):
            # Hive's own writer (its defaults, its decimal encoding) writes this table: so must the staging
            return result(created=False)
        options = {
            str(key): str(source.properties().apply(key))
            for key in scala_list(source.properties().keys())
            if str(key).lower().startswith(f"{storage_format}.") or f".{storage_format}." in str(key).lower()
        }
        for key in scala_list(source.storage().properties().keys()):
            if str(key).lower() != "path":
                options[str(key)] = str(source.storage().properties().apply(key))
        none = jvm.scala.Option.empty()
        storage = source.storage().copy(
            jvm.scala.Option.apply(jvm.org.apache.hadoop.fs.Path(location).toUri()),
            none,
            none,
            none,
            source.storage().compressed(),
            scala_map(spark, list(options.items())),
        )
        staging_meta = source.copy(
            metastore.identifier(spark, database, staging),
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
            scala_map(spark, [(str(k), str(v)) for k, v in (properties or {}).items()]),
            none,
            none,
            none,
            source.unsupportedFeatures(),
            False,
            True,
            scala_map(spark, []),
            none,
        )
        catalog.createTable(staging_meta, False, True)
    except Exception as exc:  # noqa: BLE001 - the caller creates the staging table with SQL instead
        return result(exc, created=False)
    return result(created=True)


def forget_external_table(spark: Any, database: str, table: str) -> dict[str, Any]:
    """Forget an external side table: step 5's staging table (its files, now live, are not
    touched), or a failed unpartitioned purge's backup (the live directory).

    Through the catalog rather than `drop table`, which first resolves the table as a query
    (listing its files) to uncache it; a staging table is never cached.  {ok, refused, error}:
    refused for a table that is not external, which the caller must not drop at all.
    """
    try:
        catalog = metastore.session_catalog(spark)
        ident = metastore.identifier(spark, database, table)
        meta = catalog.getTableMetadata(ident)
        if str(meta.tableType().name()) != "EXTERNAL":
            # dropping a managed table deletes its directory, where the swapped partitions now live
            return result(
                f"{database}.{table} is not an external table: not dropped, or its files (now live) would go",
                refused=True,
            )
        catalog.dropTable(ident, True, False)
        catalog.refreshTable(ident)
    except Exception as exc:  # noqa: BLE001 - the caller drops it with SQL instead
        return result(exc, refused=False)
    return result(refused=False)


def forget_later(spark: Any, key: str, database: str, table: str, fallback_sql: str) -> str:
    """`forget_external_table` on a background thread (catalog.background's `call_ahead`), with
    `fallback_sql` (a `drop table`) run there too when the catalog call fails; `catalog_collect(key)`
    gives {ok, refused, error}.  The purge forgets a table's staging table this way, once its
    partitions are swapped, while it writes its results or purges the next table."""
    return background.call_ahead(key, _forget_or_drop, spark, database, table, fallback_sql)


def _forget_or_drop(spark: Any, database: str, table: str, fallback_sql: str) -> dict[str, Any]:
    forgotten = forget_external_table(spark, database, table)
    if forgotten["ok"] or forgotten["refused"]:
        return forgotten
    dropped = tables.execute(spark, fallback_sql)
    return result(None if dropped["ok"] else dropped["error"], refused=False, fallback=forgotten["error"])


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
        meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
        storage_format = files.storage_format(meta)
        if storage_format is None:
            return result("not a parquet or ORC table", partitions=[])
        if meta.tracksPartitionsInCatalog() or metastore.provider(meta) == "hive":
            partitions = tables.list_partitions(spark, database, table)
        else:
            columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
            partitions = files.partition_directories(spark, path_string(spark, meta.location()), columns)
        for part in partitions:
            part["rows"] = files.location_rows(spark, part["location"], storage_format)
    except Exception as exc:  # noqa: BLE001 - the caller falls back to counting with Spark SQL
        return result(exc, partitions=[])
    return result(partitions=partitions)
