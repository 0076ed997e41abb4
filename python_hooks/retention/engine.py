"""Retention: delete what is past its policy, never what is live.

Called once per run from the `retention` model's pre-hook (macros/retention/run_retention.sql),
with the per-table policies already resolved from vars and the policy seed.  It plans and runs
the seven operations of the retention issue, and registers one row per deletion attempt as a
temporary view that the model materializes (and appends to `retention_log`).

Safety does not depend on the policy being right:
- before any delete, every location referenced by a table or partition still in the metastore is
  protected: a path that is, or lies inside, a protected location is never deleted (its metadata
  may go, its data stays); a path that CONTAINS protected locations is deleted child by child,
  skipping whatever holds them (the backup of an unpartitioned table holds the live `<L>/<ts>`);
- a path outside the roots of the table being cleaned is refused (logged as a failure);
- metadata goes first and never deletes data (see `metastore.drop_table_metadata`).
Files are listed, moved and deleted through the adapter's filesystem functions (the same Hadoop
FileSystem code as `adapter.fs_list` / `fs_move` / `fs_delete`), so this works on HDFS and
object stores.  A failure on one location is logged and the rest go on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dbt.adapters.lakehouse import filesystem
from dbt.adapters.lakehouse.filesystem import path_within

from python_hooks.catalog import metastore
from python_hooks.catalog.metastore import Partition, Table
from python_hooks.catalog.side_tables import now_ms, side_table
from python_hooks.errors import LakehouseError, error_message

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
TS_SUFFIX = re.compile(r"/\d{10,}$")

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


def strip_ts(location: str) -> str:
    """The table's root: its location without the `/<ts>` levels a purge of an unpartitioned table adds."""
    while TS_SUFFIX.search(location):
        location = TS_SUFFIX.sub("", location)
    return location


def java_date_format(fmt: str) -> str:
    """`yyyy-MM-dd-HH` (the Java pattern users write in policies) as a strptime format."""
    for java, python in (
        ("yyyy", "%Y"),
        ("MM", "%m"),
        ("dd", "%d"),
        ("HH", "%H"),
        ("mm", "%M"),
        ("ss", "%S"),
    ):
        fmt = fmt.replace(java, python)
    return fmt


def partition_time_ms(value: str, fmt: str) -> int | None:
    """Epoch ms of a date partition value, or None when it does not parse (such partitions are kept)."""
    try:
        parsed = datetime.strptime(value, java_date_format(fmt))
    except (TypeError, ValueError):
        return None
    return int(parsed.replace(tzinfo=timezone.utc).timestamp() * 1000)


@dataclass
class Protected:
    location: str
    owner: tuple[str, str, str | None]  # (database, table, partition spec or None for the table)
    covers_inside: bool  # False for a partitioned table's own directory: its data is in its partitions


class Retention:
    def __init__(
        self,
        spark: Any,
        invocation_id: str,
        now_ms: int,
        dry_run: bool,
        policies: dict[str, dict[str, Any]],
        defaults: dict[str, Any],
    ) -> None:
        self.spark = spark
        self.invocation_id = invocation_id
        self.now_ms = now_ms
        self.dry_run = dry_run
        self.policies = {k.lower(): v for k, v in policies.items()}
        self.defaults = defaults
        self.attempts: list[dict[str, Any]] = []
        self.tables = metastore.all_tables(spark)
        self.protected: list[Protected] = []
        self.gone: list[str] = []  # what a dry run would have deleted, so that it is counted once
        for table in self.tables:
            self._protect(table)
        self.scratch_root = filesystem.qualify(spark, spark.conf.get("spark.sql.warehouse.dir")) + (
            f"/.retention_scratch/{invocation_id}"
        )

    # ---- bookkeeping -----------------------------------------------------------------------
    def _protect(self, table: Table) -> None:
        if table.location:
            self.protected.append(
                Protected(
                    filesystem.qualify(self.spark, table.location),
                    (table.database, table.name, None),
                    not table.is_partitioned,
                )
            )
        for part in table.partitions:
            self.protected.append(
                Protected(
                    filesystem.qualify(self.spark, part.location),
                    (table.database, table.name, part.spec),
                    True,
                )
            )

    def _forget(self, database: str, table: str, spec: str | None = None) -> None:
        """Stop protecting what a dropped table (spec None) or partition referenced."""
        self.protected = [
            p
            for p in self.protected
            if not (p.owner[0] == database and p.owner[1] == table and (spec is None or p.owner[2] == spec))
        ]

    def policy(self, database: str, table: str) -> dict[str, Any] | None:
        """The table's resolved policy; None when the table is out of `retention_scope` (left alone)."""
        return self.policies.get(f"{database}.{table}".lower())

    def log(
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
        self.attempts.append(
            {
                "attempt_id": f"{self.invocation_id}-{len(self.attempts) + 1:05d}",
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

    # ---- the one delete ----------------------------------------------------------------------
    def _blocker(self, path: str) -> Protected | None:
        for p in self.protected:
            if path == p.location or (p.covers_inside and path_within(path, p.location)):
                return p
        return None

    def safe_delete(self, path: str, roots: list[str]) -> tuple[int, int, str | None]:
        """Delete `path` except what the metastore still references: (files, bytes, note)."""
        path = filesystem.qualify(self.spark, path)
        if not any(path_within(path, root) for root in roots):
            raise LakehouseError(
                f"refused: {path} is outside the roots of the table being cleaned ({', '.join(roots)})"
            )
        blocker = self._blocker(path)
        if blocker is not None:
            owner = ".".join(x for x in blocker.owner[:2]) + (
                f" partition {blocker.owner[2]}" if blocker.owner[2] else ""
            )
            return 0, 0, f"data kept: still referenced by {owner} ({blocker.location})"
        if any(path_within(path, gone) for gone in self.gone):
            return 0, 0, None  # a dry run already counted it
        inside = [p.location for p in self.protected if p.location != path and path_within(p.location, path)]
        inside += [gone for gone in self.gone if gone != path and path_within(gone, path)]
        if not inside:
            if self.dry_run:
                self.gone.append(path)
                summary = filesystem.summary(self.spark, path)
                return summary["files"], summary["bytes"], None
            gone = filesystem.delete(self.spark, path)
            return gone["files"], gone["bytes"], None
        files = size = 0
        for child in filesystem.list_dir(self.spark, path):
            f, b, _ = self.safe_delete(child["path"], roots)
            files, size = files + f, size + b
        held = len([p for p in self.protected if p.location != path and path_within(p.location, path)])
        note = f"only this location's own files: it holds {held} referenced location(s)" if held else None
        return files, size, note

    def _delete_logged(
        self, kind: str, database: str, table: str, spec: str | None, location: str, roots: list[str]
    ) -> bool:
        try:
            files, size, note = self.safe_delete(location, roots)
        except Exception as exc:  # noqa: BLE001 - one failure is logged, the rest go on
            self.log(kind, "delete", database, table, spec, location, failure=_reason(exc))
            return False
        action = "keep_data" if note and note.startswith("data kept") else "delete"
        if action == "delete" and not self.dry_run:
            self._prune_empty_parents(location, roots)
        self.log(kind, action, database, table, spec, location, files, size, note=note)
        return True

    def _prune_empty_parents(self, location: str, roots: list[str]) -> None:
        """Remove the directories a delete left empty (`<L>/<ts>` after its partitions went), up to the root."""
        path = filesystem.qualify(self.spark, location)
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            inside_root = any(path_within(path, root) and path != root for root in roots)
            if not inside_root or any(
                p.location == path or path_within(p.location, path) for p in self.protected
            ):
                return
            if not filesystem.exists(self.spark, path) or filesystem.list_dir(self.spark, path):
                return
            filesystem.delete(self.spark, path)

    # ---- dropping tables and partitions -------------------------------------------------------
    def drop_table(self, kind: str, table: Table, roots: list[str]) -> None:
        """Forget a side table, then delete what it referenced (safely)."""
        try:
            if not self.dry_run:
                scratch = f"{self.scratch_root}/{table.database}.{table.name}"
                filesystem.mkdirs(self.spark, scratch)
                metastore.drop_table_metadata(self.spark, table, scratch)
        except Exception as exc:  # noqa: BLE001
            self._drop_failed(kind, table, None, table.location, f"the table's metadata: {_reason(exc)}")
            return
        self._forget(table.database, table.name)
        # its own directory (managed, or named after it like purge's external backups) is its own to delete
        owns = bool(table.location) and (
            table.table_type == "MANAGED" or table.location.rstrip("/").rsplit("/", 1)[-1] == table.name
        )
        own_roots = roots + ([filesystem.qualify(self.spark, table.location)] if owns else [])
        for part in table.partitions:
            self._delete_logged(kind, table.database, table.name, part.spec, part.location, own_roots)
        if not table.location or not filesystem.exists(self.spark, table.location):
            return
        if (
            table.is_partitioned
            and owns
            and not any(
                not e["is_dir"] for e in filesystem.list_dir(self.spark, table.location, recursive=True)
            )
        ):
            # the empty directory of a `create table like` backup: not worth a log row
            own = filesystem.qualify(self.spark, table.location)
            untouched = self._blocker(own) is None and not any(
                path_within(p.location, own) for p in self.protected
            )
            if not self.dry_run and untouched:
                filesystem.delete(self.spark, own)
            return
        self._delete_logged(kind, table.database, table.name, None, table.location, own_roots)

    def _drop_failed(
        self, kind: str, table: Table, spec: str | None, location: str | None, what: str
    ) -> None:
        """Log a metadata drop that failed; nothing was deleted."""
        self.log(kind, "drop", table.database, table.name, spec, location, failure=f"could not drop {what}")

    def drop_partition(self, kind: str, table: Table, part: Partition, roots: list[str]) -> None:
        try:
            if not self.dry_run:
                metastore.drop_partition_metadata(self.spark, table.database, table.name, part.pairs)
        except Exception as exc:  # noqa: BLE001
            self._drop_failed(
                kind, table, part.spec, part.location, f"the partition's metadata: {_reason(exc)}"
            )
            return
        self._forget(table.database, table.name, part.spec)
        self._delete_logged(kind, table.database, table.name, part.spec, part.location, roots)

    # ---- the operations -----------------------------------------------------------------------
    def families(self) -> dict[tuple[str, str], dict[str, list[tuple[int, Table]]]]:
        grouped: dict[tuple[str, str], dict[str, list[tuple[int, Table]]]] = {}
        for table in self.tables:
            side = side_table(table.name)
            if side is None:
                continue
            base, kind, ts = side
            grouped.setdefault((table.database, base), {"backup": [], "staging": [], "trash": []})[
                kind
            ].append((ts, table))
        for kinds in grouped.values():
            for members in kinds.values():
                members.sort(key=lambda m: m[0])
        return grouped

    def roots(self, database: str, base: str, policy: dict[str, Any]) -> list[str]:
        live = next((t for t in self.tables if t.database == database and t.name == base), None)
        if live is not None and live.location:
            roots = [strip_ts(filesystem.qualify(self.spark, live.location))]
        else:
            db_location = (
                self.spark._jsparkSession.sessionState().catalog().getDatabaseMetadata(database).locationUri()
            )
            roots = [filesystem.qualify(self.spark, str(db_location.toString())) + f"/{base}"]
        if policy.get("backup_dir"):
            roots.append(self.backup_home(policy, database, base))
        return roots

    def backup_home(self, policy: dict[str, Any], database: str, base: str) -> str:
        return filesystem.qualify(self.spark, str(policy["backup_dir"]).rstrip("/")) + f"/{database}/{base}"

    def run_side_tables(self) -> None:
        for (database, base), kinds in sorted(self.families().items()):
            policy = self.policy(database, base)
            if policy is None:
                continue
            roots = self.roots(database, base, policy)
            staging_limit = self.now_ms - float(policy["staging_retention_hours"]) * HOUR_MS
            for ts, table in kinds["staging"]:
                if ts < staging_limit:
                    self.drop_table("staging", table, roots)
            trash_limit = self.now_ms - float(policy["trash_retention_days"]) * DAY_MS
            for ts, table in kinds["trash"]:
                if ts < trash_limit:
                    self.drop_table("trash", table, roots)
            self.run_backups(database, base, kinds["backup"], policy, roots)

    def run_backups(
        self,
        database: str,
        base: str,
        backups: list[tuple[int, Table]],
        policy: dict[str, Any],
        roots: list[str],
    ) -> None:
        days_limit = self.now_ms - float(policy["backup_retention_days"]) * DAY_MS
        versions = int(policy["backup_retention_versions"])
        # newest first per partition ('' for an unpartitioned table)
        by_partition: dict[str, list[int]] = {}
        for ts, table in backups:
            keys = [p.spec for p in table.partitions] if table.is_partitioned else [""]
            for key in keys:
                by_partition.setdefault(key, []).append(ts)
        expired: set[tuple[int, str]] = set()
        for key, stamps in by_partition.items():
            for rank, ts in enumerate(sorted(stamps, reverse=True)):
                if rank >= versions or ts < days_limit:
                    expired.add((ts, key))
        reap_days = policy.get("backup_reap_days")
        reap_limit = (
            (self.now_ms - float(reap_days) * DAY_MS)
            if reap_days not in (None, "") and policy.get("backup_dir")
            else None
        )
        for ts, table in backups:  # oldest first: an older backup may hold a newer one's directory
            keys = [p.spec for p in table.partitions] if table.is_partitioned else [""]
            gone = [k for k in keys if (ts, k) in expired]
            if gone and len(gone) == len(keys):
                self.drop_table("backup", table, roots)
                continue
            for part in table.partitions:
                if (ts, part.spec) in expired:
                    self.drop_partition("backup", table, part, roots)
                elif reap_limit is not None and ts < reap_limit:
                    self.reap(table, ts, part, policy, roots)

    def reap(self, table: Table, ts: int, part: Partition, policy: dict[str, Any], roots: list[str]) -> None:
        """Move an old backup partition out of the table's directory into backup_dir, and repoint it."""
        source = filesystem.qualify(self.spark, part.location)
        home = self.backup_home(policy, table.database, side_table(table.name)[0])
        if path_within(source, home):
            return  # already reaped
        destination = f"{home}/{ts}/{_partition_path(part.pairs)}"
        others = [p for p in self.protected if p.owner != (table.database, table.name, part.spec)]
        try:
            if not any(path_within(source, root) for root in roots[:1]):
                raise LakehouseError(f"refused: {source} is outside the table's directory {roots[0]}")
            shared = [
                p
                for p in others
                if p.location == source
                or path_within(p.location, source)
                or (p.covers_inside and path_within(source, p.location))
            ]
            if shared:
                raise LakehouseError(
                    f"refused: {source} is also referenced by {shared[0].owner[0]}.{shared[0].owner[1]}"
                )
            summary = filesystem.summary(self.spark, source)
            if not self.dry_run:
                filesystem.move(self.spark, source, destination)
                metastore.set_partition_location(
                    self.spark, table.database, table.name, part.pairs, destination
                )
                for p in self.protected:
                    if p.owner == (table.database, table.name, part.spec):
                        p.location = destination
        except Exception as exc:  # noqa: BLE001
            self.log("backup", "reap", table.database, table.name, part.spec, source, failure=_reason(exc))
            return
        self.log(
            "backup",
            "reap",
            table.database,
            table.name,
            part.spec,
            source,
            summary["files"],
            summary["bytes"],
            note=f"moved to {destination}",
        )

    def run_partitions(self) -> None:
        """Date-partition retention and historical snapshots, on the live tables whose policy asks."""
        for table in self.tables:
            if side_table(table.name) is not None or not table.is_partitioned:
                continue
            policy = self.policy(table.database, table.name)
            if policy is None:
                continue
            roots = [strip_ts(filesystem.qualify(self.spark, table.location))]
            column, days = policy.get("partition_column"), policy.get("partition_retention_days")
            if column and days not in (None, "") and column in table.partition_columns:
                limit = self.now_ms - float(days) * DAY_MS
                fmt = policy.get("partition_date_format") or "yyyy-MM-dd"
                by_mtime = str(policy.get("partition_age") or "value") == "modified"
                for part in list(table.partitions):
                    if by_mtime:
                        entries = filesystem.list_dir(self.spark, part.location, recursive=True)
                        age = max((e["modification_time"] for e in entries), default=None)
                    else:
                        age = partition_time_ms(dict(part.pairs)[column], fmt)
                    if age is not None and age < limit:
                        self.drop_partition("partition", table, part, roots)
                        table.partitions.remove(part)
            column, count = policy.get("snapshot_column"), policy.get("snapshot_retention_count")
            if column and count not in (None, "") and column in table.partition_columns:
                days_present = sorted({dict(p.pairs)[column] for p in table.partitions}, reverse=True)
                keep = set(days_present[: int(count)])
                for part in list(table.partitions):
                    if dict(part.pairs)[column] not in keep:
                        self.drop_partition("snapshot", table, part, roots)
                        table.partitions.remove(part)

    def run_stale(self, stale_database: str, stale_table: str) -> None:
        if not metastore.table_exists(self.spark, stale_database, stale_table):
            return
        relation = metastore.read_table(self.spark, stale_database, stale_table)
        records = relation.collect()
        done: set[int] = set()
        for index, record in enumerate(records):
            policy = self.policy(record.database_name or "", record.table_name or "")
            if policy is None:
                continue
            recorded = record.recorded_at
            recorded_ms = (
                int(recorded.timestamp() * 1000) if recorded else 0
            )  # naive local time, as PySpark returns it
            if recorded_ms >= self.now_ms - float(policy["stale_retention_days"]) * DAY_MS:
                continue
            location = filesystem.qualify(self.spark, record.location)
            if self._blocker(location) is not None:
                continue  # still referenced (by a backup, a trash table or the live table): not stale yet
            roots = self.roots(record.database_name, record.table_name, policy)
            if self._delete_logged(
                "stale", record.database_name, record.table_name, record.partition_spec, location, roots
            ):
                done.add(index)
        if done and not self.dry_run:
            kept = [r for i, r in enumerate(records) if i not in done]
            frame = self.spark.createDataFrame(kept, relation.schema)
            metastore.overwrite_table(frame, stale_database, stale_table)

    def attempts_frame(self) -> Any:
        schema = ", ".join(f"{name} {kind}" for name, kind in ATTEMPT_COLUMNS)
        rows = [tuple(a[name] for name, _ in ATTEMPT_COLUMNS) for a in self.attempts]
        return self.spark.createDataFrame(rows, schema)


def _partition_path(pairs: list[tuple[str, str]]) -> str:
    from dbt.adapters.lakehouse import partitions

    return partitions.spec_path(pairs)


def _reason(exc: Exception) -> str:
    return error_message(exc)[:1000]


def base_tables(spark: Any, stale_relation: list[str] | None = None) -> list[list[str]]:
    """[[database, table], ...] retention may act on: live tables, bases of side tables, tables with stale records."""
    found: set[tuple[str, str]] = set()
    if stale_relation and metastore.table_exists(spark, stale_relation[0], stale_relation[1]):
        for record in metastore.read_table(spark, stale_relation[0], stale_relation[1]).collect():
            if record.database_name and record.table_name:
                found.add((record.database_name, record.table_name))
    for database in metastore.databases(spark):
        for name in metastore.table_names(spark, database):
            side = side_table(name)
            found.add((database, side[0] if side else name))
    return [list(pair) for pair in sorted(found)]


def run_retention(
    spark: Any,
    invocation_id: str,
    policies: dict[str, dict[str, Any]],
    defaults: dict[str, Any],
    dry_run: bool = False,
    now: Any = None,
    stale_relation: list[str] | None = None,
    view_name: str = "retention_attempts",
) -> dict[str, Any]:
    """Run every retention operation; register the attempts as temp view `view_name`; return totals."""
    dry = str(dry_run).strip().lower() in ("true", "1", "yes")
    retention = Retention(spark, invocation_id, now_ms(now), dry, policies or {}, defaults)
    retention.run_side_tables()
    retention.run_partitions()
    if stale_relation:
        retention.run_stale(stale_relation[0], stale_relation[1])
    if not retention.dry_run:
        filesystem.delete(spark, retention.scratch_root)
    retention.attempts_frame().createOrReplaceTempView(view_name)
    attempts = retention.attempts
    return {
        "dry_run": retention.dry_run,
        "attempts": len(attempts),
        "failed": sum(1 for a in attempts if not a["succeeded"]),
        "files": sum(a["files_deleted"] for a in attempts if a["action"] == "delete"),
        "bytes": sum(a["bytes_deleted"] for a in attempts if a["action"] == "delete"),
    }
