"""Retention of a Delta Lake table's older versions: `VACUUM`, past the table's
`backup_retention_days`.

A Delta table's older versions are its backups: after a purge they still hold the purged rows,
readable by time travel, until `VACUUM` deletes their files (and the change data's).  Each Delta
table in `retention_scope` gets `VACUUM <table> RETAIN <backup_retention_days × 24> HOURS`, after
a `DRY RUN` of the same that lists what it will delete, and one `retention_log` row of kind
`delta_version` with the files and bytes (nothing when nothing is due).  Delta deletes only files
that no version within the horizon references, so nothing live goes.  A dry run's row counts the
files the dry run lists; a real pass's, the files a listing before the VACUUM holds and one after
it does not.

Delta refuses a horizon under the table's `delta.deletedFileRetentionDuration` (7 days unless set):
its `retentionDurationCheck`.  The product turns that check off for the one statement only when
the run allows short retentions (var `retention_allow_short`, which the policy check already asks
for under `retention_min_hours`), and says so in the row's note.  Otherwise the row is a failure
that names both remedies.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem
from python_hooks.errors import first_line

KIND = "delta_version"
CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


def _sizes(spark: Any, location: str) -> dict[str, int]:
    """{qualified path: bytes} of every file under the table's directory and its change data."""
    sizes = {}
    for root in (location, f"{location}/_change_data"):
        for status in data_files.data_files(spark, root):
            sizes[filesystem.qualify(spark, str(status.getPath().toString()))] = int(status.getLen())
    return sizes


def _vacuum(spark: Any, sql: str, override: bool) -> list[Any]:
    if not override:
        return spark.sql(sql).collect()
    before = spark.conf.get(CHECK, None)
    spark.conf.set(CHECK, "false")
    try:
        return spark.sql(sql).collect()
    finally:
        if before is None:
            spark.conf.unset(CHECK)
        else:
            spark.conf.set(CHECK, before)


def vacuum(
    spark: Any,
    log: Any,
    database: str,
    table: str,
    location: str,
    days: Any,
    dry_run: bool,
    allow_short: bool,
) -> None:
    """VACUUM one Delta table at `location` (the metastore's, which Delta's catalog keeps) past
    `days` (its backup_retention_days), logged in `log`."""
    name = f"`{database}`.`{table}`"
    hours = float(str(days).strip()) * 24
    horizon = f"retain {hours:g} hours"
    # every file a version older than this removed is gone after the VACUUM (whose own horizon,
    # taken when it runs, is later): the ledger dates a copy's deletion by it, so keep the words
    before = (datetime.now(timezone.utc) - timedelta(hours=hours)).strftime("%Y-%m-%d %H:%M:%S.%f")
    override = False
    try:
        location = filesystem.qualify(spark, location)
        try:
            due = _vacuum(spark, f"vacuum {name} {horizon} dry run", False)
        except Exception as exc:  # noqa: BLE001 - Delta's own check, or a failure logged below
            if "retentionDurationCheck" not in str(exc) or not allow_short:
                raise
            override = True
            due = _vacuum(spark, f"vacuum {name} {horizon} dry run", True)
        sizes = _sizes(spark, location)
        # the files it lists (a dry run lists the directories it would remove as well)
        paths = [p for p in (filesystem.qualify(spark, str(row[0])) for row in due) if p in sizes]
        if not paths:
            return
        if not dry_run:
            _vacuum(spark, f"vacuum {name} {horizon}", override)
            after = _sizes(spark, location)
            paths = [p for p in sizes if p not in after]
    except Exception as exc:  # noqa: BLE001 - logged; the other tables go on
        reason = first_line(exc)
        if "retentionDurationCheck" in str(exc):
            reason = (
                f"Delta refuses to VACUUM {database}.{table} with a horizon of {hours:g} hours (backup_retention_days"
                f" {days}), under the table's delta.deletedFileRetentionDuration: raise backup_retention_days,"
                " or set retention_allow_short: true to override Delta's check for this table"
            )
        log.add(KIND, "delete", database, table, None, location or None, failure=reason)
        return
    note = f"VACUUM {horizon} (files removed before {before} UTC)"
    if override:
        note += f" (Delta's retentionDurationCheck overridden: retention_allow_short is true, {CHECK}=false)"
    log.add(
        KIND,
        "delete",
        database,
        table,
        None,
        location,
        len(paths),
        sum(sizes.get(p, 0) for p in paths),
        note=note,
    )
