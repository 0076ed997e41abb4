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

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from python_hooks.catalog import files as data_files
from python_hooks.catalog import filesystem
from python_hooks.catalog.iceberg import CATALOG, load, qualified
from python_hooks.errors import first_line

KIND = "iceberg_snapshot"
ORPHANS = "iceberg_orphan"
SHORT_HOURS = 24  # Iceberg's own floor for orphan removal by its procedure


def _sizes(spark: Any, location: str) -> dict[str, int]:
    """{qualified path: bytes} of every file under the table's location (data and metadata)."""
    return {
        filesystem.qualify(spark, str(status.getPath().toString())): int(status.getLen())
        for status in data_files.data_files(spark, location)
    }


@dataclass(frozen=True)
class Pass:
    """One table's pass: its names, where it is, and the horizon."""

    database: str
    table: str
    location: str
    hours: float
    horizon: datetime

    @property
    def name(self) -> str:
        return qualified(self.database, self.table)

    @property
    def horizon_text(self) -> str:
        return self.horizon.strftime("%Y-%m-%d %H:%M:%S.%f")


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
    hours = float(str(days).strip()) * 24
    horizon = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc) - timedelta(hours=hours)
    location = None
    try:
        loaded = load(spark, database, table)
        location = filesystem.qualify(spark, str(loaded.location()))
        this = Pass(database, table, location, hours, horizon)
        _report_refs(spark, log, database, table, this.name, location)
        due = spark.sql(
            f"select count(*) from {this.name}.snapshots where committed_at < timestamp '{this.horizon_text}+00:00'"
            f" and snapshot_id != coalesce((select snapshot_id from {this.name}.refs where name = 'main'), -1)"
        ).collect()[0][0]
        if hours < SHORT_HOURS and not allow_short:
            if due:
                log.add(KIND, "delete", database, table, None, location, failure=_too_short(this, days))
            return
        if dry_run:
            if due:
                note = f"{due} snapshot(s) older than {this.horizon_text} UTC would expire"
                log.add(KIND, "delete", database, table, None, location, note=note)
            return
        expired = _expire_snapshots(spark, log, this, due)
        _remove_orphans(spark, log, this, loaded, expired)
    except Exception as exc:  # noqa: BLE001 - logged; the other tables go on
        log.add(KIND, "delete", database, table, None, location, failure=first_line(exc))


def _too_short(this: Pass, days: Any) -> str:
    return (
        f"a horizon of {this.hours:g} hours (backup_retention_days {days}) for {this.database}.{this.table} is"
        f" under {SHORT_HOURS} hours, which can delete the files of an Iceberg write still in progress:"
        " raise backup_retention_days, or set retention_allow_short: true"
    )


def _expire_snapshots(spark: Any, log: Any, this: Pass, due: int) -> dict[str, int]:
    """expire_snapshots past the horizon, keeping the current snapshot; its row when it deleted
    files.  The files left under the table, with their sizes."""
    before = _sizes(spark, this.location)
    spark.sql(
        f"call `{CATALOG}`.system.expire_snapshots(table => '{this.database}.{this.table}',"
        f" older_than => timestamp '{this.horizon_text}+00:00', retain_last => 1)"
    ).collect()
    after = _sizes(spark, this.location)
    gone = [p for p in before if p not in after]
    if gone:
        # the ledger reads the horizon's hours (macros/erasure/copies.sql): keep the words
        note = f"expire_snapshots older than {this.hours:g} hours ({this.horizon_text} UTC), retain_last 1: {due} snapshot(s)"
        if this.hours < SHORT_HOURS:
            note += " (under 24 hours: retention_allow_short is true)"
        log.add(
            KIND, "delete", this.database, this.table, None, this.location,
            len(gone), sum(before[p] for p in gone), note=note,
        )  # fmt: skip
    return after


def _remove_orphans(spark: Any, log: Any, this: Pass, loaded: Any, before: dict[str, int]) -> None:
    """Iceberg's removal of the files no snapshot references, older than the horizon; its row when
    it deleted any."""
    action = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    action.deleteOrphanFiles(loaded).olderThan(int(this.horizon.timestamp() * 1000)).execute()
    after = _sizes(spark, this.location)
    orphans = [p for p in before if p not in after]
    if orphans:
        log.add(
            ORPHANS, "delete", this.database, this.table, None, this.location,
            len(orphans), sum(before[p] for p in orphans),
            note=f"files no snapshot references, older than {this.horizon_text} UTC",
        )  # fmt: skip


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
