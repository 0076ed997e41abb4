"""What the erasure verifier reads of a Delta Lake table: every version's bytes, not only the
current one's.

A Delta table's directory holds the files of every version that `VACUUM` has not removed; its
`_change_data/` the rows the change data feed recorded (a deleted row whole); its `_delta_log/`
each commit's actions, whose statistics hold the smallest and the largest value of every column of
every file ever added or removed, and whose `commitInfo` holds the predicate of each DELETE,
UPDATE and MERGE as it was written.  The verifier reads all of them with Spark's plain readers,
never with Delta's (which shows one version's rows, without those a deletion vector hides):

- `live`: the files of the table's current version (Delta's own list of them, a shallow clone's
  outside its directory included).  A row that a deletion vector hides is still in its file's
  bytes, and is counted;
- `delta_version`: each other data file under the table's directory, readable by time travel
  until `VACUUM` removes it (or a failed write's leftover, which no version references);
- `delta_change_data`: the files under `_change_data/`;
- `delta_log`: every file under `_delta_log/` (commits, checksums, checkpoints, sidecars).  An
  entry holds an id when the identifier's smallest or largest value in a file's statistics is the
  id (Delta cuts a string statistic to its first 32 characters, or fewer by the session's
  `spark.databricks.io.skipping.stringPrefixLength`: a longer id counts when its first ones
  match), or when a predicate or the user metadata of its `commitInfo` holds the id as a whole
  word (Spark's expression ids, `#123`, left out), or, for an id holding a space or a quote,
  anywhere in that text.

Deletion vector files hold row positions, `_last_checkpoint` a checkpoint's version and size,
`_last_vacuum_info` a VACUUM's horizon: never a value, and they are not read.  A hidden file of
the log (a failed write's leftover), which Spark's readers skip, is reported unread.  So is a
table whose column mapping renames its columns in the files, and the log of one whose identifier
is neither an integer nor a string (the log's statistics are compared as text): never clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem
from python_hooks.catalog.column_types import INTEGRAL
from python_hooks.catalog.jvm import jvm as jvm_view

DELTA_VERSION = "delta_version"
CHANGE_DATA = "delta_change_data"
LOG = "delta_log"  # the kind of a table's `_delta_log/`
LOG_FORMAT = "delta_log"  # the storage format of the Reader that reads it
# the length Delta cuts a string statistic to, when the session does not say
# (spark.databricks.io.skipping.stringPrefixLength)
STRING_PREFIX = 32
_DELETION_VECTOR = re.compile(r"deletion_vector_[0-9a-fA-F-]+\.bin$")
# what a word of a predicate is made of: an id compared as a whole word of these
_WORD = "0-9A-Za-z_@.+-"
# the files of `_delta_log/` that the log's reader reads; `_last_checkpoint` holds the last
# checkpoint's version, size and schema, `_last_vacuum_info` the last VACUUM's horizon: never a
# value of a column
_TEXT = (".json", ".crc")
_NO_VALUES = ("_last_checkpoint", "_last_vacuum_info")


@dataclass(frozen=True)
class DeltaTable:
    location: str  # qualified
    version: int
    partition_columns: list[str]
    schema: Any
    column_mapping: str | None


def describe(spark: Any, database: str, table: str) -> DeltaTable:
    """A Delta table's location, latest version, partition columns and schema, from its log."""
    name = f"`{database}`.`{table}`"
    detail = spark.sql(f"describe detail {name}").collect()[0]
    version = spark.sql(f"describe history {name} limit 1").collect()[0].version
    mapping = (detail.properties or {}).get("delta.columnMapping.mode")
    return DeltaTable(
        location=filesystem.qualify(spark, str(detail.location)),
        version=int(version),
        partition_columns=[str(c) for c in detail.partitionColumns],
        schema=spark.table(name).schema,
        column_mapping=None if str(mapping or "none").lower() == "none" else str(mapping),
    )


def live_reference(name: str, version: int, outside: bool = False) -> str:
    """How a live location of a Delta table names what it was read at: `db.t (Delta, version 5)`."""
    return f"{name} (Delta, version {version}{', a file outside it' if outside else ''})"


_LIVE_REFERENCE = re.compile(r" \(Delta, version (\d+)(?:, a file outside it)?\)$")


def version_read(referenced_by: str | None) -> int | None:
    """The Delta version a live location was read at (`live_reference`), or None for another table."""
    found = _LIVE_REFERENCE.search(str(referenced_by or ""))
    return int(found.group(1)) if found else None


def data_problem(table: DeltaTable, whose: str) -> str | None:
    """Why the table's data files cannot be read here, or None."""
    if table.column_mapping is not None:
        return (
            f"{whose} is a Delta Lake table with column mapping ({table.column_mapping}): its files name"
            " their columns otherwise, and the verifier does not read them yet, so it is never counted clean"
        )
    return None


def log_problem(whose: str, identifier_type: str | None) -> str | None:
    """Why the table's log cannot be read for the ids, or None: its statistics are compared as
    text, which is exact for integers and strings only."""
    kind = (identifier_type or "").lower()
    if kind not in INTEGRAL and kind != "string":
        return (
            f"{whose}: its identifier is {identifier_type}; the verifier reads a Delta Lake table's log"
            " for integer and string identifiers only, so it is never counted clean"
        )
    return None


def holds_no_values(path: str) -> bool:
    """A deletion vector's file: row positions, never a value."""
    return bool(_DELETION_VECTOR.search(path.rsplit("/", 1)[-1]))


def add_locations(
    spark: Any, found: Any, table: DeltaTable, owner: tuple[str, str], keys: tuple[str, str]
) -> None:
    """The table's locations in the inventory `found`: its directory (`live`), each data file no
    longer in its current version, each of the current version's files outside its directory (a
    shallow clone's), `_change_data/` and `_delta_log/`.  `keys`: the readers of its data files
    and of its log."""
    data_key, log_key = keys
    name = f"{owner[0]}.{owner[1]}"
    found.add(spark, table.location, "live", owner, live_reference(name, table.version), data_key)
    current = {
        filesystem.qualify(spark, f) for f in spark.read.format("delta").load(table.location).inputFiles()
    }
    for path in sorted(current):
        if not filesystem.path_within(path, table.location):
            found.add(spark, path, "live", owner, live_reference(name, table.version, outside=True), data_key)
    for status in data_files.data_files(spark, table.location):
        path = filesystem.qualify(spark, str(status.getPath().toString()))
        if path not in current and not holds_no_values(path):
            found.add(
                spark, path, DELTA_VERSION, owner,
                f"{name}: not in version {table.version} (time travel until VACUUM)", data_key,
            )  # fmt: skip
    for directory, kind, key in (
        ("_change_data", CHANGE_DATA, data_key),
        ("_delta_log", LOG, log_key),
    ):
        path = f"{table.location}/{directory}"
        if filesystem.exists(spark, path):
            found.add(spark, path, kind, owner, f"{name} {directory}", key)


def log_files(spark: Any, location: str) -> list[Any]:
    """Every file under a `_delta_log/` (sidecars, staged commits and hidden leftovers of failed
    writes included), as Hadoop FileStatus objects, but Hadoop's own checksums (`.x.crc`)."""
    jvm = jvm_view(spark)
    root = jvm.org.apache.hadoop.fs.Path(location)
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    found = []
    listing = fs.listFiles(root, True)
    while listing.hasNext():
        status = listing.next()
        name = str(status.getPath().getName())
        if not (name.startswith(".") and name.endswith(".crc")) and name not in _NO_VALUES:
            found.append(status)
    return found


def unreadable(path: str) -> str | None:
    """Why the log's reader cannot read this file of `_delta_log/`, or None."""
    name = path.rsplit("/", 1)[-1]
    if name.startswith(("_", ".")):
        return (
            f"{name} is a hidden file of the log (a failed write's leftover?), which Spark's readers skip;"
            " its bytes may hold ids: delete it if no commit is in progress"
        )
    if not name.endswith((*_TEXT, ".parquet")):
        return f"{name} is not a file of the log that the verifier reads (JSON, checksum, parquet checkpoint)"
    return None


def _bounds(stat: Any, identifier: list[str]) -> Any:
    """[the identifier's smallest, its largest] in a file's statistics (a JSON string), as text."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    leaf: Any = StringType()
    for part in reversed(identifier):
        leaf = StructType([StructField(part, leaf)])
    parsed = F.from_json(stat, StructType([StructField("minValues", leaf), StructField("maxValues", leaf)]))
    values = []
    for side in ("minValues", "maxValues"):
        column = parsed[side]
        for part in identifier:
            column = column[part]
        values.append(column)
    return F.array(*values)


def _json_values(lines: Any, identifier: list[str]) -> tuple[Any, Any]:
    """From the lines of the log's JSON files (commits, checksums): (erasure_file, entry, value)
    of the identifier's bounds in each file's statistics and of the words of each commit's
    predicates and user metadata; and (erasure_file, entry, said): that text, as written."""
    from pyspark.sql import functions as F

    stats = F.concat(
        F.array(
            F.get_json_object("value", "$.add.stats"),
            F.get_json_object("value", "$.remove.stats"),
        ),
        F.coalesce(
            F.transform(
                F.from_json(F.get_json_object("value", "$.allFiles"), "array<struct<stats: string>>"),
                lambda entry: entry["stats"],
            ),
            F.array().cast("array<string>"),
        ),
    )
    parameters = F.from_json(
        F.get_json_object("value", "$.commitInfo.operationParameters"), "map<string,string>"
    )
    predicates = F.map_values(F.map_filter(parameters, lambda key, _: F.lower(key).contains("predicate")))
    # a predicate is a JSON array of strings: its strings as written, else the value itself
    decoded = F.transform(
        predicates,
        lambda value: F.coalesce(F.array_join(F.from_json(value, "array<string>"), " "), value),
    )
    said = F.concat_ws(" ", decoded, F.get_json_object("value", "$.commitInfo.userMetadata"))
    numbered = lines.select(
        "erasure_file", F.xxhash64("value").alias("entry"), stats.alias("stats"), said.alias("said")
    )
    from_stats = numbered.select("erasure_file", "entry", F.explode("stats").alias("stat")).select(
        "erasure_file", "entry", F.explode(_bounds(F.col("stat"), identifier)).alias("value")
    )
    words = numbered.select(
        "erasure_file",
        "entry",
        F.explode(F.split(F.regexp_replace("said", "#[0-9]+L?", " "), f"[^{_WORD}]+")).alias("value"),
    )
    return from_stats.unionByName(words), numbered.select("erasure_file", "entry", "said")


def _checkpoint_values(frame: Any, identifier: list[str]) -> Any:
    """(erasure_file, entry, value): the identifier's bounds in the statistics of a checkpoint's
    (or a sidecar's) files, added or removed, as JSON (`stats`) or as a struct (`stats_parsed`)."""
    from pyspark.sql import functions as F

    stats = []
    for action in ("add", "remove"):
        if action not in frame.columns:
            continue
        fields = frame.schema[action].dataType.fieldNames()
        if "stats" in fields:
            stats.append(F.col(f"{action}.stats"))
        if "stats_parsed" in fields:
            stats.append(F.to_json(f"{action}.stats_parsed"))
    if not stats:
        stats = [F.lit(None).cast("string")]
    numbered = frame.select(
        F.input_file_name().alias("erasure_file"),
        F.xxhash64(F.to_json(F.struct(*frame.columns))).alias("entry"),
        F.array(*stats).alias("stats"),
    )
    return numbered.select("erasure_file", "entry", F.explode("stats").alias("stat")).select(
        "erasure_file", "entry", F.explode(_bounds(F.col("stat"), identifier)).alias("value")
    )


def string_prefix(spark: Any) -> int:
    """How many characters of a string Delta keeps in a statistic, by this session's setting."""
    try:
        return max(
            1, int(str(spark.conf.get("spark.databricks.io.skipping.stringPrefixLength", str(STRING_PREFIX))))
        )
    except ValueError:
        return STRING_PREFIX


def log_matches(spark: Any, reader: Any, paths: list[str], ids: Any) -> Any:
    """(erasure_file, request_id) of every entry of the log files `paths` that holds a listed id:
    one row per entry and request."""
    from pyspark.sql import functions as F

    identifier = list(reader.identifier_path or [])
    prefix = min(string_prefix(spark), STRING_PREFIX)
    as_text = ids.select(F.col("erasure_id").cast("string").alias("erasure_text"), "request_id")
    keyed_ids = F.broadcast(as_text.withColumn("erasure_key", F.substring("erasure_text", 1, prefix)))
    texts = [p for p in paths if not p.endswith(".parquet")]
    parquet = [p for p in paths if p.endswith(".parquet")]
    strict = {"ignoreCorruptFiles": "false", "ignoreMissingFiles": "false"}
    values = []
    said = None
    if texts:
        lines = spark.read.options(**strict).text(texts)
        found, said = _json_values(
            lines.select(F.input_file_name().alias("erasure_file"), "value"), identifier
        )
        values.append(found)
    for path in parquet:  # each on its own: checkpoints of different versions may differ in schema
        values.append(_checkpoint_values(spark.read.options(**strict).parquet(path), identifier))
    union = values[0]
    for frame in values[1:]:
        union = union.unionByName(frame)
    union = union.where(F.col("value").isNotNull())
    # a statistic is the id, or the id's first `prefix` characters (Delta cuts longer strings)
    matched = union.join(keyed_ids, F.substring("value", 1, prefix) == F.col("erasure_key")).where(
        (F.col("value") == F.col("erasure_text")) | (F.length("erasure_text") > prefix)
    )
    found_rows = matched.select("erasure_file", "entry", "request_id")
    if said is not None:
        # an id holding a character that splits words (a space, a quote): found in the text as written
        spaced = F.broadcast(as_text.where(F.col("erasure_text").rlike(f"[^{_WORD}]")))
        found_rows = found_rows.unionByName(
            said.join(spaced, F.expr("instr(said, erasure_text) > 0")).select(
                "erasure_file", "entry", "request_id"
            )
        )
    return found_rows.distinct().select("erasure_file", "request_id")
