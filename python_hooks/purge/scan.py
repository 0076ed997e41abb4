"""The purge's id scan, narrowed by the files' footers before Spark reads anything.

The scan finds the partitions that hold a listed id: a semi-join of the whole table with the ids.
Spark already skips the row groups whose statistics lie outside the listed ids' range (the
scan's `between`), but it still plans, opens and reads the footer of every file of the table in
its tasks.  When the identifier is clustered (a date-ordered id, sorted or bucketed files), the
footers alone rule out most files, often all of a table's.  Here they are read first, in this
process, by pyarrow (about 0.05 ms a file on the local filesystem), with the file-level
purge's own rule (`file_level.arrow_parquet_file`: every row group's min/max outside [smallest
id, largest id], or only NULLs); then

- no file can hold a listed id: the table is not scanned at all (no partition has ids);
- some can: the same scan SQL reads a temporary view over only those files (the table's data
  schema, the partition's values as columns, as `file_level.candidate_view` builds it);
- every file can (ids spread over the range), more than a quarter of them can, or the footers
  cannot decide: the scan reads the table, as before.

The answer is the same as the full scan's: a file is left out only when its statistics prove it
holds no listed id.  What is read first is bounded: up to 64 files under the table's directory,
from partitions picked at random, without a metastore call; when none of them rules out every
id (ids spread over the range), the footers are given up and the table is scanned, for a few
milliseconds.  Otherwise the partitions are listed from the metastore and every file's footer is
read.  Only a partitioned parquet table on the local filesystem (a `file:` warehouse), read by
Spark's own parquet reader, with an integral identifier of the id column's type, is narrowed; a
partition with a sub-directory, or any file pyarrow cannot read, leaves the table to the full
scan.

The files left are counted in this process too, by pyarrow, when that is safe and small: the
listed ids are read from the id table's own files (an unpartitioned parquet table on the local
filesystem, at most IDS_AT_MOST of them, loaded once per state of the id table), each candidate
file's identifier column is read and matched against them (`pyarrow.compute.is_in`: equality of
signed integers, NULLs matching nothing, as the semi-join, within the scan's `between`), at most
ROWS_AT_MOST rows in all.  It is the same count the scan's Spark job gives, without that job and
the broadcast of the ids it builds (50M rows, 5 candidate files of 130,000 rows, 500,000 ids:
60 ms against 390 ms).  Only the scan as shipped is counted so (`purge_ids_relation`,
`purge_scan_sql`, `purge_identifier_expr` not overridden: the spec then carries `ids`).
Anything else (an override, a partitioned or ORC id table, an identifier that is a partition
column, a case-sensitive session, a file pyarrow reads differently) is the Spark scan over the
view, as before.

    run(spark, spec)  ->  {ok, error, rows, narrowed: {files, read, partitions, by} | None[, partitions]}
    read_ahead(spark, {key: spec}, workers)   # catalog.background's threads; collect(key) gives run's result
"""

from __future__ import annotations

import os
import random
import threading
from typing import Any

from python_hooks.catalog import background, files, metastore, tables
from python_hooks.catalog.jvm import path_string, scala_list
from python_hooks.errors import result
from python_hooks.purge import file_level

# files read before the footers are given up when none of them rules out every listed id
GIVE_UP_AFTER = 64
# The view over the files that may hold an id is one file scan per partition, unioned: it pays
# off when it leaves most of the table out.  With more than a quarter of the files left to read,
# or more than this many partitions among them, the table is scanned whole (Spark's row-group
# skipping still applies).  A table of 10 partitions with half its files ruled out was scanned in
# 250 ms over the view against 80 ms whole.
NARROW_AT_MOST = 0.25
VIEW_PARTITIONS_AT_MOST = 64
# the candidate files are counted by pyarrow in this process up to this many listed ids (8 bytes
# each, plus pyarrow's hash set of them) and this many rows in the files
IDS_AT_MOST = 5_000_000
ROWS_AT_MOST = 20_000_000
# one count at a time (the scans are read ahead on several threads): each holds the hash set of
# the ids and the identifier values of its files
_COUNTING = threading.Semaphore(1)


def _partition_files(directory: str) -> list[str] | None:
    """The data files Spark reads in a local partition directory, or None when it holds a
    sub-directory (Spark does not read those for a Hive partition; the full scan decides)."""
    if not os.path.isdir(directory):
        return []
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(("_", ".")):
                continue
            if entry.is_dir():
                return None
            if entry.stat().st_size > 0:
                found.append(entry.path)
    return sorted(found)


def _read_as_parquet(spark: Any, meta: Any) -> bool:
    """The table's files are parquet and Spark reads them with its own parquet reader (what
    pyarrow reads is then what Spark reads)."""
    return files.storage_format(meta) == "parquet" and file_level.reads_like_the_table(spark, meta, "parquet")


def _sample(root: str, depth: int, seed: str) -> list[str]:
    """Up to GIVE_UP_AFTER data files under a local table directory, from partition directories
    picked at random (`col=value` names, `depth` levels down), without asking the metastore."""
    rng = random.Random(seed)
    found: list[str] = []

    def visit(directory: str, level: int) -> None:
        if level == depth:
            found.extend(_partition_files(directory) or [])
            return
        try:
            with os.scandir(directory) as entries:
                children = [
                    e.path
                    for e in entries
                    if e.is_dir() and "=" in e.name and not e.name.startswith(("_", "."))
                ]
        except OSError:
            return
        rng.shuffle(children)
        for child in children:
            if len(found) >= GIVE_UP_AFTER:
                return
            visit(child, level + 1)

    visit(root, 0)
    return found[:GIVE_UP_AFTER]


def candidate_files(
    spark: Any,
    database: str,
    table: str,
    path: list[str],
    bounds: tuple[int, int],
    location: str | None = None,
    partition_columns: list[str] | None = None,
) -> dict[str, Any] | None:
    """{partitions: [{pairs, files}], files, read} of the partitions with files that may hold a
    listed id (`files` of them only), or None when the footers do not narrow the scan.

    First a sample of the files under the table's `location` (up to 64, from partitions picked at
    random, no metastore call): when none of them rules out every id, the footers are given up.
    Only then are the partitions listed from the metastore and every file's footer read.
    """
    if any("." in part for part in path):
        return None
    if location is None or partition_columns is None:
        meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
        location = path_string(spark, meta.location())
        partition_columns = [str(c) for c in scala_list(meta.partitionColumnNames())]
    root = files.local_path(location)
    columns = list(partition_columns)
    if root is None or not columns:
        return None
    sampled = _sample(root, len(columns), f"{database}.{table}")
    if not any((file_level.arrow_parquet_file(name, path, bounds) or (0, False))[1] for name in sampled):
        return None
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    if not _read_as_parquet(spark, meta):
        return None
    listed = metastore.partition_locations(spark, database, table, columns)
    local = [files.local_path(location) for _, location in listed]
    if any(directory is None for directory in local):
        return None
    partitions: list[dict[str, Any]] = []
    read = clean = rows = 0
    for (pairs, _), directory in zip(listed, local, strict=True):
        found = _partition_files(directory)  # type: ignore[arg-type]
        if found is None:
            return None
        candidates = []
        for name in found:
            decided = file_level.arrow_parquet_file(name, path, bounds)
            if decided is None:
                return None
            read += 1
            if decided[1]:
                clean += 1
            else:
                candidates.append("file:" + name)  # a Hadoop Path string again, for Spark's reader
                rows += decided[0]
        if candidates:
            partitions.append({"pairs": [list(pair) for pair in pairs], "files": candidates})
    if clean == 0:
        return None
    left = read - clean
    if left and (left > NARROW_AT_MOST * read or len(partitions) > VIEW_PARTITIONS_AT_MOST):
        return None
    listing = sorted(
        ({"values": [list(pair) for pair in pairs], "location": location} for pairs, location in listed),
        key=lambda part: [value for _, value in part["values"]],
    )
    return {"partitions": partitions, "files": read, "read": read - clean, "rows": rows, "listing": listing}


_IDS_LOCK = threading.Lock()
# the one id set held: {"key": the id table and its files' state, "values": pyarrow int64 array}
_IDS: dict[str, Any] = {}


def _column_named(names: list[str], wanted: str) -> str | None | bool:
    """The one name equal to `wanted` ignoring case (Spark's resolution), None when there is
    none, False when several are (Spark would refuse; so does this)."""
    found = [name for name in names if name.lower() == wanted.lower()]
    return found[0] if len(found) == 1 else (None if not found else False)


def _signed_int64(values: Any) -> Any | None:
    import pyarrow as pa

    kind = values.type
    if not pa.types.is_integer(kind) or pa.types.is_unsigned_integer(kind):
        return None
    return values.cast(pa.int64())


def listed_ids(spark: Any, ids: dict[str, Any] | None) -> Any | None:
    """The listed ids as one pyarrow int64 array (NULLs dropped), read from the id table's files,
    or None when they cannot be read that way: the table is partitioned, not parquet read by
    Spark's own reader, not on the local filesystem, has a sub-directory, a file whose column is
    not a signed integer, or more than IDS_AT_MOST rows.  Kept for the next table
    while the id table's files are unchanged (names, sizes, modification times)."""
    if not ids:
        return None
    meta = metastore.session_catalog(spark).getTableMetadata(
        metastore.identifier(spark, str(ids["database"]), str(ids["table"]))
    )
    if [str(c) for c in scala_list(meta.partitionColumnNames())] or not _read_as_parquet(spark, meta):
        return None
    root = files.local_path(path_string(spark, meta.location()))
    found = _partition_files(root) if root is not None else None
    if found is None:
        return None
    states = []
    for name in found:
        stat = os.stat(name)
        states.append((name, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
    key = repr((ids["database"], ids["table"], ids["column"], states))
    with _IDS_LOCK:
        if _IDS.get("key") != key:
            # a refusal is kept too: the next table does not read the id table's footers again
            _IDS.clear()
            try:
                values = _read_ids(found, str(ids["column"]))
            except Exception:  # noqa: BLE001 - a file pyarrow cannot read: Spark reads the ids
                values = None
            _IDS.update(key=key, values=values)
        return _IDS["values"]


def _read_ids(found: list[str], column_name: str) -> Any | None:
    """The non-NULL values of `column_name` in the parquet files `found`, as one int64 array
    (a file without the column holds none, as Spark reads it); None for more than IDS_AT_MOST
    rows or a file `_identifier_values` does not read as Spark does."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = []
    total = 0
    for name in found:
        total += int(pq.read_metadata(name).num_rows)
        if total > IDS_AT_MOST:
            return None
        values = _identifier_values(name, [column_name])
        if values is None:
            return None
        parts.append(pc.drop_null(values))
    return pa.concat_arrays(parts) if parts else pa.array([], pa.int64())


def id_bounds(spark: Any, ids: dict[str, Any]) -> dict[str, Any]:
    """{ok, error, read, bounds}: the smallest and largest listed id ([min, max], or None when
    no id is listed) from the ids `listed_ids` reads, with `read` true; `read` false when they
    cannot be read that way (the caller asks Spark: `purge_id_bounds`).  The ids stay loaded for
    the scans of the run."""
    try:
        values = listed_ids(spark, ids)
    except Exception:  # noqa: BLE001 - pyarrow is an optimisation: Spark's query decides
        values = None
    if values is None:
        return result(read=False, bounds=None)
    if len(values) == 0:
        return result(read=True, bounds=None)
    import pyarrow.compute as pc

    extremes = pc.min_max(values)
    return result(read=True, bounds=[int(extremes["min"].as_py()), int(extremes["max"].as_py())])


def _identifier_values(name: str, path: list[str]) -> Any | None:
    """The identifier's values in one local parquet file as int64 (NULL where Spark reads NULL:
    a row whose struct is NULL, or a file without the column), or None when pyarrow would read
    them differently from Spark (several columns equal but for case, a non-integral type)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(name)
    column = _column_named(handle.schema_arrow.names, path[0])
    if column is False:
        return None
    if column is None:
        return pa.nulls(int(handle.metadata.num_rows), pa.int64())
    values = handle.read(columns=[column]).column(0).combine_chunks()
    for field in path[1:]:
        if not pa.types.is_struct(values.type):
            return None
        names = [values.type.field(i).name for i in range(values.type.num_fields)]
        inner = _column_named(names, field)
        if not inner:
            return None
        values = pc.struct_field(values, [names.index(inner)])
    return _signed_int64(values)


def arrow_count(spark: Any, spec: dict[str, Any], narrowed: dict[str, Any]) -> list[list[Any]] | None:
    """The scan's rows (each partition's values as the metastore lists them, then its rows
    holding a listed id; partitions with none left out) for the candidate files of `narrowed`,
    counted by pyarrow in this process; None when `listed_ids` cannot read the ids, the files
    hold more than ROWS_AT_MOST rows, or a file is not read as Spark reads it."""
    if int(narrowed.get("rows") or 0) > ROWS_AT_MOST:
        return None
    if str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true":
        return None  # names here are matched ignoring case, as Spark does by default
    path = list(spec["path"])
    if path[0].lower() in {str(column).lower() for column in spec.get("partition_columns") or []}:
        return None  # Spark reads a partition column from the partition's value, not the files
    bounds = file_level.usable_bounds(spec.get("bounds"))
    if bounds is None:
        return None
    ids = listed_ids(spark, spec.get("ids"))
    if ids is None:
        return None
    with _COUNTING:
        return _count(narrowed, path, ids, bounds)


def _count(
    narrowed: dict[str, Any], path: list[str], ids: Any, bounds: tuple[int, int]
) -> list[list[Any]] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = []
    lengths = []
    for part in narrowed["partitions"]:
        length = 0
        for name in part["files"]:
            values = _identifier_values(files.local_path(name) or name, path)
            if values is None:
                return None
            chunks.append(values)
            length += len(values)
        lengths.append(length)
    # one hash set of the ids for every file: matched rows, NULLs matching nothing, and within
    # the scan's `between` (the range read at the start of the run)
    matched = None
    if chunks:
        values = pa.concat_arrays(chunks)
        matched = pc.and_(
            pc.is_in(values, value_set=ids, skip_nulls=True),
            pc.and_(pc.greater_equal(values, bounds[0]), pc.less_equal(values, bounds[1])),
        )
    rows = []
    offset = 0
    for part, length in zip(narrowed["partitions"], lengths, strict=True):
        count = int(pc.sum(matched.slice(offset, length)).as_py() or 0) if length else 0
        offset += length
        if count:
            rows.append([value for _, value in part["pairs"]] + [count])
    return rows


def run(spark: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """The id scan of one table: {ok, error, rows, narrowed}; never raises.

    `spec`: {database, table, location, partition_columns, sql (the scan of the table),
    narrow_sql (the same scan of `view`), view, path (the identifier's field path), bounds
    (purge_id_bounds)}.  `narrowed` says what
    the footers did: None when the table was scanned whole, else {files, read, partitions}.
    When they rule out every file, `partitions` is the table's partition listing they were read
    from (as catalog.tables.list_partitions gives it): every partition is SKIPPED, and the purge
    lists nothing again.
    """
    bounds = file_level.usable_bounds(spec.get("bounds"))
    narrowed = None
    if bounds is not None and spec.get("narrow_sql"):
        try:
            narrowed = candidate_files(
                spark,
                spec["database"],
                spec["table"],
                list(spec["path"]),
                bounds,
                spec.get("location"),
                spec.get("partition_columns"),
            )
        except Exception:  # noqa: BLE001 - the footers are an optimisation: the full scan decides
            narrowed = None
    if narrowed is None:
        return {**tables.execute(spark, str(spec["sql"])), "narrowed": None}
    summary = {
        "files": narrowed["files"],
        "read": narrowed["read"],
        "partitions": len(narrowed["partitions"]),
        "by": None,  # Spark's scan of the view; "pyarrow" when counted in this process
    }
    if not narrowed["partitions"]:
        # no partition holds a listed id: the listing just read serves for their SKIPPED rows
        return result(rows=[], narrowed=summary, partitions=narrowed["listing"])
    try:
        counted = arrow_count(spark, spec, narrowed)
    except Exception:  # noqa: BLE001 - pyarrow is an optimisation: Spark's scan decides
        counted = None
    if counted is not None:
        return result(rows=counted, narrowed={**summary, "by": "pyarrow"})
    view = str(spec["view"])
    made = file_level.candidate_view(spark, spec["database"], spec["table"], view, narrowed["partitions"])
    if not made["ok"]:
        return {**tables.execute(spark, str(spec["sql"])), "narrowed": None}
    try:
        return {**tables.execute(spark, str(spec["narrow_sql"])), "narrowed": summary}
    finally:
        file_level.drop_view(spark, view)


def read_ahead(spark: Any, scans: dict[str, dict[str, Any]], workers: int) -> int:
    """Start the scans of `scans` ({key: spec}) on `workers` threads, in the order given
    (catalog.background); `catalog_collect(key)` waits for one and gives what `run` returned."""
    return background.read_ahead_calls({key: (run, (spark, spec)) for key, spec in scans.items()}, workers)
