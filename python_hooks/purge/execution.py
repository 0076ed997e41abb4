"""Running a purge: the rendered statements, table by table (the node's third call).

For each table with partitions to rewrite, in order (Gobblin's five Hive steps, with the checks
that make them safe; table_purge.STEPS runs them, rewriting.py and committing.py are them, and
states.py says what each partition may go through next):

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
6. the swaps, the partitions' rendered ALTERs (the package's own made as one metastore call),
   then the journal's outcome; a partition that failed anywhere is undone (its backup partition
   dropped, its rewritten copy deleted), unless it failed at its swap and may have moved.

A safe point comes before each table and before a table's first swap: a cancellation stops the
run there (the table in flight is undone), never between a table's backup and its swaps.  An
error in one table becomes its FAILED row, after the rows of what it committed, and the next
table goes on.  At the end the node's relation, purge_log and the stale locations are written
and the journal's entries marked logged.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import console
from python_hooks.catalog.work import Pool
from python_hooks.errors import CancelledError, LakehouseError, first_line
from python_hooks.purge import delta, iceberg, results, table_purge
from python_hooks.purge.plan import ScannedPlan, TablePlan
from python_hooks.purge.progress import Progress
from python_hooks.purge.statements import TableStatements
from python_hooks.purge.table_run import NodeRun, TableRun
from python_hooks.purge.units import result_row


class PurgeFailures(LakehouseError):
    """Some tables or partitions failed; every other one was done and everything is recorded."""


def execute(
    spark: Any,
    plan: ScannedPlan,
    statements: dict[str, TableStatements],
    cancellation: Any,
    relation: list[str],
    delta_statements: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Run the plan; write the node's relation (`relation`: [schema, table]), purge_log and the
    stale locations; return the summary for the status line.  Raises PurgeFailures (after
    writing) when a table or partition failed, CancelledError when the run was cancelled."""
    # the pool outlives the tables: the staging tables' drops overlap the records
    with Pool(spark, 2, "lakehouse-purge") as pool:
        run = Execution(spark, plan, statements, cancellation, pool)
        rows = run.run()
        if not run.cancelled:
            rows.extend(run.run_delta(delta_statements or {}))
        results.record(spark, plan, rows, run.node.stale, relation, run.node.recorded)
        console.debug("purge step background work (joining the staging tables' drops)")
    summary = results.summarize(plan, rows)
    console.say(
        f"purge: summary: {summary['tables']} table(s); partitions {summary['committed']} committed,"
        f" {summary['dry_run']} dry-run, {summary['skipped']} skipped, {summary['failed']} failed;"
        f" {summary['rows']} row(s) {'would be ' if plan.config.dry_run else ''}removed"
        + (f"; {summary['recovered']} row(s) completed from the journal" if summary["recovered"] else "")
    )
    if run.cancelled:
        where = (
            f"{run.undone} was undone before its first swap (its partitions as they were)"
            if run.undone
            else "it stopped between two tables"
        )
        raise CancelledError(
            f"purge: cancelled ({cancellation.reason}) after {run.tables_done} of {len(plan.rewriting)} table(s) to"
            f" rewrite: {summary['committed']} partition(s) committed and recorded in purge_log; {where}."
            " Run the purge again to finish."
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


class Execution:
    """One node's run over its tables, on the node's background pool (the backups, the staging
    tables' drops), with its progress and its records."""

    def __init__(
        self,
        spark: Any,
        plan: ScannedPlan,
        statements: dict[str, TableStatements],
        cancellation: Any,
        pool: Pool,
    ) -> None:
        self.spark = spark
        self.pool = pool
        self.plan = plan
        self.statements = statements
        self.cancellation = cancellation
        self.node = NodeRun.of(spark, plan, cancellation)
        self.cancelled = False
        self.undone: str | None = None  # the table a cancellation undid, before its first swap
        self.tables_done = 0

    def run(self) -> list[dict[str, Any]]:
        plan, rows = self.plan, []
        rewriting = plan.rewriting
        for table in plan.tables:
            rows.extend(self.quiet_rows(table))
        if plan.config.dry_run or not rewriting:
            return rows
        pool = self.pool
        with Progress("purge", len(rewriting)) as progress:
            for index, table in enumerate(rewriting, start=1):
                if self.cancellation.requested:
                    self.cancelled = True
                    break
                progress.start_table(
                    index,
                    table.name,
                    f"{len(table.todo)} of {len(table.listing or table.todo)} partition(s) to rewrite",
                )
                purge = TableRun(self.node, table, self.statements[table.name], pool, progress)
                try:
                    rows.extend(table_purge.run_table(purge))
                except CancelledError:
                    rows.extend(purge.rows)
                    self.cancelled, self.undone = True, table.name
                    break
                except Exception as exc:  # noqa: BLE001 - the table's FAILED row; the next table goes on
                    rows.extend(purge.rows)
                    rows.append(table_purge.failed_table(purge, exc))
                self.tables_done += 1
                progress.table_done(
                    sum(int(r["rows_purged"] or 0) for r in purge.rows if r["state"] == "COMMITTED"),
                    sum(1 for r in purge.rows if r["state"] == "COMMITTED"),
                )
        return rows

    def run_delta(self, statements: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
        """The Delta Lake tables, after the Hive ones (delta.py): a refused one's FAILED row, an
        error in one fails that table alone, a cancellation stops before the next table."""
        rows: list[dict[str, Any]] = []
        config = self.plan.config
        for table in self.plan.delta:
            if table.error is not None:
                console.say(f"purge: {table.name}: FAILED: {table.error}")
                rows.append(result_row(config, table, None, "FAILED", reason=table.error))
                continue
            if self.cancellation.requested:
                self.cancelled = True
                break
            try:
                rows.extend(delta.run_table(self.spark, config, table, statements[table.name]))
            except Exception as exc:  # noqa: BLE001 - the table's FAILED row; the next table goes on
                reason = (
                    f"Table {table.name}: the purge stopped with an error: {first_line(exc)}; run it again"
                )
                if table.table_format == "iceberg":
                    reason = f"{iceberg.LABEL}: {reason}"
                console.say(f"purge: {table.name}: FAILED: {reason}")
                rows.append(result_row(config, table, None, "FAILED", reason=reason))
            self.tables_done += 1
        return rows

    def quiet_rows(self, table: TablePlan) -> list[dict[str, Any]]:
        """The rows of what needs no statement: a refused table's FAILED row, skipped partitions,
        and a dry run's DRY_RUN rows."""
        config = self.plan.config
        if table.error is not None:
            console.say(f"purge: {table.name}: FAILED: {table.error}")
            return [result_row(config, table, None, "FAILED", reason=table.error)]
        todo = {p.path for p in table.todo}
        found = []
        for part in table.listing or []:
            if part.path not in todo:
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
