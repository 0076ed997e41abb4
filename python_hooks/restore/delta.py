"""Restore of a Delta Lake table: the whole table back to one of its versions, by Delta's own
`RESTORE TABLE ... TO VERSION AS OF` (the `restore` macro runs it, macros/restore/restore.sql).

A Delta table has no backups: its older versions are its copies, until `VACUUM` deletes their
files.  So a restore names a version, never a partition or a backup, and every check runs before
the table changes: the version exists, it is not the current one, and every data file it reads is
still there (a version whose files retention has vacuumed cannot come back).
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import filesystem
from python_hooks.errors import ConfigError, NotFoundError, RefusedError

# the versions a message lists, newest first
SHOWN = 8


def history(spark: Any, qualified: str) -> list[tuple[int, str, str]]:
    """(version, timestamp, operation) of every version in the table's log, newest first."""
    rows = spark.sql(f"describe history {qualified}").select("version", "timestamp", "operation").collect()
    return [(int(r.version), str(r.timestamp)[:19], str(r.operation)) for r in rows]


def _listed(versions: list[tuple[int, str, str]]) -> str:
    shown = ", ".join(f"{v} ({operation}, {at})" for v, at, operation in versions[:SHOWN])
    return shown + (f" and {len(versions) - SHOWN} older" if len(versions) > SHOWN else "")


def _version_number(value: Any, qualified: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0 or str(value).strip().lstrip("+") != str(number):
        raise ConfigError(
            f"restore of {qualified}: `version` must be a version number (0, 1, ...), not {value!r}."
        )
    return number


def missing_files(spark: Any, location: str, version: int) -> list[str]:
    """The data files `version` of the Delta table at `location` reads that are no longer there
    (one listing of the table's directory, then a check of each file it does not show)."""
    wanted = [
        str(p) for p in spark.read.format("delta").option("versionAsOf", version).load(location).inputFiles()
    ]
    present = {entry["path"] for entry in filesystem.list_dir(spark, location, recursive=True)}
    return [path for path in wanted if path not in present and not filesystem.exists(spark, path)]


def plan_delta_restore(spark: Any, database: str, name: str, location: str, version: Any) -> dict[str, Any]:
    """What the restore of a Delta table will do, or a LakehouseError that changes nothing."""
    qualified = f"{database}.{name}"
    versions = history(spark, qualified)
    current = versions[0][0]
    if version is None or str(version).strip() == "":
        raise ConfigError(
            f"restore of {qualified} (Delta Lake) needs `version`: its versions are {_listed(versions)}."
            " The version before a purge is the one before its MERGE (purge_log's reason names both)."
            " Nothing was changed."
        )
    number = _version_number(version, qualified)
    known = {v for v, _, _ in versions}
    if number not in known:
        raise NotFoundError(
            f"Cannot restore {qualified} to version {number}: the table has no such version in its log; its"
            f" versions are {_listed(versions)}. Nothing was changed."
        )
    if number == current:
        raise RefusedError(
            f"Cannot restore {qualified} to version {number}: it is the current version already."
        )
    missing = missing_files(spark, location, number)
    if missing:
        raise RefusedError(
            f"Cannot restore {qualified} to version {number}: {len(missing)} of the data files it reads are gone"
            f" (VACUUM deleted them: retention removes versions older than backup_retention_days), for example"
            f" {missing[0]}. A restore cannot bring them back; choose a newer version. Nothing was changed."
        )
    return {
        "format": "delta",
        "database": database,
        "table": name,
        "location": location,
        "version_before": current,
        "version": number,
        "partition_spec": "",
        "backup_table": f"{qualified}@v{number}",
    }
