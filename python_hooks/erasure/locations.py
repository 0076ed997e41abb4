"""What the erasure verifier reads, decided from the metastore and the filesystem alone.

Never from `purge_log`, the purge's plan or its results: a run that was interrupted, a partition
that a wrong fast count SKIPPED, a table the purge left out, are read all the same.

- **Onboarded tables**: every table of every database in the verification's scope (blank: the
  whole metastore) whose TBLPROPERTIES hold `dataset.descriptor`, whitelisted or not (the
  whitelist says what the purge touches; a data-protection officer expects every table that
  declares an identifier to be checked).  A registered side table is never one of them.
  - `live`: every partition's location (all partitions, not only rewritten ones), or an
    unpartitioned table's location;
  - `table_dir`: a partitioned table's own directory, for the files under it that no partition
    references (what an interrupted rewrite left, a directory no one cleaned).
- **Registered side tables** (`lakehouse.side_table*` properties, catalog.side_tables; never
  their names): `staging`, `backup`, `trash`, the table's location and every partition's.
- **`stale`**: the rows of `stale_data_records` of an onboarded table.
- **`backup_dir`**: `<backup_dir>/<db>/<table>` for every `backup_dir` a retention policy names
  (the var and every row of the policy seed), where retention reaps old backups.
- **`journal`**: every location the purge journal names (catalog.journal: each swap's old and new
  locations and the staging location), whether or not a log recorded the swap.

A location named by several gets the first kind of KINDS.  Each location is read with the schema
of the table it belongs to (a side table's own), and the identifier of the table's descriptor,
resolved in that schema; where the identifier cannot be known or compared with the ids, the
location carries the problem and is reported unread (an error, never a count of 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem, iceberg, metastore, partitions, patterns, side_tables, tables
from python_hooks.catalog.column_types import types_comparable
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.filesystem import path_within
from python_hooks.catalog.journal import Journal
from python_hooks.catalog.jvm import path_string, scala_list
from python_hooks.catalog.patterns import TablePattern
from python_hooks.catalog.tables import DESCRIPTOR, descriptor_identifier
from python_hooks.erasure import delta_copies, iceberg_copies
from python_hooks.errors import error_message

KINDS = (
    "live",
    "staging",
    "trash",
    "backup",
    "backup_dir",
    "stale",
    "journal",
    "table_dir",
    delta_copies.DELTA_VERSION,
    delta_copies.CHANGE_DATA,
    delta_copies.LOG,
    iceberg_copies.ICEBERG_SNAPSHOT,
    iceberg_copies.DELETE_FILE,
    iceberg_copies.METADATA,
)
LIVE = "live"


@dataclass
class Reader:
    """How the files of some locations are read: the schema of `database.table` (partition columns
    left out: the files do not hold them) and the identifier's path in it."""

    database: str
    table: str
    storage_format: str | None = None
    data_schema: Any = None
    identifier_path: list[str] | None = None
    identifier_type: str | None = None
    problem: str | None = None
    # the identifier is a partition column: the partitions' paths hold the ids, so no location of
    # them is recorded (no table of the verifier's holds an id), only the table's own
    ids_in_paths: bool = False
    table_format: str = "hive"  # or `delta`, `iceberg`
    part: str = ""  # what of the table it reads, when not its data files (a Delta table's `log`)
    # an Iceberg table's metadata: the characters of a string identifier a statistic keeps
    string_bound: int | None = 16

    @property
    def key(self) -> str:
        return f"{self.database}.{self.table}" + (f" ({self.part})" if self.part else "")


@dataclass
class Location:
    path: str
    kind: str
    database: str  # the onboarded table it belongs to
    table: str
    referenced_by: str
    reader: str  # a Reader's key


@dataclass
class Inventory:
    scope: str
    onboarded: list[str] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)
    side_tables: list[str] = field(default_factory=list)
    live_partitions: int = 0
    locations: dict[str, Location] = field(default_factory=dict)
    readers: dict[str, Reader] = field(default_factory=dict)
    # the latest purge or restore the metastore and the journal show (epoch ms), None if none
    last_change_ms: int | None = None

    def add(
        self, spark: Any, path: str | None, kind: str, owner: tuple[str, str], referenced_by: str, reader: str
    ) -> None:
        if not path:
            return
        qualified = filesystem.qualify(spark, str(path))
        current = self.locations.get(qualified)
        if current is None or KINDS.index(kind) < KINDS.index(current.kind):
            self.locations[qualified] = Location(qualified, kind, owner[0], owner[1], referenced_by, reader)

    def saw_change(self, epoch_ms: int | None) -> None:
        if epoch_ms is not None and (self.last_change_ms is None or epoch_ms > self.last_change_ms):
            self.last_change_ms = epoch_ms


# ---- scope ---------------------------------------------------------------------------------------
def covered_by(path: str, listed: list[str]) -> bool:
    """Whether a recursive listing of one of `listed` already holds every file under `path`
    (it lies inside it, and no directory between them is hidden from the listing)."""
    for root in listed:
        if path != root and path_within(path, root):
            rest = path[len(root.rstrip("/")) + 1 :].split("/")
            if not any(data_files.not_data(part) for part in rest):
                return True
    return False


def in_scope(scope: list[dict[str, Any]] | None, database: str, table: str) -> bool:
    """Blank scope: everything (the patterns as parse_table_patterns gives them)."""
    return patterns.in_scope([TablePattern.of(p) for p in scope or []], database, table)


def scope_text(scope: list[dict[str, Any]] | None) -> str:
    return ", ".join(str(p.get("text") or p["database"]) for p in scope) if scope else "every database"


# ---- identifiers ---------------------------------------------------------------------------------
def make_reader(spark: Any, meta: Any, field_name: str | None, id_type: str, whose: str) -> Reader:
    """The Reader of a Hive-format table's files, or one that says why they cannot be read."""
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    reader = Reader(database, table)
    reader.storage_format = data_files.storage_format(meta)
    kind = meta.properties().get("table_type")
    if kind.isDefined() and str(kind.get()).upper() == "ICEBERG":
        reader.problem = (
            f"{database}.{table} is an Apache Iceberg table and Iceberg's catalog is not in this session"
            " (docs/formats.md): its snapshots cannot be listed, so it is reported unread, never clean"
        )
        return reader
    if reader.storage_format is None:
        reader.problem = f"{database}.{table} is not a parquet or ORC table: its files cannot be read here"
        return reader
    partition_columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
    return _resolve(reader, tables.read_schema(meta), partition_columns, field_name, id_type, whose)


def delta_readers(
    spark: Any, meta: Any, field_name: str | None, id_type: str, whose: str
) -> tuple[Reader, Reader, delta_copies.DeltaTable | None]:
    """The Readers of a Delta Lake table's data files and of its log, and the table as its log
    describes it (None, and readers that say why, when Delta cannot read it)."""
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    data = Reader(database, table, storage_format="parquet", table_format="delta")
    log = Reader(database, table, storage_format=delta_copies.LOG_FORMAT, table_format="delta", part="log")
    try:
        described = delta_copies.describe(spark, database, table)
    except Exception as exc:  # noqa: BLE001 - reported unread, never clean
        data.problem = log.problem = f"{database}.{table}: Delta could not read it: {error_message(exc)}"
        return data, log, None
    _resolve(data, described.schema, described.partition_columns, field_name, id_type, whose)
    for name in ("problem", "identifier_path", "identifier_type", "ids_in_paths"):
        setattr(log, name, getattr(data, name))
    data.problem = data.problem or delta_copies.data_problem(described, whose)
    log.problem = log.problem or delta_copies.log_problem(whose, log.identifier_type)
    return data, log, described


def iceberg_readers(
    spark: Any, meta: Any, field_name: str | None, id_type: str, whose: str
) -> tuple[Reader, Reader, iceberg_copies.IcebergTable | None]:
    """The Readers of an Iceberg table's data and delete files and of its metadata files, and the
    table as Iceberg's catalog describes it (None, and readers that say why, when it cannot)."""
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    data = Reader(database, table, storage_format="parquet", table_format="iceberg")
    metadata = Reader(
        database,
        table,
        storage_format=iceberg_copies.METADATA_FORMAT,
        table_format="iceberg",
        part="metadata",
    )
    try:
        described = iceberg_copies.describe(spark, database, table, field_name)
    except Exception as exc:  # noqa: BLE001 - reported unread, never clean
        data.problem = metadata.problem = (
            f"{database}.{table}: Iceberg could not read it: {error_message(exc)}"
        )
        return data, metadata, None
    _resolve(data, described.schema, described.partition_columns, field_name, id_type, whose)
    for name in ("problem", "identifier_path", "identifier_type", "ids_in_paths"):
        setattr(metadata, name, getattr(data, name))
    if described.problem:
        data.problem = data.problem or f"{whose}: {described.problem}"
        metadata.problem = metadata.problem or data.problem
    metadata.string_bound = described.string_bound
    metadata.problem = metadata.problem or iceberg_copies.metadata_problem(whose, metadata.identifier_type)
    return data, metadata, described


def _resolve(
    reader: Reader,
    schema: Any,
    partition_columns: list[str],
    field_name: str | None,
    id_type: str,
    whose: str,
) -> Reader:
    """`reader` with the data schema and the identifier's path and type, or the problem."""
    database, table = reader.database, reader.table
    if field_name is None:
        reader.problem = (
            f"the identifier of {whose} is unknown (no usable dataset.descriptor): fix it with "
            f"`dbt run-operation onboard --args '{{table: {whose}, identifier: <field>}}'`"
        )
        return reader
    partitioned = {c.lower() for c in partition_columns}
    resolved = tables.field_in_schema(schema, field_name)
    if resolved is None:
        reader.problem = (
            f"{whose}: its identifier {field_name} is not a column or struct field of {database}.{table}"
        )
        return reader
    if resolved["path"][0].lower() in partitioned:
        reader.problem = (
            f"{whose}: its identifier {field_name} is a partition column, which data files do not hold"
            " (its partitions' directory names hold the ids)"
        )
        reader.ids_in_paths = True
        return reader
    if not types_comparable(resolved["type"], id_type):
        reader.problem = (
            f"{whose}: its identifier {field_name} is {resolved['type']} and the ids are {id_type}: "
            "they cannot be compared safely"
        )
        return reader
    from pyspark.sql.types import StructType

    reader.data_schema = StructType([f for f in schema.fields if f.name.lower() not in partitioned])
    reader.identifier_path = list(resolved["path"])
    reader.identifier_type = resolved["type"]
    return reader


# ---- the inventory -------------------------------------------------------------------------------
def _location(spark: Any, meta: Any) -> str | None:
    option = meta.storage().locationUri()
    return path_string(spark, option.get()) if option.isDefined() else None


def _catalog(spark: Any) -> dict[tuple[str, str], Any]:
    """Every table of the metastore (not views): {(database, table): CatalogTable}, one metastore
    call per database (getTablesByName)."""
    found = {}
    for database in metastore.databases(spark):
        names = metastore.table_names(spark, database)
        for meta in metastore.tables_by_name(spark, database, names):
            if str(meta.tableType().name()) == "VIEW":
                continue
            found[(database.lower(), str(meta.identifier().table()).lower())] = meta
    return found


def _registration(meta: Any, database: str, table: str) -> tuple[str, str, int] | None:
    props = metastore.registration_properties(meta)
    return side_tables.registration(metastore.Table(database, table, "", "", [], properties=props))


def _sort_catalog(
    spark: Any, catalog: dict[tuple[str, str], Any], scope: list[dict[str, Any]] | None, found: Inventory
) -> tuple[dict[tuple[str, str], tuple[Any, tuple[str, str, int]]], dict[tuple[str, str], Any]]:
    """(registered side tables, onboarded tables in scope) of the catalog; onboarded tables out of
    scope go to `found.out_of_scope`."""
    registered: dict[tuple[str, str], tuple[Any, tuple[str, str, int]]] = {}
    onboarded: dict[tuple[str, str], Any] = {}
    for (database, table), meta in sorted(catalog.items()):
        side = _registration(meta, database, table)
        if side is not None:
            registered[(database, table)] = (meta, side)
        elif metastore.table_property(spark, meta, DESCRIPTOR) is not None:
            if in_scope(scope, database, table):
                onboarded[(database, table)] = meta
            else:
                found.out_of_scope.append(f"{database}.{table}")
    return registered, onboarded


def _add_live_tables(
    spark: Any,
    found: Inventory,
    onboarded: dict[tuple[str, str], Any],
    reader_for: Callable[[Any, tuple[str, str]], str],
    delta_for: Callable[[Any, tuple[str, str]], None],
    iceberg_for: Callable[[Any, tuple[str, str]], None],
) -> None:
    """Live tables: every partition, and what lies under a partitioned table's directory; a Delta
    Lake table's every version, change data and log (erasure.delta_copies); an Iceberg table's
    every snapshot's files, delete files and metadata (erasure.iceberg_copies)."""
    iceberg_session = iceberg.in_session(spark)
    for (database, table), meta in onboarded.items():
        owner = (database, table)
        found.onboarded.append(f"{database}.{table}")
        if metastore.provider(meta) == "delta":
            delta_for(meta, owner)
            continue
        if iceberg_session and iceberg.is_iceberg(meta):
            iceberg_for(meta, owner)
            continue
        key = reader_for(meta, owner)
        columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
        if columns and not found.readers[key].ids_in_paths:
            for pairs, location in metastore.partition_locations(spark, database, table, columns):
                found.live_partitions += 1
                spec = partitions.spec_path(pairs)
                found.add(spark, location, "live", owner, f"{database}.{table} partition {spec}", key)
            found.add(
                spark, _location(spark, meta), "table_dir", owner, f"{database}.{table} (its directory)", key
            )
        else:
            found.add(spark, _location(spark, meta), "live", owner, f"{database}.{table}", key)


def _add_side_tables(
    spark: Any,
    found: Inventory,
    scope: list[dict[str, Any]] | None,
    catalog: dict[tuple[str, str], Any],
    onboarded: dict[tuple[str, str], Any],
    registered: dict[tuple[str, str], tuple[Any, tuple[str, str, int]]],
    field_of: Callable[..., str | None],
    reader_for: Callable[[Any, tuple[str, str]], str],
) -> None:
    """Registered side tables, by their properties (a look-alike name is a user's table), with
    their partitions."""
    for (database, name), (meta, (base, kind, created)) in registered.items():
        owner = (database, base.lower())
        if not in_scope(scope, *owner):
            continue
        found.saw_change(created)
        if owner not in onboarded and field_of(*owner, own=meta) is None and owner in catalog:
            continue  # the side table of a table that is not onboarded: no identifier to look for
        found.side_tables.append(f"{database}.{name}")
        key = reader_for(meta, owner)
        where = f"{database}.{name}"
        found.add(spark, _location(spark, meta), kind, owner, where, key)
        columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
        if columns and not found.readers[key].ids_in_paths:
            for pairs, location in metastore.partition_locations(spark, database, name, columns):
                spec = partitions.spec_path(pairs)
                found.add(spark, location, kind, owner, f"{where} partition {spec}", key)


def _add_stale_and_backups(
    spark: Any,
    found: Inventory,
    readable: dict[tuple[str, str], str],
    stale_relation: list[str] | None,
    backup_dirs: list[str],
) -> None:
    """The stale locations of onboarded tables, then their reaped backups under each backup dir."""
    for record in _stale_rows(spark, stale_relation):
        owner = (str(record["database_name"] or "").lower(), str(record["table_name"] or "").lower())
        if owner in readable and record.get("location"):
            reason = f" ({record['reason']})" if record.get("reason") else ""
            found.add(
                spark, record["location"], "stale", owner, "stale_data_records" + reason, readable[owner]
            )
    for directory in sorted({str(d).strip().rstrip("/") for d in backup_dirs or [] if str(d or "").strip()}):
        home = filesystem.qualify(spark, directory)
        for owner, key in readable.items():
            found.add(
                spark, f"{home}/{owner[0]}/{owner[1]}", "backup_dir", owner, f"backup_dir {directory}", key
            )


def _add_journal(
    spark: Any,
    found: Inventory,
    entries: list[Any],
    readable: dict[tuple[str, str], str],
    catalog: dict[tuple[str, str], Any],
    id_type: str,
) -> None:
    """The purge journal: every swap's old and new locations, the staging location."""
    for entry in entries:
        intent = entry.intent
        owner = (intent.database.lower(), intent.table.lower())
        found.saw_change(_journal_ms(intent.started_at))
        if entry.outcome is not None:
            found.saw_change(_journal_ms(entry.outcome.recorded_at))
        key = readable.get(owner) or _journal_reader(spark, found, catalog, intent, id_type)
        where = f"purge journal {intent.run} {intent.name}"
        for swap in intent.partitions:
            spec = f" {swap.partition_spec}" if swap.partition_spec else ""
            found.add(spark, swap.old_location, "journal", owner, f"{where}{spec} (old)", key)
            found.add(spark, swap.new_location, "journal", owner, f"{where}{spec} (new)", key)
        found.add(spark, intent.staging_location, "journal", owner, f"{where} (staging)", key)


def inventory(
    spark: Any,
    scope: list[dict[str, Any]] | None,
    id_type: str,
    backup_dirs: list[str],
    stale_relation: list[str] | None,
) -> Inventory:
    """Every location the verification reads (see the module doc)."""
    found = Inventory(scope_text(scope))
    catalog = _catalog(spark)
    registered, onboarded = _sort_catalog(spark, catalog, scope, found)
    entries = [e for e in Journal(spark).read_entries() if in_scope(scope, e.intent.database, e.intent.table)]
    journal_fields = {
        (e.intent.database.lower(), e.intent.table.lower()): e.intent.identifier_field for e in entries
    }

    def field_of(database: str, table: str, own: Any = None) -> str | None:
        base = onboarded.get((database, table))
        for meta in (base, own):
            if meta is not None:
                name = descriptor_identifier(metastore.table_property(spark, meta, DESCRIPTOR))
                if name:
                    return name
        return journal_fields.get((database, table))

    def reader_for(meta: Any, owner: tuple[str, str]) -> str:
        reader = make_reader(spark, meta, field_of(*owner, own=meta), id_type, f"{owner[0]}.{owner[1]}")
        found.readers.setdefault(reader.key, reader)
        return reader.key

    def delta_for(meta: Any, owner: tuple[str, str]) -> None:
        whose = f"{owner[0]}.{owner[1]}"
        data, log, described = delta_readers(spark, meta, field_of(*owner), id_type, whose)
        found.readers.setdefault(data.key, data)
        found.readers.setdefault(log.key, log)
        if described is not None:
            try:
                delta_copies.add_locations(spark, found, described, owner, (data.key, log.key))
                return
            except Exception as exc:  # noqa: BLE001 - reported unread, never clean; the others go on
                data.problem = log.problem = (
                    f"{whose}: its versions could not be listed: {error_message(exc)}"
                )
        location = _location(spark, meta)
        found.add(spark, location, "live", owner, whose, data.key)
        found.add(
            spark, f"{location}/_delta_log" if location else None, delta_copies.LOG, owner, whose, log.key
        )

    def iceberg_for(meta: Any, owner: tuple[str, str]) -> None:
        whose = f"{owner[0]}.{owner[1]}"
        data, metadata, described = iceberg_readers(spark, meta, field_of(*owner), id_type, whose)
        deletes = replace(
            data, part=iceberg_copies.DELETE_PART, data_schema=iceberg_copies.with_row(data.data_schema)
        )
        deletes.problem = deletes.problem or iceberg_copies.row_problem(deletes.data_schema, whose)
        for reader in (data, metadata, deletes):
            found.readers.setdefault(reader.key, reader)
        if described is not None:
            try:
                iceberg_copies.add_locations(
                    spark, found, described, owner, (data.key, metadata.key, deletes.key)
                )
                return
            except Exception as exc:  # noqa: BLE001 - reported unread, never clean; the others go on
                data.problem = metadata.problem = deletes.problem = (
                    f"{whose}: its snapshots could not be listed: {error_message(exc)}"
                )
        found.add(spark, _location(spark, meta), "live", owner, whose, data.key)

    _add_live_tables(spark, found, onboarded, reader_for, delta_for, iceberg_for)
    _add_side_tables(spark, found, scope, catalog, onboarded, registered, field_of, reader_for)
    readable = {owner: f"{owner[0]}.{owner[1]}" for owner in onboarded}
    _add_stale_and_backups(spark, found, readable, stale_relation, backup_dirs)
    _add_journal(spark, found, entries, readable, catalog, id_type)
    return found


def _journal_reader(spark: Any, found: Inventory, catalog: dict, intent: Any, id_type: str) -> str:
    """For a journal entry whose table is not onboarded (or gone): the table's schema, else its
    backup's, with the identifier the journal recorded."""
    for qualified in (f"{intent.database}.{intent.table}", intent.backup_table):
        database, _, table = str(qualified or "").lower().partition(".")
        meta = catalog.get((database, table))
        if meta is not None:
            reader = make_reader(spark, meta, intent.identifier_field, id_type, intent.name)
            found.readers.setdefault(reader.key, reader)
            return reader.key
    reader = Reader(intent.database.lower(), intent.table.lower())
    reader.problem = (
        f"{intent.name} and its backup {intent.backup_table} no longer exist: no schema to read its copies"
    )
    found.readers.setdefault(reader.key, reader)
    return reader.key


def _journal_ms(text: str | None) -> int | None:
    """A journal time (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC) as epoch ms."""
    from datetime import datetime, timezone

    if not text:
        return None
    try:
        return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp() * 1000)
    except ValueError:
        return None


def _stale_rows(spark: Any, relation: list[str] | None) -> list[dict[str, Any]]:
    if not relation or not metastore.table_exists(spark, relation[0], relation[1]):
        return []
    return [
        r.asDict()
        for r in metastore.read_table(spark, relation[0], relation[1])
        .select("database_name", "table_name", "location", "reason")
        .collect()
    ]


# ---- what changed in the warehouse, for the ledger ----------------------------------------------
def warehouse_changes(spark: Any, scope: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Everything that may have changed what a verification read, in scope, with when it happened:
    [{source, kind, invocation_id, database_name, table_name, happened_us}] (epoch microseconds).

    - `side_table`: a registered staging, backup (a purge) or trash (a restore) table, at its
      `lakehouse.side_table.created_at`;
    - `journal`: a purge journal entry, at its intent and at its outcome;
    - `files` (kind `write`): the newest data file under each onboarded table's directory and
      partitions, whoever wrote it (a rebuild, a late load, a job outside dbt).
    The ledger takes the purge runs that its own log does not attribute to a request (an
    interrupted run, a run whose log was not appended) and the writes since a verification from
    here.
    """
    changes = []
    onboarded = []
    for (database, table), meta in sorted(_catalog(spark).items()):
        side = _registration(meta, database, table)
        if side is None:
            if (
                in_scope(scope, database, table)
                and metastore.table_property(spark, meta, DESCRIPTOR) is not None
            ):
                onboarded.append((meta, database, table))
            continue
        if not in_scope(scope, database, side[0]):
            continue
        props = metastore.registration_properties(meta)
        changes.append(
            {
                "source": "side_table",
                "kind": side[1],
                "invocation_id": props.get("lakehouse.side_table.invocation_id"),
                "database_name": database,
                "table_name": side[0].lower(),
                "happened_us": side[2] * 1000,
            }
        )
    changes += _writes(spark, onboarded)
    for entry in Journal(spark).read_entries():
        intent = entry.intent
        if not in_scope(scope, intent.database, intent.table):
            continue
        times = [intent.started_at] + ([entry.outcome.recorded_at] if entry.outcome else [])
        for text in times:
            ms = _journal_ms(text)
            if ms is not None:
                changes.append(
                    {
                        "source": "journal",
                        "kind": "purge",
                        "invocation_id": intent.invocation_id,
                        "database_name": intent.database.lower(),
                        "table_name": intent.table.lower(),
                        "happened_us": ms * 1000,
                    }
                )
    return changes


def _writes(spark: Any, onboarded: list[tuple[Any, str, str]]) -> list[dict[str, Any]]:
    """The newest data file of each onboarded table: under its directory and the partitions outside
    it, listed recursively through the Hadoop FileSystem in one batched call for every table
    (catalog/file_facts.py; names starting with `_` or `.` are not data)."""
    roots: dict[tuple[str, str], list[str]] = {}
    for meta, database, table in onboarded:
        found = [str(_location(spark, meta))]
        columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
        if columns:
            for _, location in metastore.partition_locations(spark, database, table, columns):
                if location and location not in found and not covered_by(location, found):
                    found.append(location)
        roots[(database, table)] = found
    listings = FileFacts(spark).list(sorted({r for found in roots.values() for r in found}), recursive=True)
    changes = []
    for (database, table), found in roots.items():
        stamps = [item.modified for root in found if root in listings for item in listings[root].files]
        if stamps:
            changes.append(
                {
                    "source": "files",
                    "kind": "write",
                    "invocation_id": None,
                    "database_name": database,
                    "table_name": table,
                    "happened_us": max(stamps) * 1000,
                }
            )
    return changes
