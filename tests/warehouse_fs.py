"""The tests' view of the warehouse's files through the session's Hadoop FileSystem, so that the
same assertion holds on a local disk, HDFS and an object store (LAKEHOUSE_TEST_FS).

Locations are URIs or paths as the metastore gives them; results are keyed by path relative to
the location asked for.  Directories exist on an object store only while something is under
them, which is what a test of "gone" needs to know anyway.
"""

from __future__ import annotations

import hashlib
import io
from typing import Any


def _fs(spark: Any, location: str) -> tuple[Any, Any]:
    path = spark._jvm.org.apache.hadoop.fs.Path(str(location))
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def qualify(spark: Any, location: str) -> str:
    """The location as the filesystem spells it (`file:/x`, `hdfs://nn:port/x`), no trailing slash."""
    fs, path = _fs(spark, location)
    return str(fs.makeQualified(path).toString()).rstrip("/")


def exists(spark: Any, location: str) -> bool:
    fs, path = _fs(spark, location)
    return bool(fs.exists(path))


def read_bytes(spark: Any, location: str) -> bytes:
    fs, path = _fs(spark, location)
    stream = fs.open(path)
    try:
        return bytes(spark._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


def write_bytes(spark: Any, location: str, data: bytes) -> None:
    """Write a file (and its missing parent directories).  On the local disk without Hadoop's
    `.crc` side file, so a test's file is one file on every filesystem, as pyarrow wrote it."""
    fs, path = _fs(spark, location)
    if fs.getClass().getName() == "org.apache.hadoop.fs.LocalFileSystem":
        fs = fs.getRawFileSystem()
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()


def delete(spark: Any, location: str) -> None:
    fs, path = _fs(spark, location)
    fs.delete(path, True)


def write_parquet(spark: Any, location: str, table: Any) -> None:
    """A pyarrow table as one parquet file at `location` (a file path, not a directory)."""
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    write_bytes(spark, location, buffer.getvalue())


def read_parquet(spark: Any, location: str) -> Any:
    """One parquet file as a pyarrow table."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(read_bytes(spark, location)))


def listdir(spark: Any, location: str) -> list[str]:
    """The names directly under a directory (files and directories, hidden ones too), sorted, as
    os.listdir gives them; a missing directory lists as empty."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return []
    return sorted(str(status.getPath().getName()) for status in fs.listStatus(path))


def files(spark: Any, location: str) -> list[str]:
    """Every file under `location` (recursively, hidden names included), as full URIs, sorted."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return []
    found = []
    iterator = fs.listFiles(path, True)
    while iterator.hasNext():
        found.append(str(iterator.next().getPath().toString()))
    return sorted(found)


def tree(spark: Any, location: str) -> dict[str, str]:
    """Every file and directory under `location`: relative path -> SHA-256 of its bytes, or "dir"."""
    fs, root = _fs(spark, location)
    if not fs.exists(root):
        return {}
    base = str(fs.getFileStatus(root).getPath().toString()).rstrip("/") + "/"
    found: dict[str, str] = {}
    pending = [root]
    while pending:
        for status in fs.listStatus(pending.pop()):
            name = str(status.getPath().toString()).removeprefix(base)
            if status.isDirectory():
                found[name] = "dir"
                pending.append(status.getPath())
            else:
                found[name] = hashlib.sha256(read_bytes(spark, str(status.getPath().toString()))).hexdigest()
    return found


def mkdirs(spark: Any, location: str) -> None:
    fs, path = _fs(spark, location)
    fs.mkdirs(path)


def is_dir(spark: Any, location: str) -> bool:
    fs, path = _fs(spark, location)
    return bool(fs.exists(path)) and bool(fs.getFileStatus(path).isDirectory())


def data_files(spark: Any, location: str) -> dict[str, str]:
    """{name: SHA-256} of the data files directly in `location` (names starting with `_` or `.`
    are not data, as Spark reads a directory)."""
    fs, path = _fs(spark, location)
    if not fs.exists(path):
        return {}
    return {
        str(s.getPath().getName()): hashlib.sha256(read_bytes(spark, str(s.getPath().toString()))).hexdigest()
        for s in fs.listStatus(path)
        if s.isFile() and not str(s.getPath().getName()).startswith(("_", "."))
    }


def walk(spark: Any, location: str) -> list[str]:
    """Every file and directory under `location` (not itself), as full URIs, sorted."""
    fs, root = _fs(spark, location)
    if not fs.exists(root):
        return []
    found, pending = [], [root]
    while pending:
        for status in fs.listStatus(pending.pop()):
            found.append(str(status.getPath().toString()))
            if status.isDirectory():
                pending.append(status.getPath())
    return sorted(found)


def replace_tree(spark: Any, source: str, target: str) -> None:
    """Replace `target` with a copy of a file or a directory tree, byte for byte through
    Hadoop's FileUtil (on an object store a GET and a PUT per object: a test's copy, not a rename)."""
    source_fs, source_path = _fs(spark, source)
    target_fs, target_path = _fs(spark, target)
    target_fs.delete(target_path, True)
    copied = spark._jvm.org.apache.hadoop.fs.FileUtil.copy(
        source_fs, source_path, target_fs, target_path, False, spark._jsc.hadoopConfiguration()
    )
    if not copied:
        raise AssertionError(f"could not copy {source} to {target}")


def copy_tree(spark: Any, source: str, target: str) -> None:
    """Copy every file under `source` (hidden ones too) to the same relative path under `target`,
    byte for byte, as `shutil.copytree` would on a local disk (`source` may be one file)."""
    fs, root = _fs(spark, source)
    status = fs.getFileStatus(root)
    if not status.isDirectory():
        write_bytes(spark, target, read_bytes(spark, source))
        return
    base = str(status.getPath().toString()).rstrip("/") + "/"
    mkdirs(spark, target)
    for name in files(spark, source):
        write_bytes(spark, f"{target.rstrip('/')}/{name.removeprefix(base)}", read_bytes(spark, name))


def modified_ms(spark: Any, location: str) -> int:
    """A file's modification time (epoch milliseconds) as its directory's listing gives it, the
    way the product's batched listings see it."""
    fs, path = _fs(spark, location)
    path = fs.makeQualified(path)
    for status in fs.listStatus(path.getParent()):
        if str(status.getPath().getName()) == str(path.getName()):
            return int(status.getModificationTime())
    raise FileNotFoundError(location)


def rewrite(spark: Any, location: str) -> None:
    """Write a file again with the same bytes: its modification time becomes the filesystem's
    now on every filesystem (an object store has no `setTimes`: S3A ignores it).  On the local
    disk the stale `.crc` side file goes with the old file."""
    data = read_bytes(spark, location)
    delete(spark, location)
    write_bytes(spark, location, data)


def avro_holds(value: Any, bound: bytes) -> bool:
    """Whether an Avro record as fastavro reads it (dicts, lists, tuples) holds `bound` as one of
    its binary values: an Iceberg manifest's statistic, say."""
    if isinstance(value, bytes):
        return value == bound
    if isinstance(value, dict):
        return any(avro_holds(v, bound) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(avro_holds(v, bound) for v in value)
    return False


def manifest_bounds(spark: Any, table: str) -> list[bytes]:
    """Every lower and upper bound of every file entry of an Iceberg table's manifests (`table` as
    Spark names it, `iceberg.db.t`), read from their bytes with fastavro, not through Iceberg."""
    import fastavro

    described = spark.sql(f"describe table extended {table}").where("col_name = 'Location'").first()
    bounds = []
    for path in files(spark, f"{described.data_type}/metadata"):
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".avro") or name.startswith("snap-"):
            continue
        for entry in fastavro.reader(io.BytesIO(read_bytes(spark, path))):
            data_file = entry.get("data_file") or {}
            for kind in ("lower_bounds", "upper_bounds"):
                bounds += [b["value"] for b in data_file.get(kind) or []]
    return bounds
