"""Retention's attempt log: one row per deletion attempt, the columns of `retention` and `retention_log`."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

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
