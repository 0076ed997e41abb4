"""Files through the session's Hadoop FileSystem, so the same calls work on local disk, HDFS and
object stores.  Every function takes the SparkSession and plain strings, returns plain Python."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from python_hooks.errors import LakehouseError


def _resolve(spark: Any, path: str) -> tuple[Any, Any]:
    if not path or not str(path).strip():
        raise LakehouseError("A filesystem path must not be empty.")
    jpath = spark._jvm.org.apache.hadoop.fs.Path(str(path))
    fs = jpath.getFileSystem(spark._jsc.hadoopConfiguration())
    return fs, fs.makeQualified(jpath)


def qualify(spark: Any, path: str) -> str:
    """The fully qualified form of a path (`file:/x/y`, `hdfs://nn/x/y`), without a trailing slash."""
    _, jpath = _resolve(spark, path)
    return str(jpath.toString()).rstrip("/")


def path_within(path: str, root: str) -> bool:
    """True when `path` is `root` or lies inside it, compared as given (qualify them first)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def is_within(spark: Any, path: str, root: str) -> bool:
    """True when `path` is `root` or lies inside it (compared on qualified paths)."""
    return path_within(qualify(spark, path), qualify(spark, root))


def _entry(status: Any) -> dict[str, Any]:
    return {
        "path": str(status.getPath().toString()),
        "name": str(status.getPath().getName()),
        "is_dir": bool(status.isDirectory()),
        "size": int(status.getLen()),
        "modification_time": int(status.getModificationTime()),
    }


def _walk(fs: Any, jpath: Any, recursive: bool) -> Iterator[dict[str, Any]]:
    for status in fs.listStatus(jpath):
        entry = _entry(status)
        yield entry
        if recursive and entry["is_dir"]:
            yield from _walk(fs, status.getPath(), recursive)


def list_dir(spark: Any, path: str, recursive: bool = False) -> list[dict[str, Any]]:
    """Entries under a directory: path, name, is_dir, size (bytes), modification_time (epoch ms).

    A missing path lists as empty; a file lists as itself.
    """
    fs, jpath = _resolve(spark, path)
    if not fs.exists(jpath):
        return []
    if not fs.getFileStatus(jpath).isDirectory():
        return [_entry(fs.getFileStatus(jpath))]
    return sorted(_walk(fs, jpath, recursive), key=lambda e: e["path"])


def exists(spark: Any, path: str) -> bool:
    fs, jpath = _resolve(spark, path)
    return bool(fs.exists(jpath))


def read_text(spark: Any, path: str) -> str:
    """A small file's whole text, UTF-8 (one open and read: no Spark job)."""
    fs, jpath = _resolve(spark, path)
    stream = fs.open(jpath)
    try:
        return str(spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def summary(spark: Any, path: str) -> dict[str, int]:
    """Files, directories and bytes under a path (zeros when it does not exist)."""
    fs, jpath = _resolve(spark, path)
    if not fs.exists(jpath):
        return {"files": 0, "dirs": 0, "bytes": 0}
    content = fs.getContentSummary(jpath)
    return {
        "files": int(content.getFileCount()),
        "dirs": int(content.getDirectoryCount()),
        "bytes": int(content.getLength()),
    }


def fingerprint(spark: Any, path: str) -> str:
    """A digest of every data file under a path (name, size, modification time).

    Two equal fingerprints mean no file was added, removed or rewritten in between; hidden files
    (`_SUCCESS`, `.crc`) are ignored.
    """
    return digest(
        (entry["path"], entry["size"], entry["modification_time"])
        for entry in list_dir(spark, path, recursive=True)
        if not entry["is_dir"] and not entry["name"].startswith(("_", "."))
    )


def digest(files: Iterable[tuple[str, int, int]]) -> str:
    """The fingerprint of data files given as (path, size, modification time): equal digests mean
    the same files, unchanged, short of a file rewritten with its size and time kept (the purge's
    commit check also compares each file's version: file_facts.Listing.changes_since)."""
    sha = hashlib.sha1(usedforsecurity=False)
    for path, size, modified in files:
        sha.update(f"{path}|{size}|{modified}\n".encode())
    return sha.hexdigest()


def mkdirs(spark: Any, path: str) -> bool:
    fs, jpath = _resolve(spark, path)
    return bool(fs.mkdirs(jpath))


def _refuse(verb: str, source: tuple[Any, Any, str], destination: tuple[Any, Any, str]) -> None:
    """A move or copy needs its source and must not overwrite its destination: nothing is lost."""
    (fs, src, given), (dst_fs, dst, target) = source, destination
    if not fs.exists(src):
        raise LakehouseError(f"Cannot {verb} {given}: it does not exist.")
    if dst_fs.exists(dst):
        raise LakehouseError(
            f"Cannot {verb} {given} to {target}: the destination exists. "
            "Remove it or choose another destination."
        )


def move(spark: Any, source: str, destination: str) -> bool:
    """Rename `source` to `destination`, creating the destination's parent directories.

    Refuses to overwrite: an existing destination is an error, so nothing is ever lost by a move.
    """
    fs, src = _resolve(spark, source)
    _, dst = _resolve(spark, destination)
    _refuse("move", (fs, src, source), (fs, dst, destination))
    fs.mkdirs(dst.getParent())
    if not fs.rename(src, dst):
        raise LakehouseError(f"The filesystem refused to move {source} to {destination}.")
    return True


# Object stores whose Hadoop connector renames a directory object by object (a copy, then a
# delete of each source object): a failure or a kill midway leaves part of it at each place.
OBJECT_STORE_SCHEMES = frozenset({"s3a", "s3", "s3n", "gs", "oss"})


def is_object_store(spark: Any, path: str) -> bool:
    """Whether the filesystem of `path` is an object store: a key space without directories,
    where a directory is a key prefix (S3A and the others of OBJECT_STORE_SCHEMES)."""
    fs, _ = _resolve(spark, path)
    return str(fs.getScheme()).lower() in OBJECT_STORE_SCHEMES


def renames_atomically(spark: Any, path: str) -> bool:
    """Whether a directory rename on the filesystem of `path` is one step (local disk, HDFS), not
    a copy and a delete per object (S3A and other object stores)."""
    return not is_object_store(spark, path)


def copy(spark: Any, source: str, destination: str) -> dict[str, int]:
    """Copy `source` (a file, or a directory recursively) to `destination`, creating the
    destination's parents; the source stays.  Refuses an existing destination, as `move` does, and
    checks that the copy holds as many files and bytes as the source; returns its summary."""
    fs, src = _resolve(spark, source)
    dst_fs, dst = _resolve(spark, destination)
    _refuse("copy", (fs, src, source), (dst_fs, dst, destination))
    wanted = summary(spark, source)
    dst_fs.mkdirs(dst.getParent())
    copied = spark._jvm.org.apache.hadoop.fs.FileUtil.copy(
        fs, src, dst_fs, dst, False, spark._jsc.hadoopConfiguration()
    )
    got = summary(spark, destination)
    if not copied or (got["files"], got["bytes"]) != (wanted["files"], wanted["bytes"]):
        raise LakehouseError(
            f"The copy of {source} to {destination} is incomplete: {got['files']} file(s), "
            f"{got['bytes']} byte(s) of {wanted['files']}, {wanted['bytes']}."
        )
    return got


def delete(spark: Any, path: str, recursive: bool = True) -> dict[str, Any]:
    """Delete a path; return what went: {deleted, files, bytes}.  A missing path deletes nothing."""
    fs, jpath = _resolve(spark, path)
    if not fs.exists(jpath):
        return {"deleted": False, "files": 0, "bytes": 0}
    before = summary(spark, path)
    ok = bool(fs.delete(jpath, bool(recursive)))
    if not ok:
        raise LakehouseError(f"The filesystem refused to delete {path}.")
    return {"deleted": True, "files": before["files"], "bytes": before["bytes"]}
