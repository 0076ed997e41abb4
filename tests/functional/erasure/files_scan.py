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

A file is *live* when it lies directly in the location of an onboarded table (one with a
`dataset.descriptor`) or of one of its partitions, as the metastore lists them now (Spark's own
catalog, not python_hooks), a copy otherwise.  The erasure tests hold the ledger to what this finds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.orc as orc
import pyarrow.parquet as pq


def _local(location: str) -> str:
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            return location[len(prefix) :].rstrip("/")
    return location.rstrip("/")


def live_directories(spark: Any, databases: list[str]) -> set[str]:
    """The directories readers of the onboarded tables read now: the location of each unpartitioned
    one, of each partition of the others."""
    catalog = spark._jsparkSession.sessionState().catalog().externalCatalog()
    found = set()
    for database in databases:
        if not catalog.databaseExists(database):
            continue
        for table in spark._jvm.scala.collection.JavaConverters.seqAsJavaList(catalog.listTables(database)):
            meta = catalog.getTable(database, table)
            if not meta.properties().contains("dataset.descriptor"):
                continue
            if meta.partitionColumnNames().isEmpty():
                found.add(local_directory(str(meta.location().toString())))
                continue
            no_filter = spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq([])
            for part in spark._jvm.scala.collection.JavaConverters.seqAsJavaList(
                catalog.listPartitionsByFilter(database, table, no_filter, "UTC")
            ):
                found.add(local_directory(str(part.location().toString())))
    return found


def _values(path: Path, field: list[str]) -> list[Any]:
    try:
        table = pq.read_table(path) if not path.name.endswith(".orc") else orc.read_table(path)
    except Exception:  # noqa: BLE001 - ORC files carry no suffix in Hive tables
        table = orc.read_table(path)
    names = {n.lower(): n for n in table.column_names}
    if field[0].lower() not in names:
        return []
    values = table.column(names[field[0].lower()]).to_pylist()
    for part in field[1:]:
        values = [
            None if v is None else {k.lower(): x for k, x in v.items()}.get(part.lower()) for v in values
        ]
    return values


def local_directory(location: str) -> str:
    """A location (a URI: `file:/x/ds=10%253A00`) as the directory on disk."""
    from urllib.parse import unquote

    return unquote(_local(location))


def spark_skips(name: str, directory: bool) -> bool:
    """Whether Spark's listing leaves out a name under a table's or partition's location: a
    directory it does not descend into (`shouldFilterOutPathName`), a file it does not read as
    data (that rule, then `isDataPath`, which also drops `_metadata` and `_common_metadata`)."""
    if name.endswith("._COPYING_") or name.startswith("."):
        return True
    if name.startswith("_") and "=" not in name:
        return not directory or not name.startswith(("_metadata", "_common_metadata"))
    return False


def _journal_locations(warehouse: Path, databases: list[str]) -> set[str]:
    """Every old, new and staging location of every purge journal entry of a table in
    `databases`, logged or not (the journal is the warehouse's: other databases' entries are
    other tests' purges)."""
    found: set[str] = set()
    wanted = {d.lower() for d in databases}
    for intent in sorted((warehouse / "_lakehouse_journal" / "purge").glob("*/*.intent.json")):
        document = json.loads(intent.read_text(encoding="utf-8"))
        if str(document.get("database") or "").lower() not in wanted:
            continue
        found.add(str(document.get("staging_location") or ""))
        for swap in document.get("partitions", []):
            found.update((str(swap.get("old_location") or ""), str(swap.get("new_location") or "")))
    return {location for location in found if location}


def named_locations(spark: Any, databases: list[str]) -> set[str]:
    """The directories the metastore names in `databases` (every table, onboarded or not, side
    tables too, and every partition) and the purge journal names, wherever they lie."""
    catalog = spark._jsparkSession.sessionState().catalog().externalCatalog()
    convert = spark._jvm.scala.collection.JavaConverters.seqAsJavaList
    no_filter = spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq([])
    found = set()
    for database in databases:
        if not catalog.databaseExists(database):
            continue
        found.add(local_directory(str(catalog.getDatabase(database).locationUri().toString())))
        for table in convert(catalog.listTables(database)):
            meta = catalog.getTable(database, table)
            if meta.storage().locationUri().isDefined():
                found.add(local_directory(str(meta.location().toString())))
            if meta.partitionColumnNames().isEmpty():
                continue
            for part in convert(catalog.listPartitionsByFilter(database, table, no_filter, "UTC")):
                found.add(local_directory(str(part.location().toString())))
    warehouse = Path(_local(str(spark.conf.get("spark.sql.warehouse.dir"))))
    found.update(local_directory(location) for location in _journal_locations(warehouse, databases))
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
    backup_dir)."""
    warehouse = Path(_local(str(spark.conf.get("spark.sql.warehouse.dir"))))
    scanned = [warehouse / f"{d}.db" for d in databases] + [Path(r) for r in roots or []]
    scanned += [Path(location) for location in sorted(named_locations(spark, databases))]
    return scan(scanned, live_directories(spark, databases), ids, field)


def data_files(root: Path) -> list[Path]:
    """The files Spark's listing reads under `root` (recursively), by `spark_skips`; `root`'s own
    name plays no part."""
    found: list[Path] = []
    if not root.is_dir():
        return [root] if root.is_file() else []
    pending = [root]
    while pending:
        directory = pending.pop()
        for child in sorted(directory.iterdir()):
            if spark_skips(child.name, child.is_dir()):
                continue
            if child.is_dir():
                pending.append(child)
            elif child.is_file():
                found.append(child)
    return sorted(found)


def scan(
    scanned: list[Path], live: set[str], ids: set[Any], field: list[str] | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """ids_in_files over the locations `scanned`, `live` the directories readers read.  A file
    reached from several locations is counted once."""
    field = field or ["guestid"]
    found_live: dict[str, int] = {}
    found_copies: dict[str, int] = {}
    seen: set[str] = set()
    for root in scanned:
        for path in data_files(root):
            if str(path) in seen or path.stat().st_size == 0:
                continue
            seen.add(str(path))
            held = sum(1 for v in _values(path, field) if v in ids)
            if held:
                target = found_live if str(path.parent) in live else found_copies
                target[str(path)] = held
    return found_live, found_copies
