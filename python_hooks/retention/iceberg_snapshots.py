"""Retention of an Apache Iceberg table's older snapshots: `expire_snapshots`, then the removal of
its orphan files, past the table's `backup_retention_days`.

An Iceberg table's older snapshots are its backups: after a purge they still reference the files
that held the purged rows, readable by time travel, until `expire_snapshots` removes the snapshots
and deletes the files no retained snapshot references (data files, delete files, manifests and
manifest lists).  Each Iceberg table in `retention_scope` gets, through Iceberg's catalog:

- `expire_snapshots` of the snapshots committed before the horizon (now minus
  backup_retention_days), keeping the current one (`retain_last => 1`); one `retention_log` row
  of kind `iceberg_snapshot` with the files and bytes deleted (nothing when nothing was due);
- the removal of orphan files older than the horizon (files under the table's location that no
  snapshot references: a failed or stopped write's), Iceberg's own action; one row of kind
  `iceberg_orphan` when it deleted any.

A branch or a tag other than `main` pins its snapshots, which `expire_snapshots` then keeps: each
is reported in a row of action `report` (nothing deleted), never silently kept or dropped.

A horizon under 24 hours can delete the files of a write still in progress: it needs the run's
`retention_allow_short` (as a policy under `retention_min_hours` does anyway), and the row's note
says so.  A dry run computes nothing it would delete: it logs the snapshots due and the refs.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem
from python_hooks.errors import first_line

KIND = "iceberg_snapshot"
ORPHANS = "iceberg_orphan"
CATALOG = "iceberg"
SHORT_HOURS = 24  # Iceberg's own floor for orphan removal by its procedure


def _sizes(spark: Any, location: str) -> dict[str, int]:
    """{qualified path: bytes} of every file under the table's location (data and metadata)."""
    return {
        filesystem.qualify(spark, str(status.getPath().toString())): int(status.getLen())
        for status in data_files.data_files(spark, location)
    }


def expire(
    spark: Any,
    log: Any,
    database: str,
    table: str,
    days: Any,
    now_ms: int,
    dry_run: bool,
    allow_short: bool,
) -> None:
    """Expire one Iceberg table's snapshots older than `days` (its backup_retention_days) and
    remove its orphan files past the same horizon, logged in `log`."""
    name = f"`{CATALOG}`.`{database}`.`{table}`"
    hours = float(str(days).strip()) * 24
    horizon = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc) - timedelta(hours=hours)
    horizon_text = horizon.strftime("%Y-%m-%d %H:%M:%S.%f")
    location = None
    try:
        loaded = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, f"{CATALOG}.{database}.{table}"
        )
        location = filesystem.qualify(spark, str(loaded.location()))
        _report_refs(spark, log, database, table, name, location)
        due = spark.sql(
            f"select count(*) from {name}.snapshots where committed_at < timestamp '{horizon_text}+00:00'"
            f" and snapshot_id != coalesce((select snapshot_id from {name}.refs where name = 'main'), -1)"
        ).collect()[0][0]
        if hours < SHORT_HOURS and not allow_short:
            if due:
                log.add(
                    KIND,
                    "delete",
                    database,
                    table,
                    None,
                    location,
                    failure=(
                        f"a horizon of {hours:g} hours (backup_retention_days {days}) for {database}.{table} is under"
                        f" {SHORT_HOURS} hours, which can delete the files of an Iceberg write still in progress:"
                        " raise backup_retention_days, or set retention_allow_short: true"
                    ),
                )
            return
        if dry_run:
            if due:
                log.add(
                    KIND,
                    "delete",
                    database,
                    table,
                    None,
                    location,
                    note=f"{due} snapshot(s) older than {horizon_text} UTC would expire",
                )
            return
        before = _sizes(spark, location)
        spark.sql(
            f"call `{CATALOG}`.system.expire_snapshots(table => '{database}.{table}',"
            f" older_than => timestamp '{horizon_text}+00:00', retain_last => 1)"
        ).collect()
        expired = _sizes(spark, location)
        gone = [p for p in before if p not in expired]
        if gone:
            log.add(
                KIND,
                "delete",
                database,
                table,
                None,
                location,
                len(gone),
                sum(before[p] for p in gone),
                note=f"expire_snapshots older than {horizon_text} UTC, retain_last 1: {due} snapshot(s)"
                + (" (under 24 hours: retention_allow_short is true)" if hours < SHORT_HOURS else ""),
            )
        action = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
        action.deleteOrphanFiles(loaded).olderThan(int(horizon.timestamp() * 1000)).execute()
        after = _sizes(spark, location)
        orphans = [p for p in expired if p not in after]
        if orphans:
            log.add(
                ORPHANS,
                "delete",
                database,
                table,
                None,
                location,
                len(orphans),
                sum(expired[p] for p in orphans),
                note=f"files no snapshot references, older than {horizon_text} UTC",
            )
    except Exception as exc:  # noqa: BLE001 - logged; the other tables go on
        log.add(KIND, "delete", database, table, None, location, failure=first_line(exc))


def _report_refs(spark: Any, log: Any, database: str, table: str, name: str, location: str) -> None:
    """One `report` row per branch or tag other than `main`: the snapshot it pins stays."""
    for ref in spark.sql(
        f"select name, type, snapshot_id from {name}.refs where name != 'main' order by name"
    ).collect():
        log.add(
            KIND,
            "report",
            database,
            table,
            None,
            location,
            note=(
                f"{str(ref.type).lower()} {ref.name} pins snapshot {ref.snapshot_id}: expire_snapshots keeps it and"
                f" its files; drop the {str(ref.type).lower()} (alter table iceberg.{database}.{table} drop"
                f" {str(ref.type).lower()} `{ref.name}`) to let them go"
            ),
        )
