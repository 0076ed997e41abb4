"""Verification of bytes: the rows still holding a request's ids, per location, under its purged tables.

For each table a request's purge runs rewrote, the locations that can hold its bytes are:

- `live`: the current location of each partition the runs COMMITTED (the table's own location for
  an unpartitioned table);
- `backup`, `staging`, `trash`: every location of the table's registered side tables
  (`lakehouse.side_table*` properties, catalog.side_tables), the tables and their partitions;
- `backup_dir`: `<backup_dir>/<db>/<table>`, where retention reaps old backups, when configured;
- `stale`: the table's rows of `stale_data_records`, and the runs' logged `old_location` /
  `new_location` that nothing references any more (a pre-purge copy that should be gone).

A location that several of these name gets the first kind in that order.  Every data file under
each location is listed (recursively; names starting with `_` or `.` are not data, as for Spark),
and each file belongs to the deepest location that holds it, so nothing is counted twice (the
backup of an unpartitioned table is the table's old directory, which holds the live `_purge_<ts>`).
Files whose footers prove they hold none of the ids are skipped (erasure.footers); the rest are
read in one Spark job per table: the table's data schema over exactly those files, a broadcast
semi-join with the ids, rows counted per file.  Nothing outside these locations is listed or
read: the cost grows with the files of the purged partitions and their copies, not with the
warehouse.

The ids stay in memory: they are read from the id table by the caller's SQL and never written;
the result rows hold counts and locations only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from dbt.adapters.lakehouse import filesystem, partitions
from dbt.adapters.lakehouse.filesystem import path_within

from python_hooks.catalog import files as data_files
from python_hooks.catalog import metastore, tables
from python_hooks.catalog.jvm import scala_list
from python_hooks.catalog.side_tables import named_side_tables
from python_hooks.erasure import footers
from python_hooks.errors import error_message

KINDS = ("live", "staging", "trash", "backup", "backup_dir", "stale")

RESULT_COLUMNS: list[tuple[str, str]] = [
    ("verification_id", "string"),
    ("invocation_id", "string"),
    ("request_id", "string"),
    ("verified_at", "timestamp"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("location_kind", "string"),
    ("location", "string"),
    ("referenced_by", "string"),
    ("location_exists", "boolean"),
    ("files_total", "bigint"),
    ("files_read", "bigint"),
    ("files_skipped", "bigint"),
    ("rows_holding_ids", "bigint"),
    ("error", "string"),
]


def _decoded(uri: str) -> str:
    """A file's URI (`Path.toUri().toString()`, what Spark's input_file_name gives) as a plain
    decoded path without scheme or authority, so that the two spellings compare."""
    return unquote(urlsplit(uri).path).rstrip("/")


class Locations:
    """The candidate locations of one table: location -> (kind, referenced_by), first kind wins."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.found: dict[str, tuple[str, str | None]] = {}

    def add(self, location: str | None, kind: str, referenced_by: str | None) -> None:
        if not location:
            return
        path = filesystem.qualify(self.spark, str(location))
        current = self.found.get(path)
        if current is None or KINDS.index(kind) < KINDS.index(current[0]):
            self.found[path] = (kind, referenced_by)


def table_locations(spark: Any, target: dict[str, Any], stale_rows: list[Any]) -> Locations:
    """Every location of one purged table that may hold the request's bytes (see the module doc)."""
    database, table = target["database"], target["table"]
    found = Locations(spark)
    backup_home = (
        filesystem.qualify(spark, str(target["backup_dir"]).rstrip("/")) + f"/{database}/{table}"
        if target.get("backup_dir")
        else None
    )
    live = metastore.get_table(spark, database, table, with_partitions=False)
    specs = {str(s or "") for s in target.get("partitions") or []}
    if live is not None:
        if live.partition_columns:
            for pairs, location in metastore.partition_locations(
                spark, database, table, live.partition_columns
            ):
                spec = partitions.spec_path(pairs)
                if spec in specs:
                    found.add(location, "live", f"{database}.{table} partition {spec}")
        else:
            found.add(live.location, "live", f"{database}.{table}")
    for meta, registered in named_side_tables(spark, database, table):
        if registered is None or registered[0].lower() != table.lower():
            continue
        kind = registered[1]
        for location, where in [(meta.location, meta.qualified)] + [
            (p.location, f"{meta.qualified} partition {partitions.spec_path(p.pairs)}")
            for p in meta.partitions
        ]:
            qualified = filesystem.qualify(spark, location) if location else None
            in_home = (
                backup_home is not None and qualified is not None and path_within(qualified, backup_home)
            )
            found.add(location, "backup_dir" if in_home else kind, where)
    if backup_home is not None:
        found.add(backup_home, "backup_dir", f"backup_dir of {database}.{table}")
    for record in stale_rows:
        where = "stale_data_records" + (f" ({record['reason']})" if record.get("reason") else "")
        found.add(record["location"], "stale", where)
    for location in target.get("logged_locations") or []:
        found.add(location, "stale", "purge_log (pre-purge or superseded copy)")
    return found


def _owner(path: str, locations: list[str]) -> str | None:
    """The deepest of `locations` holding `path`."""
    holding = [loc for loc in locations if path_within(path, loc)]
    return max(holding, key=len) if holding else None


def verify_table(
    spark: Any,
    target: dict[str, Any],
    ids_frame: Any,
    id_column: str,
    sorted_ids: list[Any] | None,
    kind: str | None,
    stale_rows: list[Any],
) -> list[dict[str, Any]]:
    """One row per location of one table: files total / read / skipped, rows holding the ids."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    database, table = target["database"], target["table"]
    found = table_locations(spark, target, stale_rows)
    rows: dict[str, dict[str, Any]] = {}
    for location, (location_kind, referenced_by) in sorted(found.found.items()):
        exists = filesystem.exists(spark, location)
        rows[location] = {
            "database_name": database,
            "table_name": table,
            "location_kind": location_kind,
            "location": location,
            "referenced_by": referenced_by,
            "location_exists": exists,
            "files_total": 0,
            "files_read": 0,
            "files_skipped": 0,
            "rows_holding_ids": 0,
            "error": None,
        }
    owned: dict[str, tuple[str, Any]] = {}  # file path -> (location, FileStatus)
    uris: dict[str, str] = {}  # file path -> its decoded URI, as Spark's input_file_name names it
    for location in rows:
        if not rows[location]["location_exists"]:
            continue
        try:
            listed = data_files.data_files(spark, location)
        except Exception as exc:  # noqa: BLE001 - reported on the location, the others go on
            rows[location]["error"] = "could not list: " + error_message(exc)
            rows[location]["rows_holding_ids"] = None
            continue
        for status in listed:
            path = filesystem.qualify(spark, str(status.getPath().toString()))
            if path not in owned:
                owner = _owner(path, list(rows))
                owned[path] = (owner or location, status)
                uris[path] = _decoded(str(status.getPath().toUri().toString()))

    try:
        meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
        storage_format = data_files.storage_format(meta)
        schema = tables.read_schema(meta)
        partition_columns = {str(c).lower() for c in scala_list(meta.partitionColumnNames())}
        data_schema = StructType([f for f in schema.fields if f.name.lower() not in partition_columns])
        problem = None if storage_format else "not a parquet or ORC table: its files cannot be read here"
    except Exception as exc:  # noqa: BLE001 - the table itself is gone: its copies cannot be read with its schema
        storage_format, data_schema, problem = (
            None,
            None,
            "cannot read the table's schema: " + error_message(exc),
        )

    to_read: dict[str, list[str]] = {}
    for path, (location, status) in sorted(owned.items()):
        row = rows[location]
        row["files_total"] += 1
        if int(status.getLen()) == 0:
            row["files_read"] += 1  # an empty file holds nothing
            continue
        if problem is None and not footers.may_hold(
            spark, status, storage_format, target["identifier_path"], kind, sorted_ids
        ):
            row["files_skipped"] += 1
            continue
        row["files_read"] += 1
        to_read.setdefault(location, []).append(path)

    if problem is not None:
        for location in to_read:
            rows[location].update(error=problem, rows_holding_ids=None)
        return list(rows.values())

    def count(paths: list[str]) -> dict[str, int]:
        frame = (
            spark.read.format(storage_format)
            .schema(data_schema)
            .option("recursiveFileLookup", "true")
            .option("ignoreCorruptFiles", "false")
            .option("ignoreMissingFiles", "false")
            .load(paths)
        )
        path = target["identifier_path"]
        identifier = F.col(metastore.quote(path[0]))
        for part in path[1:]:
            identifier = identifier.getField(part)
        ids = ids_frame.select(F.col(metastore.quote(id_column)).alias("erasure_id"))
        holding = (
            frame.select(F.input_file_name().alias("erasure_file"), identifier.alias("erasure_identifier"))
            .join(F.broadcast(ids), F.col("erasure_identifier") == F.col("erasure_id"), "left_semi")
            .groupBy("erasure_file")
            .count()
        )
        return {_decoded(str(r[0])): int(r[1]) for r in holding.collect()}

    def attribute(counts: dict[str, int]) -> None:
        for path, (location, _) in owned.items():
            held = counts.get(uris[path])
            if held:
                rows[location]["rows_holding_ids"] += held

    everything = [p for paths in to_read.values() for p in paths]
    if everything:
        try:
            attribute(count(everything))
        except Exception:  # noqa: BLE001 - find the location that cannot be read; the others still count
            for location, paths in to_read.items():
                try:
                    counts = count(paths)
                except Exception as exc:  # noqa: BLE001 - reported on the location
                    rows[location].update(
                        error="could not read: " + error_message(exc), rows_holding_ids=None
                    )
                    continue
                for path in paths:
                    rows[location]["rows_holding_ids"] += counts.get(uris[path], 0)
    return list(rows.values())


def _stale_rows(spark: Any, stale_relation: list[str] | None) -> list[dict[str, Any]]:
    if not stale_relation or not metastore.table_exists(spark, stale_relation[0], stale_relation[1]):
        return []
    return [
        r.asDict()
        for r in metastore.read_table(spark, stale_relation[0], stale_relation[1])
        .select("database_name", "table_name", "location", "reason")
        .collect()
    ]


def verify_requests(
    spark: Any,
    invocation_id: str,
    requests: list[dict[str, Any]],
    stale_relation: list[str] | None = None,
    view_name: str = "erasure_verification_rows",
) -> dict[str, Any]:
    """Verify the bytes of each request; register the result rows as temp view `view_name`.

    `requests`: [{request_id, ids_sql, id_column, id_type, tables: [{database, table,
    identifier_path, identifier_type, partitions: [spec], logged_locations: [location],
    backup_dir}]}], as macros/erasure/verify_erasure.sql builds them.  Returns {rows, id_counts,
    seconds} (counts only: the ids are never returned, logged or written).
    """
    import hashlib
    import time

    from pyspark.sql import functions as F

    started = time.perf_counter()
    stale = _stale_rows(spark, stale_relation)
    out: list[dict[str, Any]] = []
    id_counts: dict[str, int] = {}
    for request in requests:
        request_id = str(request["request_id"])
        ids_frame = spark.sql(request["ids_sql"])
        id_column = request["id_column"]
        ids = [
            r[0]
            for r in ids_frame.select(F.col(metastore.quote(id_column))).distinct().collect()
            if r[0] is not None
        ]
        id_counts[request_id] = len(ids)
        for target in request.get("tables") or []:
            kind = footers.id_kind(target.get("identifier_type") or "", request.get("id_type") or "")
            sorted_ids = footers.sortable_ids(ids, kind)
            mine = [
                r
                for r in stale
                if str(r["database_name"] or "").lower() == target["database"].lower()
                and str(r["table_name"] or "").lower() == target["table"].lower()
            ]
            for row in verify_table(spark, target, ids_frame, id_column, sorted_ids, kind, mine):
                key = "|".join([invocation_id, request_id, row["location"]])
                row.update(
                    verification_id=hashlib.md5(key.encode("utf-8")).hexdigest(),
                    invocation_id=invocation_id,
                    request_id=request_id,
                )
                out.append(row)
        del ids
    columns = [(name, kind) for name, kind in RESULT_COLUMNS if name != "verified_at"]
    ddl = ", ".join(f"{name} {kind}" for name, kind in columns)
    frame = spark.createDataFrame([[row[name] for name, _ in columns] for row in out], ddl)
    frame = frame.withColumn("verified_at", F.current_timestamp()).select(
        *[name for name, _ in RESULT_COLUMNS]
    )
    frame.createOrReplaceTempView(view_name)
    return {"rows": out, "id_counts": id_counts, "seconds": round(time.perf_counter() - started, 3)}
