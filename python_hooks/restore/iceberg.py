"""Restore of an Apache Iceberg table: the whole table back to one of its snapshots, by Iceberg's
own `rollback_to_snapshot` (the `restore` macro runs it, macros/restore/restore.sql).

An Iceberg table has no backups: its older snapshots are its copies, until `expire_snapshots`
removes them.  So a restore names a snapshot (`version`), never a partition or a backup, and every
check runs before the table changes: the snapshot is one of the table's, it is not the current
one, and every data file it reads is still there.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import filesystem
from python_hooks.catalog.iceberg import CATALOG, current_snapshot
from python_hooks.catalog.iceberg import qualified as iceberg_name
from python_hooks.errors import ConfigError, NotFoundError, RefusedError

SHOWN = 8  # the snapshots a message lists, newest first


def snapshots(spark: Any, qualified: str) -> list[tuple[int, str, str]]:
    """(snapshot id, commit time, operation) of every snapshot the table keeps, newest first."""
    rows = spark.sql(
        f"select snapshot_id, committed_at, operation from {qualified}.snapshots order by committed_at desc"
    ).collect()
    return [(int(r.snapshot_id), str(r.committed_at)[:19], str(r.operation)) for r in rows]


def _listed(found: list[tuple[int, str, str]]) -> str:
    shown = ", ".join(f"{s} ({operation}, {at})" for s, at, operation in found[:SHOWN])
    return shown + (f" and {len(found) - SHOWN} older" if len(found) > SHOWN else "")


def plan_iceberg_restore(spark: Any, database: str, name: str, version: Any) -> dict[str, Any]:
    """What the restore of an Iceberg table will do, or a LakehouseError that changes nothing."""
    table = f"{database}.{name}"
    qualified = iceberg_name(database, name)
    found = snapshots(spark, qualified)
    current_id = current_snapshot(spark, database, name)
    if version is None or str(version).strip() == "":
        raise ConfigError(
            f"restore of {table} (Apache Iceberg) needs `version`, a snapshot id: its snapshots are"
            f" {_listed(found)}. The snapshot before a purge is the first one purge_log's reason names."
            " Nothing was changed."
        )
    try:
        number = int(str(version).strip())
    except ValueError:
        raise ConfigError(
            f"restore of {table}: `version` must be one of its snapshot ids, not {version!r}. Nothing was changed."
        ) from None
    if number not in {s for s, _, _ in found}:
        raise NotFoundError(
            f"Cannot restore {table} to snapshot {number}: the table keeps no such snapshot (expire_snapshots"
            f" removes those older than backup_retention_days); its snapshots are {_listed(found)}. Nothing was changed."
        )
    if number == current_id:
        raise RefusedError(
            f"Cannot restore {table} to snapshot {number}: it is the current snapshot already."
        )
    wanted = [
        str(r.file_path)
        for r in spark.sql(f"select file_path from {qualified}.files version as of {number}").collect()
    ]
    missing = [path for path in wanted if not filesystem.exists(spark, path)]
    if missing:
        raise RefusedError(
            f"Cannot restore {table} to snapshot {number}: {len(missing)} of the files it reads are gone, for"
            f" example {missing[0]}. A restore cannot bring them back; choose a newer snapshot. Nothing was changed."
        )
    return {
        "format": "iceberg",
        "catalog": CATALOG,
        "database": database,
        "table": name,
        "location": "",
        "version_before": current_id,
        "version": number,
        "partition_spec": "",
        "backup_table": f"{table}@{number}",
    }
