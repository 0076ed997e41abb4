"""Running a purge: the rendered statements, table by table (the node's third call).

For each table with partitions to rewrite, in order (Gobblin's five Hive steps, with the checks
that make them safe):

1. facts: the partitions' files listed and fingerprinted, their rows read from the footers, and
   (file-level rewrite) each file sorted by its footer into "may hold an id" and "cannot";
2. the journal's intent (catalog/journal.py): a swap is never made that the journal does not know;
3. the staging table; the backup table and its partitions (pointing at the live directories),
   made on a background thread while the rewrite runs;
4. the rewrite: one insert for every partition (over a view of the files that may hold ids, the
   others copied byte for byte meanwhile), or, when it fails, one insert per partition, so that
   one bad partition fails alone;
5. the row check (rows written = rows before - rows purged), the backup, and Gobblin's commit
   check (the partition's files are still the ones fingerprinted);
6. the swaps, one rendered ALTER per partition, then the journal's outcome; a partition that
   failed anywhere is undone (its backup partition dropped, its rewritten copy deleted).

A safe point comes before each table and before a table's first swap: a cancellation stops the
run there (the table in flight is undone), never between a table's backup and its swaps.  An
error in one table becomes its FAILED row, after the rows of what it committed, and the next
table goes on.  At the end the node's relation, purge_log and the stale locations are written
and the journal's entries marked logged.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.lakehouse import filesystem

from python_hooks.catalog import commit, console, metastore
from python_hooks.catalog.file_facts import FileFacts, Listing
from python_hooks.catalog.journal import Intent, Journal, Outcome, PartitionSwap
from python_hooks.catalog.work import Pool
from python_hooks.errors import CancelledError, LakehouseError, first_line
from python_hooks.purge import results, scanning, skipping
from python_hooks.purge.plan import Partition, PurgePlan, TablePlan
from python_hooks.purge.progress import Progress
from python_hooks.purge.units import result_row


def before_commit_check(spark: Any, table: TablePlan, part: Partition) -> None:
    """A seam for tests (a concurrent writer between the rewrite and the commit check, in-process);
    production does nothing here.  The rendered `purge_before_swap_sql` statements run just
    before it."""


@dataclass
class PartitionStatements:
    rewrite: str
    add_backup: str
    drop_backup: str
    swap: str
    before_swap: list[str] = field(default_factory=list)


@dataclass
class TableStatements:
    """One table's rendered statements (macros/purge/purge_render.sql)."""

    create_staging: str
    create_backup: str
    add_backup_partitions: str
    rewrite: str
    rewrite_files: str
    drop_staging: str
    drop_backup: str
    partitions: dict[str, PartitionStatements]

    @classmethod
    def of(cls, rendered: dict[str, Any]) -> TableStatements:
        values = {
            k: (str(v).strip() if isinstance(v, str) else v) for k, v in rendered.items() if k != "partitions"
        }
        parts = {
            str(spec): PartitionStatements(
                rewrite=str(p["rewrite"]).strip(),
                add_backup=str(p["add_backup"]).strip(),
                drop_backup=str(p["drop_backup"]).strip(),
                swap=str(p["swap"]).strip(),
                before_swap=[str(s).strip() for s in p.get("before_swap") or [] if str(s).strip()],
            )
            for spec, p in rendered["partitions"].items()
        }
        return cls(**values, partitions=parts)


class PurgeFailures(LakehouseError):
    """Some tables or partitions failed; every other one was done and everything is recorded."""


def execute(
    spark: Any, plan: PurgePlan, statements: dict[str, Any], cancellation: Any, relation: list[str]
) -> dict[str, Any]:
    """Run the plan; write the node's relation (`relation`: [schema, table]), purge_log and the
    stale locations; return the summary for the status line.  Raises PurgeFailures (after
    writing) when a table or partition failed, CancelledError when the run was cancelled."""
    run = Execution(spark, plan, {k: TableStatements.of(v) for k, v in statements.items()}, cancellation)
    rows = run.run()
    record(spark, plan, rows, run.stale, relation, run.recorded)
    summary = summarize(plan, rows)
    console.say(
        f"purge: summary: {summary['tables']} table(s); partitions {summary['committed']} committed,"
        f" {summary['dry_run']} dry-run, {summary['skipped']} skipped, {summary['failed']} failed;"
        f" {summary['rows']} row(s) {'would be ' if plan.config.dry_run else ''}removed"
        + (f"; {summary['recovered']} row(s) completed from the journal" if summary["recovered"] else "")
    )
    if run.cancelled:
        raise CancelledError(
            f"purge: cancelled ({cancellation.reason}) after {run.tables_done} of {len(plan.rewriting)} table(s) to"
            f" rewrite: {summary['committed']} partition(s) committed and recorded in purge_log; the table in"
            " flight was undone. Run the purge again to finish."
        )
    failed = [r for r in rows if r["state"] == "FAILED"]
    if failed:
        lines = "\n".join(
            f"  {r['database_name']}.{r['table_name']}{' ' + r['partition_spec'] if r['partition_spec'] else ''}: {r['reason']}"
            for r in failed
        )
        raise PurgeFailures(
            f"The purge failed for {len(failed)} table(s)/partition(s); every other one was done:\n{lines}\n"
            "Fix the cause and run `dbt run --select purge+` again: committed partitions hold no ids and are skipped."
        )
    return summary


def record(
    spark: Any,
    plan: PurgePlan,
    rows: list[dict[str, Any]],
    stale: list[dict[str, Any]],
    relation: list[str],
    recorded: list[Intent],
) -> None:
    """The node's relation, purge_log (this run's rows), the stale locations, and the journal's
    entries whose outcome was recorded marked logged (any other is completed by the next run)."""
    config = plan.config
    results.replace_results(spark, relation[0], relation[1], plan.recovered + rows)
    results.append_log(spark, config.log_schema, rows)
    try:
        results.record_stale(spark, config.target_schema, config.invocation_id, stale)
    except Exception as exc:  # noqa: BLE001 - the purge is done; the failure is the node's
        raise LakehouseError(
            f"Could not record the old locations of {', '.join(sorted({r['database_name'] + '.' + r['table_name'] for r in stale}))}"
            f" in {config.target_schema}.stale_data_records: {first_line(exc)}. Their partitions were purged, but retention"
            " will not delete their old directories (the old_location of their COMMITTED rows in purge_log) until they"
            " are recorded: fix the cause, then record them with `dbt run-operation record_stale_location`."
        ) from exc
    journal = Journal(spark)
    for intent in recorded:
        journal.mark_logged(intent)


def summarize(plan: PurgePlan, rows: list[dict[str, Any]]) -> dict[str, Any]:
    states = [r["state"] for r in rows]
    return {
        "tables": len({(r["database_name"], r["table_name"]) for r in rows}),
        "committed": states.count("COMMITTED"),
        "skipped": states.count("SKIPPED"),
        "failed": states.count("FAILED"),
        "dry_run": states.count("DRY_RUN"),
        "rows": sum(int(r["rows_purged"] or 0) for r in rows if r["state"] in ("COMMITTED", "DRY_RUN")),
        "recovered": len(plan.recovered),
    }


def _intent(plan: PurgePlan, table: TablePlan) -> Intent:
    config = plan.config
    return Intent(
        invocation_id=config.invocation_id,
        purge_ts=config.run_ts,
        database=table.database,
        table=table.table,
        identifier_field=table.identifier.field if table.identifier else "",
        staging_table=table.staging,
        staging_location=table.staging_location,
        backup_table=f"{table.database}.{table.backup}",
        partitions=[
            PartitionSwap(p.spec, p.values, p.location, p.new_location, p.rows_before, p.rows_purged)
            for p in table.todo
        ],
    )


class Execution:
    """One node's run over its tables: owns the background pool, the progress and the records."""

    def __init__(
        self, spark: Any, plan: PurgePlan, statements: dict[str, TableStatements], cancellation: Any
    ) -> None:
        self.spark = spark
        self.plan = plan
        self.statements = statements
        self.cancellation = cancellation
        self.journal = Journal(spark)
        self.facts = FileFacts(spark)
        self.stale: list[dict[str, Any]] = []
        self.recorded: list[Intent] = []  # the journal entries whose outcome is written
        self.cancelled = False
        self.tables_done = 0

    def run(self) -> list[dict[str, Any]]:
        plan, rows = self.plan, []
        rewriting = plan.rewriting
        for table in plan.tables:
            rows.extend(self.quiet_rows(table))
        if plan.config.dry_run or not rewriting:
            return rows
        with Progress("purge", len(rewriting)) as progress, Pool(self.spark, 2, "lakehouse-purge") as pool:
            for index, table in enumerate(rewriting, start=1):
                if self.cancellation.requested:
                    self.cancelled = True
                    break
                progress.start_table(
                    index,
                    table.name,
                    f"{len(table.todo)} of {len(table.listing or table.todo)} partition(s) to rewrite",
                )
                purge = TablePurge(self, table, self.statements[table.name], pool, progress)
                try:
                    rows.extend(purge.run())
                except CancelledError:
                    rows.extend(purge.rows)
                    self.cancelled = True
                    break
                except Exception as exc:  # noqa: BLE001 - the table's FAILED row; the next table goes on
                    rows.extend(purge.rows)
                    rows.append(purge.failed_table(exc))
                self.tables_done += 1
                progress.table_done(
                    sum(int(r["rows_purged"] or 0) for r in purge.rows if r["state"] == "COMMITTED"),
                    sum(1 for r in purge.rows if r["state"] == "COMMITTED"),
                )
        return rows

    def quiet_rows(self, table: TablePlan) -> list[dict[str, Any]]:
        """The rows of what needs no statement: a refused table's FAILED row, skipped partitions,
        and a dry run's DRY_RUN rows."""
        config = self.plan.config
        if table.error is not None:
            console.say(f"purge: {table.name}: FAILED: {table.error}")
            return [result_row(config, table, None, "FAILED", reason=table.error)]
        todo = {p.spec for p in table.todo}
        found = []
        for part in table.listing or []:
            if part.spec not in todo:
                found.append(
                    result_row(
                        config,
                        table,
                        part,
                        "SKIPPED",
                        reason="no listed id in this partition",
                        new_location=part.location,
                        rows_purged=0,
                    )
                )
        console.say(
            f"purge: {table.name} ({table.identifier.field if table.identifier else '?'}): "
            f"{len(table.listing or [])} partition(s), {len(table.todo)} to rewrite{' (dry run)' if config.dry_run else ''}"
        )
        if config.dry_run:
            for part in table.todo:
                before = part.rows_before
                console.say(
                    f"purge: {table.name} {part.label}: DRY_RUN, would remove {part.rows_purged} of {before} rows"
                )
                found.append(
                    result_row(
                        config,
                        table,
                        part,
                        "DRY_RUN",
                        reason=f"would remove {part.rows_purged} of {before} rows",
                        rows_after=None if before is None else before - part.rows_purged,
                    )
                )
        return found


class TablePurge:
    """One table's purge (the module doc's steps 1-6)."""

    def __init__(
        self, run: Execution, table: TablePlan, sql: TableStatements, pool: Pool, progress: Progress
    ) -> None:
        self.run_ = run
        self.spark = run.spark
        self.config = run.plan.config
        self.table = table
        self.sql = sql
        self.pool = pool
        self.progress = progress
        self.rows: list[dict[str, Any]] = []
        self.failed: dict[str, str] = {}
        self.backed_up: set[str] = set()
        self.swapped: list[str] = []
        self.fingerprints: dict[str, str] = {}
        self.file_level: dict[str, tuple[list[str], list[str]]] | None = None
        self.intent: Intent | None = None

    # ---- the steps -------------------------------------------------------------------------
    def run(self) -> list[dict[str, Any]]:
        try:
            self.take_facts()
            self.intent = _intent(self.run_.plan, self.table)
            console.debug(f"purge step journal intent ({self.table.name})")
            self.run_.journal.record_intent(self.intent)
            self.execute(self.sql.create_staging, "create staging")
            backup = self.pool.submit(self.make_backup)
            self.rewrite()
            self.check_rows()
            self.wait_backup(backup)
            self.run_.cancellation.check(f"{self.table.name} was undone before its swap")
            self.check_commit()
            self.swap()
        except BaseException as exc:
            self.abort(exc)
            raise
        self.finish()
        return self.rows

    def execute(self, sql: str, step: str) -> list[Any]:
        console.debug(f"purge step {step} ({self.table.name}):\n{sql}")
        return [list(row) for row in self.spark.sql(sql).collect()]

    def pending(self) -> list[Partition]:
        return [p for p in self.table.todo if p.spec not in self.failed]

    def fail(self, part: Partition, reason: str) -> None:
        self.failed.setdefault(part.spec, reason)

    def take_facts(self) -> None:
        """The partitions' files before anything is written: fingerprint, rows, file-level split."""
        table = self.table
        self.progress.set_step("reading the partitions' files")
        self.spark.catalog.refreshTable(metastore.table_name(table.database, table.table))
        exclude = None if table.partitioned else table.staging_location
        listings = self.run_.facts.list(
            [p.location for p in table.todo], recursive=not table.partitioned, exclude=exclude
        )
        bounds = skipping.bounds_for(self.run_.plan, table)
        usable = {p.location: listings[p.location] for p in table.todo if listings[p.location].error is None}
        split = None
        if (
            bounds is not None
            and self.config.file_level
            and table.partitioned
            and not table.bucketed
            and all(not item.subdirectories for item in usable.values())
        ):
            split = skipping.split(self.run_.facts, table, usable, bounds)
        for part in table.todo:
            listing = listings[part.location]
            if listing.error is not None:
                self.fail(
                    part,
                    f"could not list the files of {part.location}: {listing.error}; nothing was written, the next run tries again",
                )
                continue
            self.fingerprints[part.spec] = listing.fingerprint()
            part.rows_before = (
                split[0][part.location]
                if split
                else scanning.count_rows(
                    self.spark,
                    self.run_.facts,
                    (table.database, table.table),
                    table.storage_format,
                    part.values,
                    listing,
                )
            )
        if split is not None:
            rows, rewrite, copy = split
            if all(rewrite[p.location] for p in self.pending()) and any(
                copy[p.location] for p in self.pending()
            ):
                self.file_level = {p.spec: (rewrite[p.location], copy[p.location]) for p in self.pending()}

    def make_backup(self) -> None:
        """The backup table, then every partition's backup (pointing at its live directory)."""
        self.execute(self.sql.create_backup, "create backup")
        if self.table.partitioned and self.sql.add_backup_partitions:
            try:
                self.execute(self.sql.add_backup_partitions, "backup partitions")
                self.backed_up.update(p.spec for p in self.table.todo)
            except Exception as exc:  # noqa: BLE001 - each partition adds its own backup below
                console.debug(
                    f"purge: {self.table.name}: adding the backup partitions together failed: {first_line(exc)}"
                )

    def rewrite(self) -> None:
        """Every pending partition into the staging table: together, else one by one."""
        table, pending = self.table, self.pending()
        self.progress.set_step(f"rewriting {len(pending)} partition(s)")
        for part in pending:
            if table.partitioned:
                filesystem.mkdirs(self.spark, part.new_location)
        copying: Future | None = None
        statement = self.sql.rewrite
        if self.file_level is not None:
            scanning.make_view(
                self.spark,
                table,
                table.candidate_view,
                {s: files for s, (files, _) in self.file_level.items()},
            )
            copies = [(path, p.new_location) for p in pending for path in self.file_level[p.spec][1]]
            copying = self.pool.submit(self.run_.facts.copy, copies)
            statement = self.sql.rewrite_files
        try:
            self.execute_staging_write(statement, "rewrite partitions")
            errors = copying.result() if copying is not None else []
            if errors:
                raise LakehouseError(f"copying the files without listed ids failed: {errors[0]}")
            if self.file_level is not None:
                copied = sum(len(c) for _, c in self.file_level.values())
                rewritten = sum(len(r) for r, _ in self.file_level.values())
                console.say(
                    f"purge: {table.name}: file-level rewrite: {rewritten} file(s) that may hold listed ids rewritten,"
                    f" {copied} whose footers rule them out copied unchanged"
                )
        except Exception as exc:  # noqa: BLE001 - one statement per partition instead
            if copying is not None:
                copying.result()
            self.run_.cancellation.check(f"{table.name} was undone before its swap")
            console.say(
                f"purge: {table.name}: rewriting {len(pending)} partition(s) together failed, one by one: {first_line(exc)}"
            )
            self.rewrite_one_by_one(pending)
        finally:
            if self.file_level is not None:
                self.spark.catalog.dropTempView(table.candidate_view)

    def execute_staging_write(self, statement: str, step: str) -> None:
        """A write into the staging table, committed without renames on an object store; what
        it cost the store is reported there (S3A's own counters)."""
        location = self.table.location
        before = commit.store_statistics(self.spark, location)
        with commit.staging_commit(self.spark, location) as committer:
            self.execute(statement, step)
        if before:
            cost = commit.describe_cost(before, commit.store_statistics(self.spark, location))
            console.say(f"purge: {self.table.name}: {step}: {committer} committer; object store: {cost}")

    def rewrite_one_by_one(self, pending: list[Partition]) -> None:
        for part in pending:
            if self.table.partitioned:
                filesystem.delete(self.spark, part.new_location)
            try:
                self.execute_staging_write(self.sql.partitions[part.spec].rewrite, f"rewrite {part.label}")
            except Exception as exc:  # noqa: BLE001 - this partition's FAILED row
                self.run_.cancellation.check(f"{self.table.name} was undone before its swap")
                self.fail(part, f"the rewrite into {self.table.staging} failed: {first_line(exc)}")

    def check_rows(self) -> None:
        """Rows written = rows before - rows purged, from the rewrite's footers (Gobblin's row check)."""
        pending = self.pending()
        listings = self.run_.facts.list(
            [p.new_location for p in pending], recursive=not self.table.partitioned
        )
        for part in pending:
            listing = listings[part.new_location]
            after = self._rows_written(part, listing)
            expected = part.rows_before - part.rows_purged if part.rows_before is not None else None
            if after is None or after != expected:
                self.fail(
                    part,
                    f"the rewrite holds {after} rows, expected {expected} ({part.rows_before} minus {part.rows_purged}):"
                    " the partition changed during the purge; not swapped, the next run purges it again",
                )
            elif after == 0 and self.table.partitioned:
                filesystem.mkdirs(
                    self.spark, part.new_location
                )  # every row purged: it must not point at nothing

    def _rows_written(self, part: Partition, listing: Listing) -> int | None:
        if not listing.exists:
            return 0
        try:
            return scanning.count_rows(
                self.spark,
                self.run_.facts,
                (self.table.database, self.table.staging),
                self.table.storage_format,
                part.values,
                listing,
            )
        except Exception as exc:  # noqa: BLE001 - unknown rows fail the row check
            console.debug(
                f"purge: {self.table.name} {part.label}: could not count the rewrite: {first_line(exc)}"
            )
            return None

    def wait_backup(self, backup: Future) -> None:
        """The backup made in the background; without it nothing may be swapped."""
        try:
            backup.result()
        except Exception as exc:  # noqa: BLE001 - every partition fails, the table is undone
            reason = f"could not create {self.table.backup}: {first_line(exc)}"
            for part in self.pending():
                self.fail(part, reason)
            return
        for part in self.pending():
            if self.table.partitioned and part.spec not in self.backed_up:
                try:
                    self.execute(self.sql.partitions[part.spec].add_backup, f"backup partition {part.label}")
                    self.backed_up.add(part.spec)
                except Exception as exc:  # noqa: BLE001 - this partition's FAILED row
                    self.fail(
                        part, f"could not add the backup partition to {self.table.backup}: {first_line(exc)}"
                    )

    def check_commit(self) -> None:
        """Gobblin's commit check: the files the rewrite read are still the partition's files."""
        console.debug(f"purge step commit check ({self.table.name})")
        for part in self.pending():
            for sql in self.sql.partitions[part.spec].before_swap:
                self.execute(sql, f"before swap {part.label}")
            before_commit_check(self.spark, self.table, part)
        pending = self.pending()
        exclude = None if self.table.partitioned else self.table.staging_location
        listings = self.run_.facts.list(
            [p.location for p in pending], recursive=not self.table.partitioned, exclude=exclude
        )
        for part in pending:
            if (
                listings[part.location].error is not None
                or listings[part.location].fingerprint() != self.fingerprints[part.spec]
            ):
                self.fail(
                    part,
                    "the files of the partition changed between the start of the rewrite and the swap (a concurrent"
                    " write?): not swapped, the next run purges it again",
                )

    def swap(self) -> None:
        """Every checked partition to its rewrite: one rendered ALTER each, never interrupted."""
        self.progress.set_step(f"swapping {len(self.pending())} partition(s)")
        for part in self.pending():
            try:
                self.execute(self.sql.partitions[part.spec].swap, f"swap {part.label}")
            except Exception as exc:  # noqa: BLE001 - this partition's FAILED row, unless it did move
                if self._location_now(part) != part.new_location:
                    self.fail(part, f"the location swap failed: {first_line(exc)}")
                    continue
            self.swapped.append(part.spec)

    def _location_now(self, part: Partition) -> str | None:
        if not self.table.partitioned:
            table = metastore.get_table(
                self.spark, self.table.database, self.table.table, with_partitions=False
            )
            return table.location if table else None
        from python_hooks.catalog import tables

        return tables.partition_location(self.spark, self.table.database, self.table.table, part.values)

    # ---- the end: outcome, undo, rows ----------------------------------------------------------
    def finish(self) -> None:
        """The rows of every partition, the journal's outcome, then what failed undone."""
        self.rows.extend(self.final_rows())
        self.record_outcome()
        try:
            self.undo([p for p in self.table.todo if p.spec in self.failed], whole=not self.swapped)
        except Exception as exc:  # noqa: BLE001 - cleanup only: retention removes what is left
            console.debug(f"purge: {self.table.name}: undo failed: {first_line(exc)}")
        if self.swapped:
            self.pool.submit(self.forget_staging)

    def final_rows(self) -> list[dict[str, Any]]:
        table, rows = self.table, []
        for part in table.todo:
            if part.spec in self.failed:
                console.say(f"purge: {table.name} {part.label}: FAILED: {self.failed[part.spec]}")
                rows.append(result_row(self.config, table, part, "FAILED", reason=self.failed[part.spec]))
                continue
            after = part.rows_before - part.rows_purged
            console.say(
                f"purge: {table.name} {part.label}: COMMITTED, removed {part.rows_purged} of {part.rows_before} rows,"
                f" now at {part.new_location}"
            )
            rows.append(
                result_row(
                    self.config,
                    table,
                    part,
                    "COMMITTED",
                    new_location=part.new_location,
                    backup_table=f"{table.database}.{table.backup}",
                    rows_after=after,
                )
            )
            self.run_.stale.append(
                {
                    "database_name": table.database,
                    "table_name": table.table,
                    "partition_spec": part.spec or None,
                    "location": part.location,
                    "reason": "purge",
                }
            )
        return rows

    def record_outcome(self) -> None:
        if self.intent is not None:
            console.debug(f"purge step journal outcome ({self.table.name})")
            self.run_.journal.record_outcome(
                self.intent, Outcome(swapped=list(self.swapped), failed=dict(self.failed))
            )
            self.run_.recorded.append(self.intent)

    def forget_staging(self) -> None:
        """Step 5: the staging table dropped, metadata only (its directories are live now)."""
        staging = metastore.get_table(
            self.spark, self.table.database, self.table.staging, with_partitions=False
        )
        if staging is None:
            return
        if staging.table_type != "EXTERNAL":
            console.warn(
                f"purge: {self.table.database}.{self.table.staging} is not an external table: not dropped, or its"
                " files (now live) would go; drop it by hand once its partitions are no longer referenced"
            )
            return
        self.execute(self.sql.drop_staging, "drop staging")

    def undo(self, parts: list[Partition], whole: bool) -> None:
        """Remove what the purge made for partitions it did not swap: their backup partitions (they
        would point at live data), their rewritten copies; with `whole`, the staging table too."""
        for part in parts:
            if part.spec in self.backed_up:
                self._quietly(
                    self.sql.partitions[part.spec].drop_backup, f"undo backup partition {part.label}"
                )
            if part.new_location != part.location:
                filesystem.delete(self.spark, part.new_location)
        if whole:
            # nothing of the table went live: the staging table and the backup go (both external:
            # the unpartitioned backup is the live location, whose files stay)
            self._quietly(self.sql.drop_staging, "undo staging table")
            self._quietly(self.sql.drop_backup, "undo backup table")
            if self.table.partitioned:
                filesystem.delete(self.spark, self.table.staging_location)
                if not filesystem.list_dir(self.spark, self.table.backup_location, recursive=True):
                    filesystem.delete(self.spark, self.table.backup_location)

    def _quietly(self, sql: str, step: str) -> None:
        try:
            self.execute(sql, step)
        except Exception as exc:  # noqa: BLE001 - cleanup only: retention removes what is left
            console.debug(f"purge: {self.table.name}: {step} failed: {first_line(exc)}")

    def abort(self, exc: BaseException) -> None:
        """The table stopped early (an error or a cancellation): what was not swapped is undone,
        the outcome recorded, and the rows of what it did kept for the caller."""
        cancelled = isinstance(exc, CancelledError)
        reason = (
            f"cancelled ({self.run_.cancellation.reason}) before its swap: left as it was, the next run purges it"
            if cancelled
            else None
        )
        for part in self.table.todo:
            if part.spec not in self.swapped:
                self.fail(
                    part, reason or f"not swapped: the table's purge stopped with an error: {first_line(exc)}"
                )
        try:
            self.finish()
        except Exception as cleanup:  # noqa: BLE001 - the first error is the one to report
            console.debug(
                f"purge: {self.table.name}: cleaning up after an error failed: {first_line(cleanup)}"
            )
        if not cancelled:
            # the caller adds the table's FAILED row; the partitions are in it
            self.rows = [r for r in self.rows if r["state"] == "COMMITTED"]

    def failed_table(self, exc: BaseException) -> dict[str, Any]:
        swapped = ", ".join(self.swapped)
        reason = f"Table {self.table.name}: the purge stopped with an error: {first_line(exc)}" + (
            f"; its partitions {swapped} were swapped before it (COMMITTED rows)"
            if swapped
            else "; it was left as it was"
        )
        console.say(f"purge: {reason}")
        return result_row(self.config, self.table, None, "FAILED", reason=reason)


Callback = Callable[..., Any]
