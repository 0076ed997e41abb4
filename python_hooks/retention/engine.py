"""Retention: delete what is past its policy, never what is live.

Called once per run from the `retention` model's pre-hook (macros/retention/run_retention.sql),
with the per-table policies already resolved from vars and the policy seed.  It plans and runs
the seven operations of the retention issue, and registers one row per deletion attempt as a
temporary view that the model materializes (and appends to `retention_log`).

Safety does not depend on the policy being right:
- before any delete, every location referenced by a table or partition still in the metastore is
  protected (listed at the pass's first delete, drop or reap; a pass with nothing due lists none): a path that is, or lies inside, a protected location is never deleted (its metadata
  may go, its data stays); a path that CONTAINS protected locations is deleted child by child,
  skipping whatever holds them (the backup of an unpartitioned table purged before the
  `__purge_<ts>` layout holds the live `<L>/_purge_<ts>`);
- a path outside the roots of the table being cleaned is refused (logged as a failure);
- metadata goes first and never deletes data (see `metastore.drop_table_metadata`).
Files are listed, moved and deleted through the adapter's filesystem functions (the same Hadoop
FileSystem code as `adapter.fs_list` / `fs_move` / `fs_delete`), so this works on HDFS and
object stores.  A failure on one location is logged and the rest go on.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import console, filesystem, layout, metastore
from python_hooks.catalog.clock import retention_clock
from python_hooks.catalog.filesystem import path_within
from python_hooks.catalog.metastore import Table
from python_hooks.catalog.side_tables import looks_like_side_table, registration, side_table
from python_hooks.errors import ConfigError
from python_hooks.retention import delta_versions, iceberg_snapshots
from python_hooks.retention.attempts import AttemptLog, report
from python_hooks.retention.deletion import Deleter
from python_hooks.retention.policy import DAY_MS, HOUR_MS, partition_time_ms
from python_hooks.retention.progress import Progress
from python_hooks.retention.protection import Protected, Protection


class _Layout:
    """A retention pass's view of the warehouse: the side tables' families, each table's roots,
    the leftovers beside them.  Mixed into Retention (its attributes are Retention's)."""

    def families(self) -> dict[tuple[str, str], dict[str, list[tuple[int, Table]]]]:
        grouped: dict[tuple[str, str], dict[str, list[tuple[int, Table]]]] = {}
        for table in self.tables:
            side = registration(table)
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
            roots = [layout.table_root(filesystem.qualify(self.spark, live.location))]
            roots += self.version_roots(roots[0])
        else:
            roots = [self.database_location(database) + f"/{base}"]
        if policy.get("backup_dir"):
            roots.append(self.backup_home(policy, database, base))
        return roots

    def version_roots(self, live_root: str) -> list[str]:
        """The other directories of a table beside its root (python_hooks/catalog/layout.py).

        A purge of an unpartitioned table writes `<dir>/<name>__purge_<ts>` and a `dbt snapshot`
        `<dir>/<name>__v<ts>`, each then swapped in; the directories they replaced (`<dir>/<name>`,
        earlier `__purge_`/`__v` ones) are backups or recorded stale data of the same table, and a
        killed purge's staging directory is one too: all are within its roots.
        """
        found = layout.family(live_root)
        if found is None:
            return []
        parent, sibling = found
        return [
            filesystem.qualify(self.spark, entry["path"])
            for entry in filesystem.list_dir(self.spark, parent)
            if entry["is_dir"] and sibling.fullmatch(entry["name"]) and entry["path"].rstrip("/") != live_root
        ]

    def sweep_leftovers(self) -> None:
        """What a killed pass or purge can leave that nothing references or records, and that
        holds no data: the scratch directories of earlier passes (one run per warehouse, so
        they are dead), and empty `<table>_<kind>_<ts>` directories of side tables that no longer
        exist, in the databases in scope.  Directories only; a file anywhere keeps them."""
        if self.dry_run:
            return
        parent = self.scratch_root.rsplit("/", 1)[0]
        for entry in filesystem.list_dir(self.spark, parent):
            if entry["is_dir"] and filesystem.qualify(self.spark, entry["path"]) != self.scratch_root:
                if not self.holds_data(entry["path"]):
                    filesystem.delete(self.spark, entry["path"])
        names = {(t.database, t.name) for t in self.tables}
        for database in sorted({t.database for t in self.tables}):
            side_names = {name for (db, name) in names if db == database}
            scoped = [b for (db, b) in self.policies_keys() if db == database]
            if not scoped:
                continue
            location = self.database_location(database)
            for entry in filesystem.list_dir(self.spark, location):
                side = side_table(entry["name"])
                if (
                    not entry["is_dir"]
                    or side is None
                    or entry["name"] in side_names
                    or side[0] not in scoped
                ):
                    continue
                path = filesystem.qualify(self.spark, entry["path"])
                if self.holds_data(path) or self.protection.blocker(path) is not None:
                    continue
                if any(path_within(p.location, path) for p in self.protection.entries):
                    continue
                filesystem.delete(self.spark, path)
                self.log.add(side[1], "delete", database, entry["name"], None, path, 0, 0,
                             note="an empty directory left by a run that was killed")  # fmt: skip

    def holds_data(self, path: str) -> bool:
        return any(not e["is_dir"] for e in filesystem.list_dir(self.spark, path, recursive=True))

    def policies_keys(self) -> list[tuple[str, str]]:
        return [tuple(k.split(".", 1)) for k in self.policies]  # type: ignore[misc]

    def database_location(self, database: str) -> str:
        uri = self.spark._jsparkSession.sessionState().catalog().getDatabaseMetadata(database).locationUri()
        return filesystem.qualify(self.spark, str(uri.toString()))

    def backup_home(self, policy: dict[str, Any], database: str, base: str) -> str:
        return filesystem.qualify(self.spark, str(policy["backup_dir"]).rstrip("/")) + f"/{database}/{base}"

    def scoped_families(
        self,
    ) -> list[tuple[tuple[str, str], dict[str, list[tuple[int, Table]]], dict[str, Any]]]:
        """The side-table families whose base table is in scope, in order, with its policy."""
        found = []
        for (database, base), kinds in sorted(self.families().items()):
            policy = self.policy(database, base)
            if policy is not None:
                found.append(((database, base), kinds, policy))
        return found

    def partition_tables(self) -> list[tuple[Table, dict[str, Any]]]:
        """The live partitioned tables whose policy asks for date-partition or snapshot retention."""
        found = []
        for table in self.tables:
            if registration(table) is not None or looks_like_side_table(table) or not table.is_partitioned:
                continue
            policy = self.policy(table.database, table.name)
            if policy is not None and (policy.get("partition_column") or policy.get("snapshot_column")):
                found.append((table, policy))
        return found

    def delta_tables(self) -> list[tuple[Table, Any]]:
        """The Delta Lake and Iceberg tables in scope whose policy keeps backups for a number of
        days, with that number."""
        found = []
        for table in self.tables:
            kept_by_format = table.format in ("delta", "iceberg")
            policy = self.policy(table.database, table.name) if kept_by_format else None
            days = None if policy is None else policy.get("backup_retention_days")
            if days is not None and str(days).strip():
                found.append((table, policy["backup_retention_days"]))
        return found

    def work_count(self) -> int:
        """The items of the pass, for its progress: side-table families, tables under a partition
        policy, Delta tables, stale data records."""
        return (
            len(self.scoped_families())
            + len(self.partition_tables())
            + len(self.delta_tables())
            + len(self.stale[3] if self.stale else [])
        )


class _StaleData:
    """Stale data (the locations purge, restore and compaction recorded): loaded, protected while
    pending, deleted once due.  Mixed into Retention (its attributes are Retention's)."""

    def load_stale(self, stale_database: str, stale_table: str) -> None:
        """Read the stale data records once for the pass (none when the table does not exist yet)."""
        if metastore.table_exists(self.spark, stale_database, stale_table):
            relation = metastore.read_table(self.spark, stale_database, stale_table)
            self.stale = (stale_database, stale_table, relation.schema, relation.collect())

    def stale_due(self, record: Any, policy: dict[str, Any]) -> bool:
        """Whether a stale record is older than its table's `stale_retention_days`."""
        # recorded_at: naive local time, as PySpark returns it
        recorded_ms = int(record.recorded_at.timestamp() * 1000) if record.recorded_at else 0
        return recorded_ms < self.now_ms - float(policy["stale_retention_days"]) * DAY_MS

    def protect_pending_stale(self) -> None:
        """A stale record not yet due keeps its location where it is until it is due (queries that
        started before the swap may still read it), whatever backup or partition expires first."""
        for record in self.stale[3] if self.stale else []:
            policy = self.policy(record.database_name or "", record.table_name or "") or self.defaults
            if record.location and not self.stale_due(record, policy):
                owner = (record.database_name, f"{record.table_name} (stale data record not yet due)", None)
                location = filesystem.qualify(self.spark, record.location)
                self.protection.add(Protected(location, owner, True, stale=True))

    def run_stale(self) -> None:
        if not self.stale:
            return
        stale_database, stale_table, schema, records = self.stale
        done: set[int] = set()
        # one location may be recorded twice (a snapshot records its new directory before writing
        # it and again once it is replaced): it is deleted once, and each of its records is done
        handled: dict[str, bool] = {}
        for index, record in enumerate(records):
            self.progress.working_on(
                f"stale data of {record.database_name}.{record.table_name} at {record.location}"
            )
            if self.run_stale_record(record, handled):
                done.add(index)
            self.progress.advance()
        if done and not self.dry_run:
            kept = [r for i, r in enumerate(records) if i not in done]
            frame = self.spark.createDataFrame(kept, schema)
            metastore.overwrite_table(frame, stale_database, stale_table)

    def run_stale_record(self, record: Any, handled: dict[str, bool]) -> bool:
        """Delete one stale record's data when it is due and nothing references it; whether the
        record is done (its location deleted or already gone)."""
        policy = self.policy(record.database_name or "", record.table_name or "")
        if policy is None or not self.stale_due(record, policy):
            return False
        location = filesystem.qualify(self.spark, record.location)
        if location in handled:
            return handled[location]
        if self.protection.blocker(location) is not None:
            return False  # still referenced (by a backup, a trash table or the live table): not stale yet
        if not filesystem.exists(self.spark, location):
            # never written (a run killed before it wrote the directory) or deleted already
            self.log.add(
                "stale",
                "delete",
                record.database_name,
                record.table_name,
                record.partition_spec,
                location,
                note="already gone: nothing to delete",
            )
            handled[location] = True
            return True
        roots = self.roots(record.database_name, record.table_name, policy)
        handled[location] = self.deleter.delete_logged(
            "stale", record.database_name, record.table_name, record.partition_spec, location, roots
        )
        return handled[location]


class Retention(_Layout, _StaleData):
    """One retention pass: finds the side tables and partitions past their policy and has the
    Deleter remove them (discovery and policy evaluation here; deletion, protection and the
    attempt log in their own modules)."""

    def __init__(
        self,
        spark: Any,
        invocation_id: str,
        now_ms: int,
        dry_run: bool,
        policies: dict[str, dict[str, Any]],
        defaults: dict[str, Any],
        allow_short: bool = False,
    ) -> None:
        self.spark = spark
        self.allow_short = allow_short  # var retention_allow_short: Delta's own check overridden
        self.invocation_id = invocation_id
        self.now_ms = now_ms
        self.dry_run = dry_run
        self.policies = {k.lower(): v for k, v in policies.items()}
        self.defaults = defaults
        self.log = AttemptLog(invocation_id, dry_run)
        # every table, with partitions only for the side tables: a live table's partitions are
        # listed when its policy needs them (run_partitions), and every location in the
        # metastore only when something is about to be deleted (Protection lists them then)
        self.tables = metastore.all_tables(spark, with_partitions=False)
        for table in self.tables:
            if registration(table) is not None:
                metastore.load_partitions(spark, table)
        self.protection = Protection(spark, lambda: metastore.all_tables(spark))
        self.scratch_root = filesystem.qualify(spark, spark.conf.get("spark.sql.warehouse.dir")) + (
            f"/.retention_scratch/{invocation_id}"
        )
        self.deleter = Deleter(spark, dry_run, self.log, self.protection, self.scratch_root)
        # (database, table, schema, records) of the stale data records, read once (load_stale)
        self.stale: tuple[str, str, Any, list[Any]] | None = None
        # told what the pass works on (run_retention opens it over the pass)
        self.progress = Progress(0, lambda line: None)

    @property
    def attempts(self) -> list[dict[str, Any]]:
        return self.log.rows

    def policy(self, database: str, table: str) -> dict[str, Any] | None:
        """The table's resolved policy; None when the table is out of `retention_scope` (left alone)."""
        return self.policies.get(f"{database}.{table}".lower())

    def run_side_tables(self) -> None:
        for (database, base), kinds, policy in self.scoped_families():
            self.progress.working_on(f"the side tables of {database}.{base}")
            self.run_family(database, base, kinds, policy)
            self.progress.advance()

    def run_family(
        self, database: str, base: str, kinds: dict[str, list[tuple[int, Table]]], policy: dict[str, Any]
    ) -> None:
        """Staging, trash and backups of one table past their policy."""
        roots = self.roots(database, base, policy)
        staging_limit = self.now_ms - float(policy["staging_retention_hours"]) * HOUR_MS
        for ts, table in kinds["staging"]:
            if ts < staging_limit:
                self.deleter.drop_table("staging", table, roots)
        trash_limit = self.now_ms - float(policy["trash_retention_days"]) * DAY_MS
        for ts, table in kinds["trash"]:
            if ts < trash_limit:
                self.deleter.drop_table("trash", table, roots)
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
            # a backup without partitions (a purge killed between creating it and adding them)
            # backs nothing up: it goes once past backup_retention_days
            empty = table.is_partitioned and not keys and ts < days_limit
            if empty or (gone and len(gone) == len(keys)):
                self.deleter.drop_table("backup", table, roots)
                continue
            for part in table.partitions:
                if (ts, part.spec) in expired:
                    self.deleter.drop_partition("backup", table, part, roots)
                elif reap_limit is not None and ts < reap_limit:
                    self.deleter.reap(
                        table,
                        ts,
                        part,
                        self.backup_home(policy, table.database, base),
                        roots,
                    )

    def run_delta_versions(self) -> None:
        """VACUUM of the Delta Lake tables in scope, expire_snapshots and the orphan files' removal
        of the Iceberg ones, past their backup_retention_days."""
        for table, days in self.delta_tables():
            self.progress.working_on(f"the older versions of {table.qualified}")
            if table.format == "iceberg":
                iceberg_snapshots.expire(
                    self.spark,
                    self.log,
                    table.database,
                    table.name,
                    days,
                    self.now_ms,
                    self.dry_run,
                    self.allow_short,
                )
                self.progress.advance()
                continue
            delta_versions.vacuum(
                self.spark,
                self.log,
                table.database,
                table.name,
                table.location,
                days,
                self.dry_run,
                self.allow_short,
            )
            self.progress.advance()

    def run_partitions(self) -> None:
        """Date-partition retention and historical snapshots, on the live tables whose policy asks."""
        for table, policy in self.partition_tables():
            self.progress.working_on(f"the partitions of {table.qualified}")
            self.run_table_partitions(table, policy)
            self.progress.advance()

    def run_table_partitions(self, table: Table, policy: dict[str, Any]) -> None:
        metastore.load_partitions(self.spark, table)
        roots = [layout.table_root(filesystem.qualify(self.spark, table.location))]
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
                    self.deleter.drop_partition("partition", table, part, roots)
                    table.partitions.remove(part)
        column, count = policy.get("snapshot_column"), policy.get("snapshot_retention_count")
        if column and count not in (None, "") and column in table.partition_columns:
            days_present = sorted({dict(p.pairs)[column] for p in table.partitions}, reverse=True)
            keep = set(days_present[: int(count)])
            for part in list(table.partitions):
                if dict(part.pairs)[column] not in keep:
                    self.deleter.drop_partition("snapshot", table, part, roots)
                    table.partitions.remove(part)


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
    progress_seconds: Any = 10,
    allow_future: Any = False,
    allow_short: Any = False,
) -> dict[str, Any]:
    """Run every retention operation; register the attempts as temp view `view_name`; return totals
    and the report of what went (or, dry, would go), per kind.

    `dry_run` arrives parsed (the macro reads retention_dry_run and purge_dry_run with
    compliance.bool_var, the one boolean parser): anything but a boolean is refused.  Progress is
    told every `progress_seconds` (var retention_progress_seconds) while the pass runs.  `now` is
    var retention_now (clock.retention_clock: refused in the future unless `allow_future`); a pass
    whose clock it overrode records that clock in its log, a row of kind `clock`, whatever it deleted."""
    if not isinstance(dry_run, bool):
        raise ConfigError(
            f"Retention: dry_run is {dry_run!r}, not a boolean: read retention_dry_run with compliance.bool_var "
            "(true or false; yes/no and 1/0 are accepted too). Nothing was deleted."
        )
    try:
        interval = float(str(progress_seconds).strip())
        if interval <= 0:
            raise ValueError
    except ValueError:
        raise ConfigError(
            f"Var retention_progress_seconds is {progress_seconds!r}: expected a number of seconds > 0 (default 10)."
            " Nothing was deleted."
        ) from None
    clock = retention_clock(now, allow_future)
    retention = Retention(
        spark, invocation_id, clock.ms, dry_run, policies or {}, defaults, allow_short is True
    )
    if clock.overridden:
        retention.log.add("clock", "override_clock", None, None, None, None, note=clock.describe())
        console.say(
            f"Retention: ages are judged at {clock.describe()} (recorded in retention_log, kind clock)"
        )
    if stale_relation:
        retention.load_stale(stale_relation[0], stale_relation[1])
    retention.protect_pending_stale()
    with Progress(retention.work_count(), console.say, interval) as progress:
        retention.progress = progress
        retention.run_side_tables()
        retention.run_partitions()
        retention.run_delta_versions()
        retention.run_stale()
        progress.working_on("leftover directories")
        retention.sweep_leftovers()
    if not retention.dry_run:
        filesystem.delete(spark, retention.scratch_root)
    retention.log.frame(spark).createOrReplaceTempView(view_name)
    attempts = [a for a in retention.attempts if a["kind"] != "clock"]
    return {
        "dry_run": retention.dry_run,
        "attempts": len(attempts),
        "failed": sum(1 for a in attempts if not a["succeeded"]),
        "files": sum(a["files_deleted"] for a in attempts if a["action"] == "delete"),
        "bytes": sum(a["bytes_deleted"] for a in attempts if a["action"] == "delete"),
        # per kind, and for a dry run every location, for the console (attempts.report)
        "report": report(attempts, retention.dry_run, invocation_id),
        # forgotten by the metastore but not deleted: the retention macro records them as stale data
        "orphans": retention.deleter.orphans,
        # whether anything was due: only then are the metastore's locations listed (Protection)
        "protected_listed": retention.protection.listed,
        "protected_locations": len(retention.protection.entries) if retention.protection.listed else None,
        # named like side tables, in scope, but not registered: left alone (see adopt_side_tables)
        "unregistered": sorted(
            t.qualified
            for t in retention.tables
            if looks_like_side_table(t) and retention.policy(t.database, side_table(t.name)[0]) is not None
        ),
    }
