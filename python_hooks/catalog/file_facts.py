"""The facts of data files, many per call: listings and footers, on every filesystem Spark reads.

The purge decides from files' footers which files cannot hold a listed id (data skipping), counts
the rows of what it rewrote, and fingerprints a partition's files for Gobblin's commit check.
Each needs the listing or the footer of many files; through py4j object by object that is a
handful of round trips per file.  Here one call lists many locations, or reads many
footers, in the JVM (FileFacts.java: the session's Hadoop FileSystem, parquet-mr and ORC, which
Spark ships) on a small thread pool that lives for that call only, and returns one JSON document.

FileFacts.java is compiled in the driver's JVM by Janino, the compiler Spark itself uses for its
generated code, so nothing has to be installed on the cluster: the source ships with this
package, and the compiled class is kept on the SparkContext it was compiled for (jvm.py
`compiled`; code, not data: it dies with the context).  Local disk, HDFS, S3 and the cluster target all get the same
code path.

    facts = FileFacts(spark)
    facts.list(["file:/w/t/ds=a"])          -> {location: Listing}
    facts.footers(paths, "parquet", "metadata.guestid")  -> {path: Footer}
    facts.samples([("file:/w/t", 1, 7)], 16, 2)  -> [[path]]
    facts.tree(["s3a://b/w/t"])             -> {root: error or None}; list/samples under it from memory
    facts.copy([(path, directory)])          -> [error]
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from python_hooks.catalog.filesystem import is_object_store
from python_hooks.catalog.jvm import compiled, java_array, string_array

SOURCE = Path(__file__).with_name("FileFacts.java")
CLASS_NAME = "lakehouse.FileFacts"
# footers and listings read at once: remote filesystems answer slowly, local disk does not mind
THREADS = 8


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    modified: int
    # the store's own mark of this write of the file (FileFacts.version): an object store's
    # entity tag, HDFS's file id; None on the local disk
    version: str | None = None


@dataclass
class Listing:
    """The data files Spark reads under one location, by Spark 3.5's listing rule
    (FileFacts.hidden: `.x`, `_x` without `=`, `x._COPYING_` left out)."""

    location: str
    exists: bool = True
    files: list[DataFile] = field(default_factory=list)
    # a sub-directory in a partition (not read by Spark in a Hive partition): rows unknown
    subdirectories: bool = False
    error: str | None = None

    def fingerprint(self) -> str:
        """The digest of every file's path, size, modification time and version: a file replaced
        keeping its size and time differs by its version where the store has one (an entity tag,
        an HDFS file id), not on the local disk (docs/safety.md)."""
        digest = hashlib.sha256()
        for item in sorted(self.files, key=lambda f: f.path):
            digest.update(f"{item.path}\t{item.size}\t{item.modified}\t{item.version or ''}\n".encode())
        return digest.hexdigest()

    def changes_since(self, before: list[DataFile], most: int = 3) -> str:
        """What differs from the files `before` (the commit check's test: "" when nothing does,
        every field compared as the fingerprint compares it), for a person: "part-1 added;
        part-0 written again (modification time, version changed)", the first `most` of it."""
        then, now = {f.path: f for f in before}, {f.path: f for f in self.files}
        changes = [f"{_name(p)} added" for p in sorted(now.keys() - then.keys())]
        changes += [f"{_name(p)} removed" for p in sorted(then.keys() - now.keys())]
        for path in sorted(now.keys() & then.keys()):
            old, new = then[path], now[path]
            what = [said for key, said in _SAID.items() if getattr(old, key) != getattr(new, key)]
            if what:
                changes.append(f"{_name(path)} written again ({', '.join(what)} changed)")
        more = f"; {len(changes) - most} more change(s)" if len(changes) > most else ""
        return "; ".join(changes[:most]) + more


# a DataFile's fields as Listing.changes_since names them
_SAID = {"size": "size", "modified": "modification time", "version": "version"}


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@dataclass
class Group:
    """One row group (parquet) or the file (ORC): rows, NULLs (None: unknown), min and max as
    text (None: no non-NULL value or no statistics), whether it has statistics."""

    rows: int
    nulls: int | None
    min: str | None
    max: str | None
    has_statistics: bool


@dataclass
class Footer:
    path: str
    rows: int | None = None
    # how many of the file's columns equal the path asked for, ignoring case
    matches: int = 0
    # parquet: "INT64:null", "INT32:INTEGER(16,true)"; ORC: "ORC:LONG"
    type: str | None = None
    groups: list[Group] = field(default_factory=list)
    error: str | None = None


class FileFacts:
    """Listings and footers, batched (see the module doc)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        # an instance of its own: the statuses it listed and the trees it keeps are this object's
        self.helper = compiled(spark, SOURCE, CLASS_NAME).fresh()
        self.conf = spark._jsc.hadoopConfiguration()

    def tree(self, roots: list[str]) -> dict[str, str | None]:
        """List every file under each root at once and keep the listing: `list` and `samples` of
        the locations under a kept root are answered from it, without the store (on S3A one paged
        listing per root instead of a HEAD and two LISTs per directory).  A root whose listing
        failed is not kept (its locations are read from the store); {root: that error or None}.
        A listing from memory is as old as this call: only data skipping keeps trees, on a
        FileFacts of its own; the commit check and the rewrite list the store (the node's)."""
        if not roots:
            return {}
        # an object store's whole prefix is one paged listing; elsewhere a tree is listed
        # directory by directory, as the store's own listings would be
        flat = java_array(self.spark, "boolean", [is_object_store(self.spark, root) for root in roots])
        text = self.helper.trees(self.conf, string_array(self.spark, list(roots)), flat, THREADS)
        return dict(zip(roots, json.loads(str(text)), strict=True))

    def list(
        self, locations: list[str], recursive: bool = False, exclude: str | None = None
    ) -> dict[str, Listing]:
        """{location: Listing} of each location (recursively for an unpartitioned table's)."""
        if not locations:
            return {}
        text = self.helper.list(
            self.conf, string_array(self.spark, list(locations)), recursive, exclude, THREADS
        )
        found = {}
        for item in json.loads(str(text)):
            found[item["location"]] = Listing(
                location=item["location"],
                exists=bool(item.get("exists", True)),
                files=[
                    DataFile(path, int(size), int(modified), version)
                    for path, size, modified, version in item.get("files", [])
                ],
                subdirectories=bool(item.get("subdirectories", False)),
                error=item.get("error"),
            )
        return found

    def footers(self, paths: list[str], storage_format: str, column: str | None) -> dict[str, Footer]:
        """{path: Footer}: rows, and `column`'s statistics (a dotted path; None: rows only)."""
        if not paths:
            return {}
        text = self.helper.footers(
            self.conf, string_array(self.spark, list(paths)), storage_format, column, THREADS
        )
        found = {}
        for item in json.loads(str(text)):
            found[item["path"]] = Footer(
                path=item["path"],
                rows=item.get("rows"),
                matches=int(item.get("matches", 0)),
                type=item.get("type"),
                groups=[
                    Group(int(r), None if n < 0 else int(n), lo, hi, bool(s))
                    for r, n, lo, hi, s in item.get("groups", [])
                ],
                error=item.get("error"),
            )
        return found

    def copy(self, copies: list[tuple[str, str]]) -> list[str]:
        """Copy each (file, directory) byte for byte into the directory (made first), keeping the
        file's name; the errors, one per file that could not be copied."""
        if not copies:
            return []
        sources = string_array(self.spark, [source for source, _ in copies])
        directories = string_array(self.spark, [directory for _, directory in copies])
        text = self.helper.copy(self.conf, sources, directories, THREADS)
        return [str(error) for error in json.loads(str(text)) if error is not None]

    def rows(self, locations: list[str], storage_format: str) -> dict[str, int | None]:
        """{location: rows of the data files directly in it, from their footers}, or None for a
        location whose rows the footers cannot give as Spark reads them (a sub-directory, an
        unreadable footer, a listing error).  Two calls for all the locations."""
        listed = self.list(locations)
        paths = [f.path for item in listed.values() for f in item.files if f.size > 0]
        footers = self.footers(paths, storage_format, None)
        found: dict[str, int | None] = {}
        for location, item in listed.items():
            mine = [footers[f.path] for f in item.files if f.size > 0]
            if item.error is not None or item.subdirectories or any(f.error or f.rows is None for f in mine):
                found[location] = None
            else:
                found[location] = sum(int(f.rows or 0) for f in mine)
        return found

    def samples(self, tables: list[tuple[str, int, int]], limit: int, per_directory: int) -> list[list[str]]:
        """For each (location, depth, seed): up to `limit` data files `depth` partition levels under
        `location`, from directories picked at random, at most `per_directory` from each (none when
        the location cannot be read).  One call for all."""
        if not tables:
            return []
        depths = java_array(self.spark, "int", [depth for _, depth, _ in tables])
        seeds = java_array(self.spark, "long", [seed for _, _, seed in tables])
        locations = string_array(self.spark, [location for location, _, _ in tables])
        text = self.helper.samples(self.conf, locations, depths, limit, per_directory, seeds, THREADS)
        return [[str(p) for p in found] for found in json.loads(str(text))]


# ---- the data-skipping rule --------------------------------------------------------------------

# the integral types whose statistics are exact for an integral identifier: plain and signed
# INT32/INT64 in parquet (INT8/16/32/64 annotations), BYTE/SHORT/INT/LONG in ORC
_INTEGRAL_PARQUET = ("INT32:null", "INT64:null")
_INTEGRAL_ORC = ("ORC:BYTE", "ORC:SHORT", "ORC:INT", "ORC:LONG")


def integral(footer_type: str | None) -> bool:
    if footer_type is None:
        return False
    if footer_type in _INTEGRAL_PARQUET or footer_type in _INTEGRAL_ORC:
        return True
    physical, _, logical = footer_type.partition(":")
    return physical in ("INT32", "INT64") and logical.startswith("INTEGER(") and logical.endswith(",true)")


def may_hold(footer: Footer, bounds: tuple[int, int]) -> bool:
    """False only when the footer proves that no row of the file has an identifier in
    [bounds[0], bounds[1]]: every row group's statistics lie outside the range, or say it holds
    only NULLs (which match no id).  An empty file holds none.  Anything the rule cannot read
    (an error, a missing or ambiguous column, a non-integral or unsigned type, a group without
    statistics) may hold ids."""
    if footer.error is not None or footer.rows is None:
        return True
    if footer.rows == 0:
        return False
    if footer.matches != 1 or not integral(footer.type):
        return True
    for group in footer.groups:
        if group.rows == 0:
            continue
        if not group.has_statistics:
            return True
        if group.min is None or group.max is None:
            if group.nulls is not None and group.nulls == group.rows:
                continue  # only NULLs
            return True
        if not (int(group.max) < bounds[0] or int(group.min) > bounds[1]):
            return True
    return False
