"""Files through the session's Hadoop FileSystem (local disk, HDFS and object stores alike):
whole-file writes that readers see complete or not at all, a table's storage format, and the
parquet and ORC footer readers Spark ships.  Many files at once: file_facts.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.jvm import jvm as jvm_view


def publish_file(spark: Any, directory: Any, name: str, data: bytes, replace: bool = False) -> None:
    """Write `data` as the file `directory/name` (a Hadoop Path) so that a reader sees all of it
    or none of it.  With `replace` an existing file of that name is replaced; without it, it is an
    error.

    On S3A the object is written under its own name: S3 makes it visible only when its upload
    completes, at the stream's close, and a failed write is aborted, so nothing is ever visible
    half-written.  One PUT, where a temporary name and a rename would cost a COPY of every byte, a
    DELETE and the probes around them (the journal's and the result files' renames made 6 COPY
    requests of a purge, docs/benchmarks.md); a replaced file is the old one until the new is whole.

    Elsewhere (a local disk, HDFS: a file is visible while it is written) it goes to a hidden
    temporary name first, then is renamed (readers skip names starting with `.`); with `replace`,
    the existing file is deleted just before the rename (Hadoop's rename does not replace a file),
    so a reader in that instant sees no file.  On an error the temporary file is removed.
    """
    path_class = jvm_view(spark).org.apache.hadoop.fs.Path
    fs = directory.getFileSystem(spark._jsc.hadoopConfiguration())
    target = path_class(directory, name)
    if str(fs.getScheme()).lower() == "s3a":
        _put(fs.create(target, replace), data)  # create refuses an existing file unless replace
        return
    # one writer per name: a crash's leftover temporary file is overwritten by the next write
    temporary = path_class(directory, f".{name}.tmp")
    stream = fs.create(temporary, True)  # creates the directory when it is missing
    try:
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()
        if replace and fs.exists(target):
            fs.delete(target, False)
        if not fs.rename(temporary, target):
            raise OSError(f"could not rename {temporary} to {target}")
    except Exception:
        fs.delete(temporary, False)
        raise


def _put(stream: Any, data: bytes) -> None:
    """Write and close an S3A stream (the upload completes at the close), or abort it on an error
    (its upload is cancelled: closing would publish what had been written)."""
    try:
        stream.write(bytearray(data))
    except Exception:
        stream.abort()
        raise
    stream.close()


def storage_format(meta: Any) -> str | None:
    """`parquet` or `orc` for a table whose files the footer count can read, else None."""
    provider = metastore.provider(meta)
    if provider in ("parquet", "orc"):
        return provider
    if provider != "hive":
        return None
    storage = meta.storage()
    described = " ".join(
        str(option.get()).lower() if option.isDefined() else ""
        for option in (storage.inputFormat(), storage.serde())
    )
    for name in ("parquet", "orc"):
        if name in described:
            return name
    return None


@contextmanager
def parquet_footer_reader(spark: Any, status: Any) -> Iterator[Any]:
    """parquet-mr's ParquetFileReader on a Hadoop FileStatus (footer only until asked), closed after."""
    jvm = jvm_view(spark)
    conf = spark._jsc.hadoopConfiguration()
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
        jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromStatus(status, conf)
    )
    try:
        yield reader
    finally:
        reader.close()


@contextmanager
def orc_footer_reader(spark: Any, status: Any) -> Iterator[Any]:
    """ORC's Reader on a Hadoop FileStatus (file tail and statistics), closed after."""
    jvm = jvm_view(spark)
    conf = spark._jsc.hadoopConfiguration()
    path = status.getPath()
    options = jvm.org.apache.orc.OrcFile.readerOptions(conf).filesystem(path.getFileSystem(conf))
    reader = jvm.org.apache.orc.OrcFile.createReader(path, options)
    try:
        yield reader
    finally:
        reader.close()


def not_data(name: str) -> bool:
    """Whether Spark leaves a name under a location out of what it reads: `.x`, and `_x` unless
    it holds `=` (`_k=v` is a partition directory Spark reads).  Spark also skips `x._COPYING_`
    (a copy in progress): the erasure verifier lists it (its bytes may hold ids) and reports its
    location unread, and the purge's listing (FileFacts.java) follows Spark there."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def data_files(spark: Any, location: str, exclude: str | None = None) -> list[Any]:
    """The data files under `location`, recursively, as Hadoop FileStatus objects.

    Names starting with `.`, or with `_` and holding no `=`, are left out at every level (Spark's
    rule, `not_data`), and so is the directory `exclude` (an unpartitioned table's staging
    directory lies inside its location).  A location that does not exist has no files.
    """
    jvm = jvm_view(spark)
    path = jvm.org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    skip = str(fs.makeQualified(jvm.org.apache.hadoop.fs.Path(exclude)).toString()) if exclude else None
    files: list[Any] = []
    pending = [path]
    while pending:
        directory = pending.pop()
        if not fs.exists(directory):
            continue
        for status in fs.listStatus(directory):
            child = status.getPath()
            if not_data(str(child.getName())):
                continue
            if skip is not None and str(child.toString()) == skip:
                continue
            if status.isDirectory():
                pending.append(child)
            else:
                files.append(status)
    return sorted(files, key=lambda status: str(status.getPath().toString()))
