"""Retention's attempt log: one row per deletion attempt, the columns of `retention` and `retention_log`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from python_hooks.errors import StatementError

ATTEMPT_COLUMNS = [
    ("attempt_id", "string"),
    ("invocation_id", "string"),
    ("attempted_at", "timestamp"),
    ("kind", "string"),
    ("action", "string"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("partition_spec", "string"),
    ("location", "string"),
    ("files_deleted", "bigint"),
    ("bytes_deleted", "bigint"),
    ("succeeded", "boolean"),
    ("failure_reason", "string"),
    ("note", "string"),
    ("dry_run", "boolean"),
]


class AttemptLog:
    def __init__(self, invocation_id: str, dry_run: bool) -> None:
        self.invocation_id = invocation_id
        self.dry_run = dry_run
        self.rows: list[dict[str, Any]] = []

    def add(
        self,
        kind: str,
        action: str,
        database: str,
        table: str,
        spec: str | None,
        location: str | None,
        files: int = 0,
        size: int = 0,
        failure: str | None = None,
        note: str | None = None,
    ) -> None:
        self.rows.append(
            {
                "attempt_id": f"{self.invocation_id}-{len(self.rows) + 1:05d}",
                "invocation_id": self.invocation_id,
                "attempted_at": datetime.now(timezone.utc).replace(tzinfo=None),
                "kind": kind,
                "action": action,
                "database_name": database,
                "table_name": table,
                "partition_spec": spec,
                "location": location,
                "files_deleted": int(files),
                "bytes_deleted": int(size),
                "succeeded": failure is None,
                "failure_reason": failure,
                "note": note,
                "dry_run": self.dry_run,
            }
        )

    def frame(self, spark: Any) -> Any:
        schema = ", ".join(f"{name} {kind}" for name, kind in ATTEMPT_COLUMNS)
        rows = [tuple(a[name] for name, _ in ATTEMPT_COLUMNS) for a in self.rows]
        return spark.createDataFrame(rows, schema)


KIND_ORDER = ["staging", "trash", "backup", "partition", "snapshot", "delta_version", "stale"]


def _size(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _where(row: dict[str, Any]) -> str:
    name = f"{row['database_name']}.{row['table_name']}"
    return name + (f" partition {row['partition_spec']}" if row.get("partition_spec") else "")


def report(rows: list[dict[str, Any]], dry_run: bool, invocation_id: str, limit: int = 50) -> list[str]:
    """What a pass deleted (or, dry, would delete), per kind: totals, and for a dry run every
    location with its table, partition, files and bytes (at most `limit` per kind; the rest are
    in retention_log).  Failed attempts are not listed here: retention_log's post-hook names them."""
    done = [r for r in rows if r["succeeded"]]
    deletes = [r for r in done if r["action"] == "delete"]
    verb = "would delete" if dry_run else "deleted"
    kinds = sorted({r["kind"] for r in deletes}, key=lambda k: (KIND_ORDER + [k]).index(k))
    lines = [
        f"Retention{' (dry run)' if dry_run else ''}: {verb} {len(deletes)} location(s), "
        f"{sum(r['files_deleted'] for r in deletes)} file(s), {_size(sum(r['bytes_deleted'] for r in deletes))}"
        + (", per kind:" if deletes else "")
    ]
    more = f"select * from retention_log where invocation_id = '{invocation_id}'"
    for kind in kinds:
        of_kind = [r for r in deletes if r["kind"] == kind]
        lines.append(
            f"  {kind}: {len(of_kind)} location(s), {sum(r['files_deleted'] for r in of_kind)} file(s), "
            f"{_size(sum(r['bytes_deleted'] for r in of_kind))}"
        )
        if dry_run:
            for row in of_kind[:limit]:
                lines.append(
                    f"    {row['location']}  ({_where(row)}; {row['files_deleted']} file(s), "
                    f"{_size(row['bytes_deleted'])})"
                )
            if len(of_kind) > limit:
                lines.append(f"    ... and {len(of_kind) - limit} more: {more} and kind = '{kind}'")
    reaped = [r for r in done if r["action"] == "reap"]
    if reaped:
        lines.append(
            f"  {'would move' if dry_run else 'moved'} {len(reaped)} old backup partition(s) to backup_dir"
        )
        if dry_run:
            lines += [f"    {r['location']}  ({_where(r)}; {r['note']})" for r in reaped[:limit]]
    kept = [r for r in done if r["action"] == "keep_data"]
    if kept:
        lines.append(
            f"  {'would keep' if dry_run else 'kept'} the data of {len(kept)} expired location(s) still referenced "
            f"(its metadata {'would go' if dry_run else 'went'}): {more} and action = 'keep_data'"
        )
    return lines


def raise_failures(invocation_id: str, rows: list[dict[str, Any]], shown: int = 5) -> None:
    """The failed attempts of a pass (rows of retention_log: database_name, table_name,
    partition_spec, location, failure_reason) as one StatementError; nothing when there are none."""
    if not rows:
        return
    lines = [
        f"  {r['database_name']}.{r['table_name']}"
        + (f" partition {r['partition_spec']}" if r.get("partition_spec") else "")
        + f" at {r['location']}: {r['failure_reason']}"
        for r in rows[:shown]
    ]
    raise StatementError(
        f"Retention: {len(rows)} deletion attempt(s) failed (the others went on). Details in retention_log "
        f"where invocation_id = '{invocation_id}' and not succeeded:\n" + "\n".join(lines)
    )
