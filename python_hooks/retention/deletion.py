"""Retention's deletions: the one safe delete, metadata drops before data, and reaping backups.

A path that is, or lies inside, a location the metastore still references is never deleted (its
metadata may go, its data stays); a path that CONTAINS such locations is deleted child by child;
a path outside the roots of the table being cleaned is refused, and then the metadata is kept
too.  Metadata goes first and never deletes data (catalog.metastore.drop_table_metadata); when a
delete then fails, nothing references the files any more, so the location is handed back as an
orphan (`Deleter.orphans`) that the pass records as stale data, and a later pass deletes it.
Every attempt is logged, and a failure on one location is logged while the rest go on.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import filesystem, metastore, partitions
from python_hooks.catalog.filesystem import path_within
from python_hooks.catalog.metastore import Partition, Table
from python_hooks.catalog.side_tables import registration
from python_hooks.errors import LakehouseError, error_message
from python_hooks.retention.attempts import AttemptLog
from python_hooks.retention.protection import Protection


def _reason(exc: Exception) -> str:
    return error_message(exc)[:1000]


class _Reaper:
    """Reaping: a backup partition moved out of its table's directory to backup_dir, and
    repointed.  Mixed into Deleter (its attributes are Deleter's)."""

    def reap(self, table: Table, ts: int, part: Partition, home: str, roots: list[str]) -> None:
        """Move an old backup partition out of the table's directory into backup_dir, and repoint it."""
        source = filesystem.qualify(self.spark, part.location)
        if path_within(source, home):
            return  # already reaped
        if any(
            p.stale and (path_within(source, p.location) or path_within(p.location, source))
            for p in self.protection.entries
        ):
            return  # a stale record not yet due promises the data where it is: reaped once it is due
        destination = f"{home}/{ts}/{partitions.spec_path(part.pairs)}"
        others = [p for p in self.protection.entries if p.owner != (table.database, table.name, part.spec)]
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
                if filesystem.renames_atomically(self.spark, source) and filesystem.renames_atomically(
                    self.spark, destination
                ):
                    filesystem.move(self.spark, source, destination)
                    metastore.set_partition_location(
                        self.spark, table.database, table.name, part.pairs, destination
                    )
                else:
                    self.reap_by_copy(table, part, source, destination)
                for p in self.protection.entries:
                    if p.owner == (table.database, table.name, part.spec):
                        p.location = destination
        except Exception as exc:  # noqa: BLE001
            self.log.add(
                "backup", "reap", table.database, table.name, part.spec, source, failure=_reason(exc)
            )
            return
        self.log.add(
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

    def reap_by_copy(self, table: Table, part: Partition, source: str, destination: str) -> None:
        """Reap on an object store, where a directory rename copies and deletes object by object: a
        failure or a kill midway would leave the backup partition's metadata pointing at a source
        already partly deleted.  Copy (checked), repoint, then delete the source: at every moment
        the metadata points at a whole copy.  A destination left by an interrupted copy is
        referenced by nothing (the metadata still points at the source) and is copied again; a
        source whose delete fails after the repoint is handed back as an orphan (recorded as stale
        data, deleted by a later pass)."""
        target = filesystem.qualify(self.spark, destination)
        if filesystem.exists(self.spark, target):
            if self.protection.blocker(target) is not None or any(
                path_within(p.location, target) for p in self.protection.entries
            ):
                raise LakehouseError(f"refused: {target} exists and is referenced")
            filesystem.delete(self.spark, target)
        filesystem.copy(self.spark, source, target)
        metastore.set_partition_location(self.spark, table.database, table.name, part.pairs, destination)
        try:
            filesystem.delete(self.spark, source)
        except Exception as exc:  # noqa: BLE001 - the data is safe at its new place; the old copy is recorded
            self.orphans.append(
                {
                    "database": table.database,
                    "table": (registration(table) or (table.name,))[0],
                    "partition_spec": part.spec,
                    "location": source,
                    "reason": f"retention: reaped by a copy, whose source could not be deleted ({_reason(exc)[:300]})",
                }
            )


class Deleter(_Reaper):
    """Deletes, drops and reaps for one retention pass, logging each attempt."""

    def __init__(
        self, spark: Any, dry_run: bool, log: AttemptLog, protection: Protection, scratch_root: str
    ) -> None:
        self.spark = spark
        self.dry_run = dry_run
        self.log = log
        self.protection = protection
        self.scratch_root = scratch_root
        # locations whose metadata went but whose delete failed: recorded as stale data by the pass
        self.orphans: list[dict[str, Any]] = []

    def safe_delete(self, path: str, roots: list[str]) -> tuple[int, int, str | None]:
        """Delete `path` except what the metastore still references: (files, bytes, note)."""
        path = filesystem.qualify(self.spark, path)
        if not any(path_within(path, root) for root in roots):
            raise LakehouseError(
                f"refused: {path} is outside the roots of the table being cleaned ({', '.join(roots)})"
            )
        blocker = self.protection.blocker(path)
        if blocker is not None:
            owner = ".".join(x for x in blocker.owner[:2]) + (
                f" partition {blocker.owner[2]}" if blocker.owner[2] else ""
            )
            return 0, 0, f"data kept: still referenced by {owner} ({blocker.location})"
        if any(path_within(path, gone) for gone in self.protection.gone):
            return 0, 0, None  # a dry run already counted it
        inside = [
            p.location
            for p in self.protection.entries
            if p.location != path and path_within(p.location, path)
        ]
        inside += [gone for gone in self.protection.gone if gone != path and path_within(gone, path)]
        if not inside:
            if self.dry_run:
                self.protection.gone.append(path)
                summary = filesystem.summary(self.spark, path)
                return summary["files"], summary["bytes"], None
            gone = filesystem.delete(self.spark, path)
            return gone["files"], gone["bytes"], None
        files = size = 0
        for child in filesystem.list_dir(self.spark, path):
            f, b, _ = self.safe_delete(child["path"], roots)
            files, size = files + f, size + b
        held = len(
            [p for p in self.protection.entries if p.location != path and path_within(p.location, path)]
        )
        note = f"only this location's own files: it holds {held} referenced location(s)" if held else None
        return files, size, note

    def delete_logged(
        self,
        kind: str,
        database: str,
        table: str,
        spec: str | None,
        location: str,
        roots: list[str],
        forgotten: bool = False,
        family: str | None = None,
    ) -> bool:
        """Delete safely and log the attempt; `forgotten`: the location's metadata is already gone,
        so a failed delete leaves an orphan to record as stale data (under `family`, the live
        table whose roots the stale cleaner checks)."""
        try:
            files, size, note = self.safe_delete(location, roots)
        except Exception as exc:  # noqa: BLE001 - one failure is logged, the rest go on
            reason = _reason(exc)
            self.log.add(kind, "delete", database, table, spec, location, failure=reason)
            if forgotten and not self.dry_run:
                self.orphans.append(
                    {
                        "database": database,
                        "table": family or table,
                        "partition_spec": spec,
                        "location": filesystem.qualify(self.spark, location),
                        "reason": f"retention: the delete failed after the metadata was dropped ({reason[:300]})",
                    }
                )
            return False
        action = "keep_data" if note and note.startswith("data kept") else "delete"
        if action == "delete" and not self.dry_run:
            self.prune_empty_parents(location, roots)
        self.log.add(kind, action, database, table, spec, location, files, size, note=note)
        return True

    def prune_empty_parents(self, location: str, roots: list[str]) -> None:
        """Remove the directories a delete left empty (`<L>/<ts>` after its partitions went), up to the root."""
        path = filesystem.qualify(self.spark, location)
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            inside_root = any(path_within(path, root) and path != root for root in roots)
            if not inside_root or any(
                p.location == path or path_within(p.location, path) for p in self.protection.entries
            ):
                return
            if not filesystem.exists(self.spark, path) or filesystem.list_dir(self.spark, path):
                return
            filesystem.delete(self.spark, path)

    def refused_outside(
        self, kind: str, table: Table, spec: str | None, locations: list[str], roots: list[str]
    ) -> bool:
        """Refuse (and log) dropping a table or partition that references a location outside every
        root: checked before its metadata goes, so that a refused delete orphans nothing."""
        for location in locations:
            path = filesystem.qualify(self.spark, location)
            if not any(path_within(path, root) for root in roots):
                self.log.add(
                    kind,
                    "drop",
                    table.database,
                    table.name,
                    spec,
                    path,
                    failure=f"refused: {path} is outside the roots of the table being cleaned ({', '.join(roots)});"
                    f" the {'partition' if spec else 'table'} was kept",
                )
                return True
        return False

    def drop_table(self, kind: str, table: Table, roots: list[str]) -> None:
        """Forget a side table, then delete what it referenced (safely)."""
        # its own directory (managed, or named after it like purge's external backups) is its own to delete
        owns = bool(table.location) and (
            table.table_type == "MANAGED" or table.location.rstrip("/").rsplit("/", 1)[-1] == table.name
        )
        own_roots = roots + ([filesystem.qualify(self.spark, table.location)] if owns else [])
        # refused before anything changes: dropping the metadata first would orphan the data
        if self.refused_outside(kind, table, None, [p.location for p in table.partitions], own_roots):
            return
        try:
            if not self.dry_run:
                scratch = f"{self.scratch_root}/{table.database}.{table.name}"
                filesystem.mkdirs(self.spark, scratch)
                metastore.drop_table_metadata(self.spark, table, scratch)
        except Exception as exc:  # noqa: BLE001
            self.drop_failed(kind, table, None, table.location, f"the table's metadata: {_reason(exc)}")
            return
        self.protection.forget(table.database, table.name)
        family = (registration(table) or (table.name,))[0]
        for part in table.partitions:
            self.delete_logged(
                kind,
                table.database,
                table.name,
                part.spec,
                part.location,
                own_roots,
                forgotten=True,
                family=family,
            )
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
            untouched = self.protection.blocker(own) is None and not any(
                path_within(p.location, own) for p in self.protection.entries
            )
            if not self.dry_run and untouched:
                try:
                    filesystem.delete(self.spark, own)
                except Exception as exc:  # noqa: BLE001 - logged; an empty directory holds no data to orphan
                    self.log.add(kind, "delete", table.database, table.name, None, own, failure=_reason(exc))
            return
        self.delete_logged(
            kind, table.database, table.name, None, table.location, own_roots, forgotten=True, family=family
        )

    def drop_failed(self, kind: str, table: Table, spec: str | None, location: str | None, what: str) -> None:
        """Log a metadata drop that failed; nothing was deleted."""
        self.log.add(
            kind, "drop", table.database, table.name, spec, location, failure=f"could not drop {what}"
        )

    def drop_partition(self, kind: str, table: Table, part: Partition, roots: list[str]) -> None:
        if self.refused_outside(kind, table, part.spec, [part.location], roots):
            return
        try:
            if not self.dry_run:
                metastore.drop_partition_metadata(self.spark, table.database, table.name, part.pairs)
        except Exception as exc:  # noqa: BLE001
            self.drop_failed(
                kind, table, part.spec, part.location, f"the partition's metadata: {_reason(exc)}"
            )
            return
        self.protection.forget(table.database, table.name, part.spec)
        self.delete_logged(kind, table.database, table.name, part.spec, part.location, roots, forgotten=True)
