"""A direct scan of the files, outside the product's code: which files hold a set of ids.

Every regular file under the databases' directories (whatever its directory is called: a hidden
`_purge_<ts>` is read too) is read with pyarrow; a file is *live* when it lies directly in the
location of an onboarded table (one with a `dataset.descriptor`) or of one of its partitions, as
the metastore lists them now (Spark's own catalog, not python_hooks), a copy otherwise.  The erasure tests hold the ledger to what this finds.
"""

from __future__ import annotations

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


def ids_in_files(
    spark: Any,
    databases: list[str],
    ids: set[Any],
    field: list[str] | None = None,
    roots: list[str] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """({live file: rows holding an id}, {other file: rows}) under the databases' directories
    (and `roots`, e.g. a backup_dir)."""
    warehouse = Path(_local(str(spark.conf.get("spark.sql.warehouse.dir"))))
    scanned = [warehouse / f"{d}.db" for d in databases] + [Path(r) for r in roots or []]
    return scan(scanned, live_directories(spark, databases), ids, field)


def scan(
    scanned: list[Path], live: set[str], ids: set[Any], field: list[str] | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """ids_in_files over the directories `scanned`, `live` the directories readers read."""
    field = field or ["guestid"]
    found_live: dict[str, int] = {}
    found_copies: dict[str, int] = {}
    for root in scanned:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            hidden = any(part.startswith((".", "_")) for part in path.relative_to(root).parts)
            if not path.is_file() or hidden or path.stat().st_size == 0:
                continue  # Spark's rule: names starting with `_` or `.` are not data, at any level
            held = sum(1 for v in _values(path, field) if v in ids)
            if held:
                target = found_live if str(path.parent) in live else found_copies
                target[str(path)] = held
    return found_live, found_copies
