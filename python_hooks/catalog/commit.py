"""How the purge's staging writes commit on each filesystem, and what that cost the store.

Spark's default commit protocol (Hadoop's FileOutputCommitter) writes each task's files under
`_temporary/` and renames them into place, at task commit and again at job commit.  A rename is
atomic and free on a local disk and on HDFS (the NameNode moves an inode).  On S3 a rename is a
copy and a delete, object by object: every byte written is copied twice more, which measured on
the loopback store here as `files_copied_bytes` = 2 x the bytes put.

So a write into an `s3a://` location commits with S3A's *magic* committer instead (through
Spark's `PathOutputCommitProtocol`, in spark-hadoop-cloud): each task uploads its files as
multipart uploads that are not yet visible, and the job commit completes them, so no byte is
copied and nothing is visible before the job commits.  The protocol is set for the staging write
only, around its statement: it refuses dynamic partition overwrite, which dbt's `insert_overwrite`
models use, and the staging table is new and written with a plain insert.  The session's S3A
settings that name the committer are the adapter's (`dbt.adapters.lakehouse.storage`).

`store_statistics` reads S3A's own counters (requests, bytes put, bytes copied) so that the purge
reports what each table's rewrite cost the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

from python_hooks.catalog.jvm import hadoop_path

PROTOCOL = "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
PARQUET_BINDING = "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"
SETTINGS = {
    "spark.sql.sources.commitProtocolClass": PROTOCOL,
    "spark.sql.parquet.output.committer.class": PARQUET_BINDING,
}
# S3A's counters (S3AStorageStatistics) the purge reports, with the names it reports them by
REPORTED = {
    "object_put_bytes": "bytes put",
    "files_copied_bytes": "bytes copied",
    "object_copy_requests": "copy requests",
    "object_put_request": "put requests",
    "object_list_request": "list requests",
    "object_metadata_request": "metadata requests",
    "object_bulk_delete_request": "bulk delete requests",
    "committer_commits_completed": "magic commits",
}


def is_object_store(location: str) -> bool:
    return urlparse(str(location)).scheme == "s3a"


def _protocol_available(spark: Any) -> bool:
    """spark-hadoop-cloud on the session's classpath (Spark's own class loader sees `spark.jars`)."""
    return bool(spark._jvm.org.apache.spark.util.Utils.classIsLoadable(PROTOCOL))


@contextmanager
def staging_commit(spark: Any, location: str) -> Iterator[str]:
    """Commit the writes of the block into `location` without renames where it is an object
    store and S3A's committers can be had; yields the committer used: S3A's by its name
    (`fs.s3a.committer.name`, "magic" as the adapter sets it), or "rename" (Spark's default)."""
    if not (is_object_store(location) and _protocol_available(spark)):
        yield "rename"
        return
    conf = spark.conf
    before = {key: conf.get(key, None) for key in SETTINGS}
    for key, value in SETTINGS.items():
        conf.set(key, value)
    try:
        yield str(spark._jsc.hadoopConfiguration().get("fs.s3a.committer.name", "file"))
    finally:
        for key, value in before.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)


def store_statistics(spark: Any, location: str, names: Iterable[str] | None = REPORTED) -> dict[str, int]:
    """S3A's counters of the filesystem of `location` (all of this process's use of that store):
    those of `names` (None: every one), or {} where the filesystem keeps none of them (local
    disk, HDFS)."""
    if not is_object_store(location):
        return {}
    path = hadoop_path(spark, str(location))
    statistics = path.getFileSystem(spark._jsc.hadoopConfiguration()).getStorageStatistics()
    found: dict[str, int] = {}
    iterator = statistics.getLongStatistics()
    while iterator.hasNext():
        item = iterator.next()
        name = str(item.getName())
        if names is None or name in names:
            found[name] = int(item.getValue())
    return found


def describe_cost(before: dict[str, int], after: dict[str, int]) -> str:
    """`12 put requests, 1.4 MB put, 0 bytes copied, ...` between two readings of store_statistics."""
    parts = []
    for name, label in REPORTED.items():
        if name in after:
            parts.append(f"{after[name] - before.get(name, 0)} {label}")
    return ", ".join(parts)
