"""What the erasure verifier reads of an Apache Iceberg table: every file under its location, not
only the current snapshot's.

An Iceberg table's `data/` holds the files of every snapshot that `expire_snapshots` has not
removed, and the delete files (a position delete names a file and a row position; an equality
delete holds the deleted rows' values, ids included); its `metadata/` the table's metadata files,
manifest lists and manifests, whose statistics hold each data and delete file's smallest and
largest value of every column (Iceberg's single-value encoding: a long as 8 bytes little-endian,
an int as 4, a string as UTF-8 cut to its first 16 characters by default), including the entries
of files a snapshot deleted.  The verifier reads them with Spark's plain readers, never through
Iceberg's (which shows one snapshot's rows, without those a delete file hides):

- `live`: the table's `data/` directory: the current snapshot's data files (a row a delete file
  hides is still in its file's bytes, and counts), and each of its files outside it;
- `iceberg_snapshot`: each other data file (an older snapshot's, readable by time travel until
  `expire_snapshots` removes it, or a failed write's leftover no snapshot references);
- `iceberg_delete_file`: each delete file, read for the identifier (an equality delete file holds
  it, and a position delete file that carries its deleted rows in its `row` struct);
- `iceberg_metadata`: `metadata/`: a file holds an id when its bytes hold the id's encoding (an
  Avro manifest's statistics, a partition summary), or, for a metadata JSON file, the id as a
  whole word.  Another column's statistic equal to the id's bytes counts too: this reading can
  say that a file holds an id when it does not, never the reverse.

A table whose data files are not parquet, or whose identifier was renamed in an older schema (its
older files name it otherwise), is reported unread, never clean; so is the metadata of one whose
identifier is neither an integer nor a string.
"""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem
from python_hooks.catalog.column_types import INTEGRAL
from python_hooks.catalog.iceberg import current_snapshot, identity_partitions, load, qualified

ICEBERG_SNAPSHOT = "iceberg_snapshot"
DELETE_FILE = "iceberg_delete_file"
# the Reader part of an Iceberg table's delete files: a position delete file may carry the deleted
# row whole (its optional `row` struct, the table's columns), and the identifier is sought there too
DELETE_PART = "delete files"
METADATA = "iceberg_metadata"  # the kind of a table's `metadata/`
METADATA_FORMAT = "iceberg_metadata"  # the storage format of the Reader that reads it
STRING_BOUND = 16  # Iceberg's default cut of a string statistic (write.metadata.metrics.default)
_WORD = "0-9A-Za-z_@.+-"


@dataclass(frozen=True)
class IcebergTable:
    location: str  # qualified
    snapshot: int | None
    schema: Any
    partition_columns: list[str]
    data_files: frozenset[str]  # the current snapshot's
    delete_files: frozenset[str]  # any kept snapshot's
    older_data_files: frozenset[str]  # any kept snapshot's, the current one's included
    problem: str | None
    # how many characters of a string identifier Iceberg keeps in a statistic (None: all)
    string_bound: int | None = STRING_BOUND


def _path(text: str) -> str:
    """A path as Iceberg writes it, as the Hadoop listing qualifies it (`file:///x` -> `file:/x`)."""
    return re.sub(r"^file:///", "file:/", str(text)).rstrip("/")


def describe(spark: Any, database: str, table: str, identifier: str | None) -> IcebergTable:
    """An Iceberg table's location, current snapshot, schema and files, through Iceberg's catalog."""
    name = qualified(database, table)
    loaded = load(spark, database, table)

    def paths(sql: str) -> frozenset[str]:
        return frozenset(_path(r[0]) for r in spark.sql(sql).collect())

    properties = {str(k): str(v) for k, v in dict(loaded.properties()).items()}
    problem = None
    data_format = properties.get("write.format.default", "parquet").lower()
    elsewhere = sorted(k for k in _OWN_PATHS if properties.get(k))
    if data_format != "parquet":
        problem = f"its data files are {data_format}, and the verifier reads parquet ones only"
    elif elsewhere:
        problem = (
            f"its files are written at a path of their own ({', '.join(elsewhere)}), which the verifier"
            " does not list"
        )
    elif identifier:
        problem = _renamed(loaded, identifier)
    return IcebergTable(
        location=filesystem.qualify(spark, str(loaded.location())),
        snapshot=current_snapshot(spark, database, table),
        schema=spark.table(name).schema,
        partition_columns=identity_partitions(loaded),
        data_files=paths(f"select file_path from {name}.data_files"),
        delete_files=paths(f"select file_path from {name}.all_delete_files"),
        older_data_files=paths(f"select file_path from {name}.all_data_files"),
        problem=problem,
        string_bound=_string_bound(loaded, properties, identifier),
    )


# properties that put a table's data or metadata files outside its location
_OWN_PATHS = (
    "write.data.path",
    "write.metadata.path",
    "write.folder-storage.path",
    "write.object-storage.path",
)
_TRUNCATE = re.compile(r"^truncate\((\d+)\)$")


def _string_bound(loaded: Any, properties: dict[str, str], identifier: str | None) -> int | None:
    """The characters of a string identifier a statistic keeps: the column's metrics mode
    (`write.metadata.metrics.column.<name>`), else the table's default (`truncate(16)` unless
    set); `full` keeps the whole string.  `none` and `counts` write no bound: then the shortest
    cut is kept, which can only find more."""
    mode = properties.get(f"write.metadata.metrics.column.{identifier}") if identifier else None
    mode = (
        (mode or properties.get("write.metadata.metrics.default") or f"truncate({STRING_BOUND})")
        .strip()
        .lower()
    )
    if mode == "full":
        return None
    found = _TRUNCATE.match(mode)
    if found:
        return int(found.group(1))
    # `none`, `counts`: no bound now, but manifests written before kept the default's, or 16
    default = _TRUNCATE.match((properties.get("write.metadata.metrics.default") or "").strip().lower())
    return min(STRING_BOUND, int(default.group(1))) if default else STRING_BOUND


def _renamed(loaded: Any, identifier: str) -> str | None:
    """Why the data files cannot be read by the identifier's name: an older schema named its field
    otherwise (files written then name it so), or None."""
    field = loaded.schema().findField(identifier)
    if field is None:
        return None
    for schema in loaded.schemas().values():
        name = schema.findColumnName(field.fieldId())
        if name is not None and str(name) != identifier:
            return f"its identifier was named {name} in an older schema, and files written then name it so"
    return None


def live_reference(name: str, snapshot: int | None, outside: bool = False) -> str:
    """How a live location of an Iceberg table names what it was read at."""
    return f"{name} (Iceberg, snapshot {snapshot}{', a file outside it' if outside else ''})"


_LIVE_REFERENCE = re.compile(r" \(Iceberg, snapshot (\d+)(?:, a file outside it)?\)$")


def snapshot_read(referenced_by: str | None) -> int | None:
    """The Iceberg snapshot a live location was read at (`live_reference`), or None for another
    table or one without a snapshot."""
    found = _LIVE_REFERENCE.search(str(referenced_by or ""))
    return int(found.group(1)) if found else None


def metadata_problem(whose: str, identifier_type: str | None) -> str | None:
    """Why the table's metadata cannot be read for the ids, or None."""
    kind = (identifier_type or "").lower()
    if kind not in INTEGRAL and kind != "string":
        return (
            f"{whose}: its identifier is {identifier_type}; the verifier reads an Iceberg table's metadata"
            " for integer and string identifiers only, so it is never counted clean"
        )
    return None


def with_row(schema: Any) -> Any:
    """The schema a delete file is read with: the table's data columns, and a position delete
    file's `row` struct of them (absent from a file, it reads as null).  A table with a column of
    its own named `row` is left as it is: its delete files are then reported unread
    (`row_problem`)."""
    from pyspark.sql.types import StructField, StructType

    if schema is None or any(f.name.lower() == "row" for f in schema.fields):
        return schema
    return StructType([*schema.fields, StructField("row", schema, True)])


def row_problem(schema: Any, whose: str) -> str | None:
    """Why an Iceberg table's delete files cannot be read for a deleted row's identifier, or None."""
    if schema is not None and not reads_row(schema):
        return (
            f"{whose} has a column named row, the name of the struct a position delete file keeps each"
            " deleted row in: its delete files are not read for the identifier, so they are never counted clean"
        )
    return None


def reads_row(schema: Any) -> bool:
    """Whether `schema` is one `with_row` extended (its last field the `row` of the others)."""
    if schema is None or not schema.fields:
        return False
    last = schema.fields[-1]
    return last.name == "row" and last.dataType == type(schema)(schema.fields[:-1])


def add_locations(
    spark: Any, found: Any, table: IcebergTable, owner: tuple[str, str], keys: tuple[str, str, str]
) -> None:
    """The table's locations in the inventory `found`: its `data/` (`live`), each file there the
    current snapshot does not read (`iceberg_snapshot`) or that is a delete file
    (`iceberg_delete_file`), each file any kept snapshot reads outside it, and `metadata/`."""
    data_key, metadata_key, deletes_key = keys
    name = f"{owner[0]}.{owner[1]}"
    data_dir = f"{table.location}/data"
    found.add(spark, data_dir, "live", owner, live_reference(name, table.snapshot), data_key)
    listed = {
        filesystem.qualify(spark, str(s.getPath().toString())) for s in data_files.data_files(spark, data_dir)
    }
    everything = listed | table.data_files | table.older_data_files | table.delete_files
    for path in sorted(everything):
        inside = filesystem.path_within(path, data_dir)
        if path in table.delete_files:
            found.add(spark, path, DELETE_FILE, owner, f"{name}: a delete file", deletes_key)
        elif path in table.data_files:
            if not inside:
                found.add(
                    spark, path, "live", owner, live_reference(name, table.snapshot, outside=True), data_key
                )
        else:
            found.add(
                spark, path, ICEBERG_SNAPSHOT, owner,
                f"{name}: not in snapshot {table.snapshot} (time travel until expire_snapshots)", data_key,
            )  # fmt: skip
    metadata = f"{table.location}/metadata"
    if filesystem.exists(spark, metadata):
        found.add(spark, metadata, METADATA, owner, f"{name} metadata/", metadata_key)


def _needles(identifier_type: str, value: Any, string_bound: int | None) -> tuple[list[bytes], str]:
    """The byte strings of an id in Iceberg's statistics, and its text in a JSON metadata file.
    An integer that fits in 4 bytes is sought by those 4 (little-endian), the start of its 8-byte
    form too: an `int` column widened to `bigint` keeps 4-byte statistics in its older manifests.
    A string longer than the metrics keep is sought by its cut (a lower bound) and by the cut
    Iceberg writes as an upper bound, its last character that can be incremented, incremented."""
    kind = identifier_type.lower()
    if kind in INTEGRAL:
        number = int(value)
        fits = -(2**31) <= number < 2**31
        return [struct.pack("<i", number) if fits else struct.pack("<q", number)], str(number)
    text = str(value)
    if string_bound is None or len(text) <= string_bound:
        return [text.encode("utf-8")], text
    cut = text[:string_bound]
    needles = [cut.encode("utf-8")]
    upper = upper_bound(cut)
    if upper is not None:
        needles.append(upper.encode("utf-8", "surrogatepass"))
    return needles, text


def upper_bound(cut: str) -> str | None:
    """The upper bound Iceberg writes for a string cut to `cut` (UnicodeUtil.truncateStringMax):
    from the end, the first character that can be incremented, incremented, and the rest dropped;
    None when none can."""
    for position in range(len(cut) - 1, -1, -1):
        following = ord(cut[position]) + 1
        if 0xD800 <= following <= 0xDFFF:  # no character: Iceberg goes on past the surrogates
            following = 0xE000
        if following <= 0x10FFFF:
            return cut[:position] + chr(following)
    return None


AVRO_MAGIC = b"Obj\x01"
GZIP_MAGIC = b"\x1f\x8b"


def _long(buffer: bytes, at: int) -> tuple[int, int]:
    """Avro's zig-zag variable-length long at `at`: (value, position after it)."""
    shift, value = 0, 0
    while True:
        byte = buffer[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), at
        shift += 7


def avro_bytes(content: bytes, path: str) -> bytes:
    """An Avro container file (a manifest, a manifest list) with its blocks decompressed: its
    header, then every block's records as Avro writes them, where a statistic's bytes appear as
    written.  Iceberg compresses them with `deflate` (gzip) unless told otherwise; another codec
    raises, and the file's location is reported unread."""
    at = len(AVRO_MAGIC)
    header: dict[str, bytes] = {}
    while True:
        count, at = _long(content, at)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, at = _long(content, at)
        for _ in range(count):
            size, at = _long(content, at)
            key = content[at : at + size].decode("utf-8")
            at += size
            size, at = _long(content, at)
            header[key] = content[at : at + size]
            at += size
    sync = content[at : at + 16]
    at += 16
    codec = header.get("avro.codec", b"null").decode("utf-8")
    if codec not in ("null", "deflate"):
        raise ValueError(
            f"{path.rsplit('/', 1)[-1]} is compressed with {codec}, which the verifier does not decompress"
            " (write.avro.compression-codec gzip or uncompressed is read)"
        )
    parts = [content[:at]]
    while at < len(content):
        _, at = _long(content, at)
        size, at = _long(content, at)
        block = content[at : at + size]
        at += size
        if content[at : at + 16] != sync:
            raise ValueError(
                f"{path.rsplit('/', 1)[-1]} is not a whole Avro file (a block's sync marker differs)"
            )
        at += 16
        parts.append(zlib.decompress(block, -15) if codec == "deflate" else block)
    return b"".join(parts)


def metadata_matches(spark: Any, reader: Any, paths: list[str], ids: Any) -> Any:
    """(erasure_file, request_id) of every metadata file of `paths` whose bytes hold a listed id:
    one row per file and request.  The files are read whole with Spark's `binaryFile` reader."""
    kind = str(reader.identifier_type or "")
    wanted = [(r.erasure_id, r.request_id) for r in ids.select("erasure_id", "request_id").collect()]
    bound = getattr(reader, "string_bound", STRING_BOUND)
    encoded = [(_needles(kind, value, bound), request) for value, request in wanted if value is not None]
    files = (
        spark.read.format("binaryFile")
        .option("ignoreCorruptFiles", "false")
        .option("ignoreMissingFiles", "false")
        .load(paths)
        .select("path", "content")
        .collect()
    )
    found = set()
    for row in files:
        path = str(row.path)
        content = bytes(row.content)
        text = None
        name = path.rsplit("/", 1)[-1]
        if content[:2] == GZIP_MAGIC and ".json" in name:  # write.metadata.compression-codec gzip
            content = gzip.decompress(content)
        if ".json" in name or name == "version-hint.text":
            text = content.decode("utf-8", errors="replace")
        elif content[:4] == AVRO_MAGIC:
            content = avro_bytes(content, path)
        else:
            raise ValueError(
                f"{name} is a metadata file the verifier does not read (neither Avro nor JSON): verify"
                " again without it, or read it by hand"
            )
        for (needles, word), request in encoded:
            if text is not None:
                if re.search(rf"(?<![{_WORD}]){re.escape(word)}(?![{_WORD}])", text):
                    found.add((path, request))
            elif any(needle in content for needle in needles):
                found.add((path, request))
    return spark.createDataFrame(sorted(found), "erasure_file string, request_id string")
