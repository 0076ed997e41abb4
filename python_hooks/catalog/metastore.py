"""The Hive metastore as plain Python: tables, their locations and partitions, and metadata-only drops.

Retention and restore must know every location the metastore references before deleting anything,
and must be able to forget a table or partition WITHOUT the metastore deleting its files (Hive
deletes a managed table's partition directories on drop, wherever they are).  Everything here goes
through Spark's session catalog (no SQL text, so no identifier or literal escaping), and every
metadata change refreshes Spark's cached view of the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py4j.protocol import Py4JJavaError

from python_hooks.catalog import console
from python_hooks.catalog.jvm import compiled, path_string, scala_list, scala_map, scala_seq, string_array
from python_hooks.catalog.jvm import jvm as jvm_view
from python_hooks.catalog.literals import string_literal
from python_hooks.catalog.partitions import spec_path
from python_hooks.errors import LakehouseError, StatementError, error_message, first_line


@dataclass
class Partition:
    """One partition of a table: its values, [(column, unescaped value)] in partition-column order
    (none for an unpartitioned table taken whole), and its location.  The one partition class of the
    product: the purge's rewrite of one (purge/plan.py `PartitionRewrite`) extends it."""

    pairs: list[tuple[str, str]]
    location: str

    @property
    def spec(self) -> str:
        """`k=v/k2=v2`, unescaped (the form users type and logs show): `ds=10:00`."""
        return "/".join(f"{k}={v}" for k, v in self.pairs)

    @property
    def path(self) -> str:
        """Hive's directory name for it, path-escaped as `show partitions` prints it: `ds=10%3A00`
        ('' for an unpartitioned table)."""
        return spec_path(self.pairs)


@dataclass
class Table:
    database: str
    name: str
    table_type: str
    location: str
    partition_columns: list[str]
    partitions: list[Partition] = field(default_factory=list)
    # the side-table registration (`lakehouse.side_table*` table properties), when it has one
    properties: dict[str, str] = field(default_factory=dict)
    # the table's provider, lower case: `hive`, `parquet`, `delta`..., or `iceberg` (table_format)
    format: str = "hive"

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_columns)

    def locations(self) -> list[str]:
        """Every location this table references: its own, and each partition's."""
        return (
            [self.location, *(p.location for p in self.partitions)]
            if self.location
            else [p.location for p in self.partitions]
        )


def provider(meta: Any) -> str:
    """A CatalogTable's provider, lower case: `hive` for a Hive-format table, `parquet`, `json`..."""
    return str(meta.provider().get()).lower() if meta.provider().isDefined() else "hive"


def table_format(meta: Any) -> str:
    """`iceberg` for a metastore entry of Iceberg's Hive catalog (its `table_type` property), else
    the provider (`hive`, `parquet`, `delta`...)."""
    from python_hooks.catalog.iceberg import is_iceberg

    return "iceberg" if is_iceberg(meta) else provider(meta)


def table_property(spark: Any, meta: Any, key: str) -> str | None:
    """A table's property `key`, or None: the metastore's, else, for a Delta Lake table, its log's
    (Delta keeps a table's properties there, not in the metastore: one read of the table's latest
    metadata through Delta, made only when the metastore has no such property)."""
    found = meta.properties().get(key)
    if found.isDefined():
        return str(found.get())
    if provider(meta) != "delta":
        return None
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    for row in spark.sql(f"show tblproperties `{database}`.`{table}`").collect():
        if row[0] == key:
            return str(row[1])
    return None


def table_properties(spark: Any, meta: Any) -> dict[str, str]:
    """A table's properties: the metastore's, and, for a Delta Lake table, its log's over them
    (one read of its latest metadata through Delta, as `table_property` makes)."""
    as_java = (
        jvm_view(spark).scala.collection.JavaConverters.mapAsJavaMapConverter(meta.properties()).asJava()
    )
    found = {str(k): str(v) for k, v in dict(as_java).items()}
    if provider(meta) == "delta":
        database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
        found.update(
            {str(r[0]): str(r[1]) for r in spark.sql(f"show tblproperties `{database}`.`{table}`").collect()}
        )
    return found


def schema_json(spark: Any, meta: Any) -> dict[str, Any]:
    """A table's schema as Spark's JSON dict: the metastore's, else, for a Delta Lake table (whose
    metastore entry holds no columns), its log's latest, read through Delta.

    A Delta table whose log cannot be read raises a LakehouseError naming it: its columns are
    unknown, so nothing may be said about what it holds."""
    schema = json.loads(str(meta.schema().json()))
    if schema.get("fields") or provider(meta) != "delta":
        return schema
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    try:
        return spark.table(f"{quote(database)}.{quote(table)}").schema.jsonValue()
    except Exception as exc:
        raise LakehouseError(
            f"{database}.{table}: the columns of this Delta Lake table cannot be read from its log"
            f" ({first_line(exc)}). Repair the table, or drop it if it is abandoned."
        ) from exc


def quote(name: str) -> str:
    """A name between backticks, for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def session_catalog(spark: Any) -> Any:
    """Spark's SessionCatalog (it formats names as SQL does and refreshes what it caches)."""
    return spark._jsparkSession.sessionState().catalog()


def identifier(spark: Any, database: str, table: str) -> Any:
    """A TableIdentifier `database.table`."""
    jvm = jvm_view(spark)
    return jvm.org.apache.spark.sql.catalyst.TableIdentifier(table, jvm.scala.Option.apply(database))


def databases(spark: Any) -> list[str]:
    return sorted(str(d) for d in scala_list(session_catalog(spark).externalCatalog().listDatabases()))


def table_names(spark: Any, database: str) -> list[str]:
    return sorted(str(t) for t in scala_list(session_catalog(spark).externalCatalog().listTables(database)))


def schema_fields(meta: Any) -> list[dict[str, Any]]:
    """A CatalogTable's columns as Spark's schema JSON ({name, type, ...}; `type` is `long`,
    `string`, `decimal(10,2)`, ... or a dict for a complex type), in one JVM call for all."""
    return list(json.loads(str(meta.schema().json()))["fields"])


def tables_by_name(spark: Any, database: str, names: list[str]) -> list[Any]:
    """The CatalogTables of those of `names` that exist in `database` (none when it does not exist),
    in one metastore call (Hive's getTableObjectsByName), whatever their number."""
    external = session_catalog(spark).externalCatalog()
    if not names or not external.databaseExists(database):
        return []
    return scala_list(external.getTablesByName(database, scala_seq(spark, list(names))))


def tables_by_names(spark: Any, names: list[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    """The CatalogTables of those of `names` ((database, table)) that exist, keyed by the lower
    case pair: `tables_by_name` once per database, whatever the number of tables."""
    by_database: dict[str, set[str]] = {}
    for database, table in names:
        by_database.setdefault(database.lower(), set()).add(table.lower())
    return {
        (database, str(meta.identifier().table()).lower()): meta
        for database, tables in by_database.items()
        for meta in tables_by_name(spark, database, sorted(tables))
    }


def table_exists(spark: Any, database: str, table: str) -> bool:
    """Whether `database.table` exists (names matched as Spark SQL matches them)."""
    return bool(session_catalog(spark).tableExists(identifier(spark, database, table)))


def list_partitions(spark: Any, database: str, table: str) -> list[Any]:
    """Every partition of a table, as the catalog's CatalogTablePartition objects.

    Asked as a filter without predicates: Hive answers that with its direct-SQL path, much
    faster than the plain listing, which loads every partition through the ORM with its
    authorization info (docs/benchmarks.md has the figures).
    """
    return scala_list(_all_partitions(spark, database, table))


def _all_partitions(spark: Any, database: str, table: str) -> Any:
    """The Seq[CatalogTablePartition] of every partition (see list_partitions for why a filter)."""
    no_predicates = jvm_view(spark).org.apache.spark.api.python.PythonUtils.toSeq([])
    return session_catalog(spark).listPartitionsByFilter(identifier(spark, database, table), no_predicates)


READS = Path(__file__).with_name("CatalogReads.java")


def partition_locations_of(
    spark: Any, tables: list[tuple[str, str, list[str]]]
) -> list[list[tuple[list[tuple[str, str]], str]] | str]:
    """For each (database, table, partition columns), in order: [(pairs, location)] of every
    partition, or the message of what stopped its listing (the table dropped meanwhile, a
    partition without a location).  One call for all the tables (CatalogReads.java): walking the
    listing from Python costs about six py4j round trips per partition.  Locations as
    `jvm.path_string` gives them."""
    if not tables:
        return []
    text = compiled(spark, READS, "lakehouse.CatalogReads").partitionLocations(
        session_catalog(spark),
        string_array(spark, [database for database, _, _ in tables]),
        string_array(spark, [table for _, table, _ in tables]),
        scala_seq(spark, []),
        str(spark.conf.get("spark.sql.session.timeZone")),
    )
    found: list[list[tuple[list[tuple[str, str]], str]] | str] = []
    for (_, _, columns), item in zip(tables, json.loads(str(text)), strict=True):
        if "error" in item:
            found.append(str(item["error"]))
            continue
        if any(c not in spec for spec, _ in item["partitions"] for c in columns):
            found.append(f"its partitions are not keyed by the columns {', '.join(columns)}")
            continue
        found.append(
            [([(c, str(spec[c])) for c in columns], str(location)) for spec, location in item["partitions"]]
        )
    return found


def partition_locations(
    spark: Any, database: str, table: str, columns: list[str]
) -> list[tuple[list[tuple[str, str]], str]]:
    """[(pairs, location)] of every partition (`partition_locations_of` for one table); raises
    StatementError, naming the table, when they cannot be listed."""
    (found,) = partition_locations_of(spark, [(database, table, columns)])
    if isinstance(found, str):
        raise StatementError(f"The partitions of {database}.{table} could not be listed: {found}")
    return found


def partition_pairs(part: Any, columns: list[str]) -> list[tuple[str, str]]:
    """A CatalogTablePartition's spec as [(column, unescaped value)] in `columns` order."""
    spec = part.spec()
    return [(c, str(spec.apply(c))) for c in columns]


def get_table(spark: Any, database: str, table: str, with_partitions: bool = True) -> Table | None:
    """The table's type, location and partitions (locations fully qualified), or None if missing/a view."""
    external = session_catalog(spark).externalCatalog()
    if not external.tableExists(database, table):
        return None
    meta = external.getTable(database, table)
    table_type = str(meta.tableType().name())
    if table_type == "VIEW":
        return None
    location_option = meta.storage().locationUri()
    location = path_string(spark, location_option.get()) if location_option.isDefined() else ""
    columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
    result = Table(
        database,
        table,
        table_type,
        location,
        columns,
        properties=registration_properties(meta),
        format=table_format(meta),
    )
    if columns and with_partitions:
        for pairs, location in partition_locations(spark, database, table, columns):
            result.partitions.append(Partition(pairs, location))
    return result


REGISTRATION_KEYS = (
    "lakehouse.side_table",
    "lakehouse.side_table.of",
    "lakehouse.side_table.created_at",
    "lakehouse.side_table.invocation_id",
)


def registration_properties(meta: Any) -> dict[str, str]:
    """The `lakehouse.side_table*` properties of a CatalogTable (see catalog.side_tables)."""
    found = {}
    for key in REGISTRATION_KEYS:
        value = meta.properties().get(key)
        if value.isDefined():
            found[key] = str(value.get())
    return found


def all_tables(spark: Any, with_partitions: bool = True) -> list[Table]:
    """Every table (not view) in the metastore, with partitions unless `with_partitions` is false
    (then `load_partitions` lists one table's when it is needed)."""
    tables = []
    for database in databases(spark):
        for name in table_names(spark, database):
            table = get_table(spark, database, name, with_partitions)
            if table is not None:
                tables.append(table)
    return tables


def load_partitions(spark: Any, table: Table) -> Table:
    """`table` with its partitions listed, when `get_table` left them out; the same object."""
    if table.partition_columns and not table.partitions:
        for pairs, location in partition_locations(
            spark, table.database, table.name, table.partition_columns
        ):
            table.partitions.append(Partition(pairs, location))
    return table


def refresh(spark: Any, database: str, table: str) -> None:
    try:
        session_catalog(spark).refreshTable(identifier(spark, database, table))
    except Exception:  # noqa: BLE001 - a table that is gone has nothing cached to refresh
        pass


def drop_partition_metadata(spark: Any, database: str, table: str, pairs: list[tuple[str, str]]) -> None:
    """Forget one partition; its files stay where they are (retainData)."""
    jvm = jvm_view(spark)
    specs = jvm.org.apache.spark.api.python.PythonUtils.toSeq([scala_map(spark, pairs)])
    session_catalog(spark).dropPartitions(identifier(spark, database, table), specs, True, False, True)
    refresh(spark, database, table)


def set_partition_locations(
    spark: Any, database: str, table: str, moves: list[tuple[list[tuple[str, str]], str]]
) -> None:
    """Point partitions at other directories, all in one `alterPartitions` (metadata only): one
    metastore transaction, Hive's `alter_partitions`, so that a reader sees all of them move or none.

    `moves` is [(pairs, location), ...], the values unescaped.  Does what `alter table ...
    partition (...) set location` does for each (the same catalog calls: read the partition,
    alter it, refresh the table, drop its now stale statistics), reading the partitions by their
    specs in one filtered listing (`partitions_by_specs`), not the table's whole listing (a table
    may hold thousands) nor one `getPartition` each.
    """
    jvm = jvm_view(spark)
    catalog = session_catalog(spark)
    ident = identifier(spark, database, table)
    table_meta = catalog.getTableRawMetadata(ident)
    found = partitions_by_specs(spark, database, table, [pairs for pairs, _ in moves], table_meta)
    changed = []
    for (_, location), part in zip(moves, found, strict=True):
        moved = storage_at(spark, part.storage(), location)
        changed.append(
            part.copy(
                part.spec(), moved, part.parameters(), part.createTime(), part.lastAccessTime(), part.stats()
            )
        )
    catalog.alterPartitions(ident, jvm.org.apache.spark.api.python.PythonUtils.toSeq(changed))
    # the public refresh also drops cached data of the table, as ALTER TABLE does
    spark.catalog.refreshTable(table_name(database, table))
    jvm.org.apache.spark.sql.execution.command.CommandUtils.updateTableStats(spark._jsparkSession, table_meta)


def storage_at(spark: Any, storage: Any, location: str) -> Any:
    """A CatalogStorageFormat as `storage`, at `location`."""
    jvm = jvm_view(spark)
    return storage.copy(
        jvm.scala.Option.apply(jvm.org.apache.hadoop.fs.Path(str(location)).toUri()),
        storage.inputFormat(),
        storage.outputFormat(),
        storage.serde(),
        storage.compressed(),
        storage.properties(),
    )


def add_partitions(
    spark: Any, database: str, table: str, parts: list[tuple[list[tuple[str, str]], str]]
) -> None:
    """Register partitions at existing directories, those not there already, in one
    `createPartitions` of the catalog (metadata only: Hive's `add_partitions`, one transaction).

    `parts` is [(pairs, location), ...], the values unescaped.  Does what `alter table ... add if
    not exists partition (...) location '...'` does for each, each partition with the table's
    storage format, without the statement's own reads of the table (its analysis, the refresh and
    the statistics of a table no one reads): a few metastore calls instead of a few dozen."""
    if not parts:
        return
    jvm = jvm_view(spark)
    catalog = session_catalog(spark)
    ident = identifier(spark, database, table)
    storage = catalog.getTableRawMetadata(ident).storage()
    made = [
        jvm.org.apache.spark.sql.catalyst.catalog.CatalogTablePartition(
            scala_map(spark, pairs),
            storage_at(spark, storage, location),
            scala_map(spark, []),
            jvm.java.lang.System.currentTimeMillis(),
            -1,
            jvm.scala.Option.apply(None),
        )
        for pairs, location in parts
    ]
    catalog.createPartitions(ident, jvm.org.apache.spark.api.python.PythonUtils.toSeq(made), True)


SPECS_PER_CALL = 100  # the filter of one listing stays small for Hive's parser and its direct SQL


def partitions_by_specs(
    spark: Any, database: str, table: str, specs: list[list[tuple[str, str]]], meta: Any = None
) -> list[Any]:
    """The CatalogTablePartition of each spec ([(column, unescaped value)], every partition column
    once), in order, from one filtered listing per SPECS_PER_CALL specs (CatalogReads.java), or,
    where the metastore refuses the filter (a column name its filter grammar cannot parse, a filter
    its ORM cannot run), one `getPartition` each; raises StatementError naming the partition when
    the catalog has none with that spec.  `meta`: the table's CatalogTable when the caller has it."""
    if not specs:
        return []
    if meta is None:
        meta = session_catalog(spark).getTableRawMetadata(identifier(spark, database, table))
    columns = [str(column) for column, _ in specs[0]]
    held = sorted(str(c).lower() for c in scala_list(meta.partitionColumnNames()))
    for pairs in specs:
        named = [str(column) for column, _ in pairs]
        if named != columns or sorted(c.lower() for c in named) != held:
            raise StatementError(
                f"{database}.{table}: the partition spec {pairs} does not name each of its partition"
                f" columns ({', '.join(held)}) once"
            )
    found: list[Any] = []
    for start in range(0, len(specs), SPECS_PER_CALL):
        chunk = specs[start : start + SPECS_PER_CALL]
        try:
            parts = list(_listed_by_specs(spark, meta, columns, chunk))
        except Py4JJavaError as exc:
            console.debug(
                f"{database}.{table}: reading {len(chunk)} partition(s) in one filtered listing failed"
                f" ({first_line(exc)}); one by one"
            )
            parts = [_partition_or_none(spark, meta, pairs) for pairs in chunk]
        for pairs, part in zip(chunk, parts, strict=True):
            if part is None:
                spec = "/".join(f"{column}={value}" for column, value in pairs)
                raise StatementError(f"{database}.{table} has no partition {spec}")
            found.append(part)
    return found


def _listed_by_specs(spark: Any, meta: Any, columns: list[str], chunk: list[list[tuple[str, str]]]) -> Any:
    values = [str(value) for pairs in chunk for _, value in pairs]  # row after row
    return compiled(spark, READS, "lakehouse.CatalogReads").partitionsBySpecs(
        session_catalog(spark),
        meta,
        string_array(spark, columns),
        string_array(spark, values),
        spark._jsparkSession.sessionState().conf(),
    )


def _partition_or_none(spark: Any, meta: Any, pairs: list[tuple[str, str]]) -> Any:
    ident = meta.identifier()
    found = (
        session_catalog(spark)
        .externalCatalog()
        .getPartitionOption(
            ident.database().get(), ident.table(), scala_map(spark, [(str(k), str(v)) for k, v in pairs])
        )
    )
    return found.get() if found.isDefined() else None


def set_partition_location(
    spark: Any, database: str, table: str, pairs: list[tuple[str, str]], location: str
) -> None:
    """Point one partition at another directory (metadata only)."""
    set_partition_locations(spark, database, table, [(pairs, location)])


EDITS = Path(__file__).with_name("CatalogEdits.java")


def _with_properties(spark: Any, meta: Any, updates: dict[str, str]) -> Any:
    """A copy of a CatalogTable with `updates` added to its properties (Scala's `copy(properties =)`,
    every other field passed by its accessor: CatalogEdits.java)."""
    properties = meta.properties()
    for key, value in updates.items():
        properties = properties.updated(key, value)
    return compiled(spark, EDITS, "lakehouse.CatalogEdits").withProperties(meta, properties)


def set_table_properties(
    spark: Any, database: str, updates: dict[str, dict[str, str]]
) -> dict[str, str | None]:
    """Add table properties to many tables of one database: {table: {key: value}} -> {table: error or None}.

    What `alter table ... set tblproperties` does, at a fraction of its cost: the tables' raw
    entries are read in one metastore call (getTablesByName), and each is written back with its
    properties added, straight through the Hive client (`alter table` reads the table twice more
    and analyses a statement for each).  The entry written back is the raw one, with Spark's own
    properties (schema, provider, statistics) as they were.  Where the Hive client is not
    available (another catalog) or refuses a table, that table goes through the session catalog,
    as `alter table` does.  A Delta Lake table's properties go to its log, by `alter table`, and
    an Iceberg table's to its metadata, by `alter table` through Iceberg's catalog (the metastore
    entry alone is not what Iceberg reads).  Spark's cached relation of each table is dropped.
    """
    from python_hooks.catalog import iceberg

    catalog = session_catalog(spark)
    try:
        client = catalog.externalCatalog().unwrapped().client()
        raw = {
            str(m.identifier().table()).lower(): m
            for m in scala_list(client.getTablesByName(database, scala_seq(spark, list(updates))))
        }
    except Exception:  # noqa: BLE001 - not a Hive catalog: every table through the session catalog
        client, raw = None, {}
    outcome: dict[str, str | None] = {}
    for table, properties in updates.items():
        ident = identifier(spark, database, table)
        try:
            entry = raw.get(table.lower())
            meta = entry if entry is not None else catalog.getTableRawMetadata(ident)
            if _is_delta(meta):
                _alter_delta(spark, database, table, properties)
            elif iceberg.is_iceberg(meta):
                iceberg.set_properties(spark, database, table, properties)
            elif not _alter_through_client(spark, client, entry, properties):
                catalog.alterTable(_with_properties(spark, catalog.getTableRawMetadata(ident), properties))
            catalog.invalidateCachedTable(ident)
            outcome[table] = None
        except Exception as exc:  # noqa: BLE001 - reported per table to the caller
            outcome[table] = error_message(exc)
    return outcome


def _is_delta(meta: Any) -> bool:
    """Whether a table's entry (raw, as the Hive client reads it, or the catalog's) is Delta Lake's."""
    raw_provider = meta.properties().get("spark.sql.sources.provider")
    return provider(meta) == "delta" or (
        raw_provider.isDefined() and str(raw_provider.get()).lower() == "delta"
    )


def _alter_delta(spark: Any, database: str, table: str, properties: dict[str, str]) -> None:
    """A Delta Lake table's properties live in its log, where Delta and its readers look: written
    as one commit (`alter table ... set tblproperties`), never into the metastore entry alone."""
    pairs = ", ".join(f"{string_literal(key)} = {string_literal(value)}" for key, value in properties.items())
    spark.sql(f"alter table {quote(database)}.{quote(table)} set tblproperties ({pairs})")


def _alter_through_client(spark: Any, client: Any, meta: Any, properties: dict[str, str]) -> bool:
    """Write a raw entry back with `properties` added through the Hive client; False when there
    is no client or entry, or the client refuses (the caller goes through the session catalog)."""
    if client is None or meta is None:
        return False
    try:
        client.alterTable(_with_properties(spark, meta, properties))
    except Exception:  # noqa: BLE001 - the session catalog's way instead
        return False
    return True


def set_table_location(spark: Any, database: str, table: str, location: str) -> None:
    """Point a table at another directory (metadata only)."""
    jvm = jvm_view(spark)
    catalog = session_catalog(spark)
    meta = catalog.getTableMetadata(identifier(spark, database, table))
    storage = meta.storage()
    new_meta = meta.withNewStorage(
        jvm.scala.Option.apply(jvm.org.apache.hadoop.fs.Path(location).toUri()),
        storage.inputFormat(),
        storage.outputFormat(),
        storage.compressed(),
        storage.serde(),
        storage.properties(),
    )
    catalog.alterTable(new_meta)
    refresh(spark, database, table)


def drop_table_metadata(spark: Any, table: Table, scratch: str) -> None:
    """Forget a table and its partitions; no file it references is deleted by the metastore.

    Partitions are dropped with retainData.  A managed table's own directory would be deleted by
    Hive on drop, so it is first pointed at `scratch` (an empty directory the caller owns).
    """
    for part in table.partitions:
        drop_partition_metadata(spark, table.database, table.name, part.pairs)
    if table.table_type == "MANAGED":
        set_table_location(spark, table.database, table.name, scratch)
    session_catalog(spark).dropTable(identifier(spark, table.database, table.name), True, False)


def drop_external_table(spark: Any, database: str, table: str) -> None:
    """Forget an external table and its partitions, if it exists; the metastore deletes none of its
    files.  What `drop table if exists` does for it, without the statement's own reads of the
    table: a few metastore calls instead of a dozen.  Raises StatementError for a managed table
    (its drop would delete its directory)."""
    catalog = session_catalog(spark)
    ident = identifier(spark, database, table)
    if not catalog.tableExists(ident):
        return
    kind = str(catalog.getTableRawMetadata(ident).tableType().name())
    if kind != "EXTERNAL":
        raise StatementError(f"{database}.{table} is a {kind.lower()} table: not dropped, its files would go")
    catalog.dropTable(ident, True, False)
    catalog.invalidateCachedTable(ident)


def create_table_like(
    spark: Any,
    database: str,
    table: str,
    like: str,
    location: str,
    properties: dict[str, str],
    if_not_exists: bool = False,
) -> None:
    """What `create table [if not exists] <database>.<table> like <database>.<like> location
    '<location>' tblproperties (...)` does, as the catalog's own `createTable` (metadata only):
    an external table of `like`'s schema, storage format, provider, partition columns and buckets
    at `location`, with `properties` only (CatalogEdits.java `likeAt`), without the statement's
    analysis and its reads of both tables: a few metastore calls instead of a dozen or two.
    Raises as the statement does when the table exists and `if_not_exists` is False."""
    catalog = session_catalog(spark)
    source = catalog.getTableRawMetadata(identifier(spark, database, like))
    made = compiled(spark, EDITS, "lakehouse.CatalogEdits").likeAt(
        source,
        identifier(spark, database, table),
        storage_at(spark, source.storage(), location),
        scala_map(spark, [(str(k), str(v)) for k, v in properties.items()]),
    )
    catalog.createTable(made, if_not_exists, True)


def table_name(database: str, table: str) -> str:
    """`db`.`t` for Spark's table-name parser (DataFrame reads and writes take no identifier object)."""
    return f"{quote(database)}.{quote(table)}"


def read_table(spark: Any, database: str, table: str) -> Any:
    return spark.table(table_name(database, table))


def overwrite_table(frame: Any, database: str, table: str) -> None:
    frame.write.insertInto(table_name(database, table), overwrite=True)
    refresh(frame.sparkSession, database, table)
