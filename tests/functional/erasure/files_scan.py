"""A direct scan of the files, outside the product's code: which files hold a set of ids.

What it reads: every file under every location the metastore names (each database's, each table's
and each partition's, side tables included) and every location the purge journal names (each
swap's old and new location, each staging location), read as JSON straight from
`<warehouse>/_lakehouse_journal/purge/`, with pyarrow.  Under each location it follows Spark 3.5's
listing rule (`HadoopFSUtils.shouldFilterOutPathName` for what it descends into,
`PartitioningAwareFileIndex.isDataPath` for what is data): a file or directory whose name starts
with `.`, or with `_` and holds no `=`, or ends with `._COPYING_`, is not read.  The rule applies
to names *under* a location, never to the location itself: an unpartitioned table purged into
`<L>/_purge_<ts>` is read there, since the metastore names that directory.

It lists and reads through the session's Hadoop FileSystem (`Hadoop`), so the same scan reads a
warehouse on the local disk, on HDFS or on an object store; pyarrow decodes the bytes read there.
Files are named by their qualified URI as the filesystem lists them (`file:/w/db.db/t/ds=a/part-0`,
`hdfs://nn:port/...`, `s3a://bucket/...`).  The crash harness's lakes, whose metastore no Spark of
the test process may open, are scanned with the OS's calls on a local disk (`LocalDisk`), and
through the test process's own session (`Hadoop`, never the lake's metastore) on HDFS and S3.

A file is *live* when it lies directly in the location of an onboarded table (one with a
`dataset.descriptor`) or of one of its partitions, as the metastore lists them now (Spark's own
catalog, not python_hooks), a copy otherwise.  The erasure tests hold the ledger to what this finds.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import pyarrow.orc as orc
import pyarrow.parquet as pq


class Hadoop:
    """The warehouse's files through the session's Hadoop FileSystem."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()

    def _path(self, location: Any) -> tuple[Any, Any]:
        """(filesystem, qualified path) of a location: a string as the product and Hadoop's
        `Path.toString()` spell it, or a `java.net.URI` from the catalog (percent-encoded)."""
        path = self.jvm.org.apache.hadoop.fs.Path(location)
        fs = path.getFileSystem(self.conf)
        return fs, fs.makeQualified(path)

    def name(self, location: Any) -> str:
        """The location as this scan names it: qualified, as the filesystem lists it."""
        return str(self._path(location)[1].toString()).rstrip("/")

    def from_uri(self, uri: str) -> str:
        """A percent-encoded URI (`input_file_name()`, a catalog location's text) named as above."""
        return self.name(self.jvm.java.net.URI.create(uri))

    def files(self, root: Any) -> list[tuple[str, str, int]]:
        """[(file, its directory, size)] Spark's listing reads under `root`, by `spark_skips`;
        `root`'s own name plays no part (a file given as the root is itself)."""
        fs, path = self._path(root)
        if not fs.exists(path):
            return []
        status = fs.getFileStatus(path)
        if not status.isDirectory():
            return [
                (
                    str(status.getPath().toString()),
                    str(status.getPath().getParent().toString()),
                    status.getLen(),
                )
            ]
        found = []
        pending = [path]
        while pending:
            for child in fs.listStatus(pending.pop()):
                child_path = child.getPath()
                if spark_skips(str(child_path.getName()), child.isDirectory()):
                    continue
                if child.isDirectory():
                    pending.append(child_path)
                else:
                    found.append(
                        (str(child_path.toString()), str(child_path.getParent().toString()), child.getLen())
                    )
        return sorted(found)

    def read(self, name: str) -> bytes:
        fs, path = self._path(name)
        stream = fs.open(path)
        try:
            return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def json_files(self, directory: str, suffix: str) -> list[Any]:
        """The JSON documents of the files named `*<suffix>` one level below `directory`'s
        subdirectories (`<directory>/<run>/<name><suffix>`), hidden names left out."""
        fs, path = self._path(directory)
        if not fs.exists(path):
            return []
        found = []
        for run in sorted(fs.listStatus(path), key=lambda s: str(s.getPath().getName())):
            if not run.isDirectory():
                continue
            for item in sorted(fs.listStatus(run.getPath()), key=lambda s: str(s.getPath().getName())):
                file_name = str(item.getPath().getName())
                if item.isFile() and file_name.endswith(suffix) and not file_name.startswith("."):
                    found.append(json.loads(self.read(str(item.getPath().toString())).decode("utf-8")))
        return found


class LocalDisk:
    """A local directory read with the OS's calls: for the crash harness's lakes on a local disk,
    read with no Spark in the test process."""

    @staticmethod
    def name(location: str) -> str:
        return local_directory(location)

    from_uri = name  # a percent-encoded URI is decoded by `local_directory` too

    @staticmethod
    def files(root: Any) -> list[tuple[str, str, int]]:
        root = str(root)
        if not os.path.isdir(root):
            return [(root, os.path.dirname(root), os.path.getsize(root))] if os.path.isfile(root) else []
        found = []
        pending = [root]
        while pending:
            directory = pending.pop()
            for child in sorted(os.listdir(directory)):
                path = os.path.join(directory, child)
                is_dir = os.path.isdir(path)
                if spark_skips(child, is_dir):
                    continue
                if is_dir:
                    pending.append(path)
                elif os.path.isfile(path):
                    found.append((path, directory, os.path.getsize(path)))
        return sorted(found)

    @staticmethod
    def read(name: str) -> bytes:
        with open(name, "rb") as handle:
            return handle.read()


def local_directory(location: str) -> str:
    """A local location (a URI: `file:/x/ds=10%253A00`) as the directory on disk."""
    from urllib.parse import unquote

    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            location = location[len(prefix) :]
            break
    return unquote(location.rstrip("/"))


def spark_skips(name: str, directory: bool) -> bool:
    """Whether Spark's listing leaves out a name under a table's or partition's location: a
    directory it does not descend into (`shouldFilterOutPathName`), a file it does not read as
    data (that rule, then `isDataPath`, which also drops `_metadata` and `_common_metadata`)."""
    if name.endswith("._COPYING_") or name.startswith("."):
        return True
    if name.startswith("_") and "=" not in name:
        return not directory or not name.startswith(("_metadata", "_common_metadata"))
    return False


def _catalog(spark: Any) -> tuple[Any, Any, Any]:
    catalog = spark._jsparkSession.sessionState().catalog().externalCatalog()
    convert = spark._jvm.scala.collection.JavaConverters.seqAsJavaList
    no_filter = spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq([])
    return catalog, convert, no_filter


def live_directories(spark: Any, databases: list[str]) -> set[str]:
    """The directories readers of the onboarded tables read now: the location of each unpartitioned
    one, of each partition of the others (qualified, as `Hadoop.name` gives them)."""
    catalog, convert, no_filter = _catalog(spark)
    hadoop = Hadoop(spark)
    found = set()
    for database in databases:
        if not catalog.databaseExists(database):
            continue
        for table in convert(catalog.listTables(database)):
            meta = catalog.getTable(database, table)
            if not meta.properties().contains("dataset.descriptor"):
                continue
            if meta.partitionColumnNames().isEmpty():
                found.add(hadoop.name(meta.location()))
                continue
            for part in convert(catalog.listPartitionsByFilter(database, table, no_filter, "UTC")):
                found.add(hadoop.name(part.location()))
    return found


def _values(data: bytes, name: str, field: list[str]) -> list[Any]:
    try:
        table = (
            pq.read_table(io.BytesIO(data)) if not name.endswith(".orc") else orc.read_table(io.BytesIO(data))
        )
    except Exception:  # noqa: BLE001 - ORC files carry no suffix in Hive tables
        table = orc.read_table(io.BytesIO(data))
    names = {n.lower(): n for n in table.column_names}
    if field[0].lower() not in names:
        return []
    values = table.column(names[field[0].lower()]).to_pylist()
    for part in field[1:]:
        values = [
            None if v is None else {k.lower(): x for k, x in v.items()}.get(part.lower()) for v in values
        ]
    return values


def _journal_locations(spark: Any, databases: list[str]) -> set[str]:
    """Every old, new and staging location of every purge journal entry of a table in
    `databases`, logged or not (the journal is the warehouse's: other databases' entries are
    other tests' purges)."""
    found: set[str] = set()
    wanted = {d.lower() for d in databases}
    journal = f"{warehouse(spark)}/_lakehouse_journal/purge"
    for document in Hadoop(spark).json_files(journal, ".intent.json"):
        if str(document.get("database") or "").lower() not in wanted:
            continue
        found.add(str(document.get("staging_location") or ""))
        for swap in document.get("partitions", []):
            found.update((str(swap.get("old_location") or ""), str(swap.get("new_location") or "")))
    return {location for location in found if location}


def warehouse(spark: Any) -> str:
    """The warehouse directory, qualified (`file:/...`, `hdfs://...`, `s3a://...`)."""
    return Hadoop(spark).name(str(spark.conf.get("spark.sql.warehouse.dir")))


def named_locations(spark: Any, databases: list[str]) -> set[str]:
    """The directories the metastore names in `databases` (every table, onboarded or not, side
    tables too, and every partition) and the purge journal names, wherever they lie."""
    catalog, convert, no_filter = _catalog(spark)
    hadoop = Hadoop(spark)
    found = set()
    for database in databases:
        if not catalog.databaseExists(database):
            continue
        found.add(hadoop.name(catalog.getDatabase(database).locationUri()))
        for table in convert(catalog.listTables(database)):
            meta = catalog.getTable(database, table)
            if meta.storage().locationUri().isDefined():
                found.add(hadoop.name(meta.location()))
            if meta.partitionColumnNames().isEmpty():
                continue
            for part in convert(catalog.listPartitionsByFilter(database, table, no_filter, "UTC")):
                found.add(hadoop.name(part.location()))
    found.update(hadoop.name(location) for location in _journal_locations(spark, databases))
    return found


def ids_in_files(
    spark: Any,
    databases: list[str],
    ids: set[Any],
    field: list[str] | None = None,
    roots: list[str] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """({live file: rows holding an id}, {other file: rows}) under every location the metastore
    and the journal name for the databases, their databases' directories (and `roots`, e.g. a
    backup_dir), read through the session's Hadoop FileSystem."""
    hadoop = Hadoop(spark)
    scanned = [f"{warehouse(spark)}/{d}.db" for d in databases] + [hadoop.name(r) for r in roots or []]
    scanned += sorted(named_locations(spark, databases))
    return scan(hadoop, scanned, live_directories(spark, databases), ids, field)


def data_files(spark: Any, root: str) -> list[str]:
    """The files Spark's listing reads under `root` (recursively), by `spark_skips`, qualified;
    `root`'s own name plays no part."""
    return [name for name, _, _ in Hadoop(spark).files(root)]


def scan(
    files: Hadoop | LocalDisk,
    scanned: list[Any],
    live: set[str],
    ids: set[Any],
    field: list[str] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """ids_in_files over the locations `scanned` (read through `files`), `live` the directories
    readers read, named as `files` names them.  A file reached from several locations is counted
    once."""
    field = field or ["guestid"]
    found_live: dict[str, int] = {}
    found_copies: dict[str, int] = {}
    seen: set[str] = set()
    for root in scanned:
        for name, directory, size in files.files(root):
            if name in seen or size == 0:
                continue
            seen.add(name)
            held = sum(1 for v in _values(files.read(name), name, field) if v in ids)
            if held:
                target = found_live if directory in live else found_copies
                target[name] = held
    return found_live, found_copies
