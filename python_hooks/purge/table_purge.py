"""One table's purge: a fixed list of steps over its partitions, then one place that settles it.

Each step (STEPS, in order) works on the partitions in the state it takes and moves each along
states.TRANSITIONS or fails it; a partition failed anywhere goes through no later step.  Then
`finish` writes the rows and the journal's outcome from the ledger (SWAPPED is COMMITTED, every
other partition FAILED with its reason), and undoes what failed (never a partition that failed at
its swap unless the catalog has it at its old location).  An error or a cancellation in a
step stops the table: `abort` fails every partition not yet settled and finishes the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from python_hooks.catalog import console, filesystem, metastore
from python_hooks.errors import CancelledError, StatementError, first_line
from python_hooks.purge import committing, rewriting
from python_hooks.purge.plan import PartitionRewrite
from python_hooks.purge.states import State, Step
from python_hooks.purge.table_run import TableRun
from python_hooks.purge.units import result_row

# what a table's purge does, in order (docs/purge.md); each a function of the TableRun
STEPS: tuple[Callable[[TableRun], None], ...] = (
    rewriting.take_facts,  # files fingerprinted, rows counted               (PENDING, or FAILED)
    committing.write_intent,  # the journal knows every swap before it happens
    committing.create_staging,
    committing.start_backup,  # on a background thread, during the rewrite
    rewriting.rewrite,  # PENDING -> REWRITTEN
    rewriting.check_rows,  # REWRITTEN, or FAILED
    committing.wait_backup,  # REWRITTEN -> BACKED_UP
    committing.safe_point,  # a cancellation stops the table here, never after
    committing.check_commit,  # BACKED_UP -> CHECKED
    committing.swap,  # CHECKED -> SWAPPED
)


def run_table(run: TableRun) -> list[dict[str, Any]]:
    """The table's rows (COMMITTED and FAILED partitions); raises what stopped it, after `abort`."""
    try:
        for step in STEPS:
            run.ledger.step = step.__name__
            step(run)
    except BaseException as exc:
        abort(run, exc)
        raise
    finish(run)
    return run.rows


def finish(run: TableRun) -> None:
    """The rows of every partition, the journal's outcome, then what failed undone."""
    run.rows.extend(final_rows(run))
    record_outcome(run)
    swapped = bool(run.ledger.parts(State.SWAPPED))
    try:
        undo(run, run.ledger.parts(State.FAILED), whole=not swapped)
    except Exception as exc:  # noqa: BLE001 - cleanup only: retention removes what is left
        console.debug(f"purge: {run.table.name}: undo failed: {first_line(exc)}")
    if swapped:
        run.pool.submit(forget_staging, run)


def final_rows(run: TableRun) -> list[dict[str, Any]]:
    table, rows = run.table, []
    for part in table.todo:
        if run.ledger.state(part) is not State.SWAPPED:
            reason = run.ledger.reason(part)
            console.say(f"purge: {table.name} {part.label}: FAILED: {reason}")
            rows.append(result_row(run.config, table, part, "FAILED", reason=reason))
            continue
        console.say(
            f"purge: {table.name} {part.label}: COMMITTED, removed {part.rows_purged} of {part.rows_before} rows,"
            f" now at {part.new_location}"
        )
        rows.append(
            result_row(
                run.config,
                table,
                part,
                "COMMITTED",
                new_location=part.new_location,
                backup_table=f"{table.database}.{table.backup}",
                rows_after=part.rows_before - part.rows_purged,
            )
        )
        run.node.stale.append(
            {
                "database_name": table.database,
                "table_name": table.table,
                "partition_spec": part.path or None,
                "location": part.location,
                "reason": "purge",
            }
        )
    return rows


def record_outcome(run: TableRun) -> None:
    if run.intent is not None:
        console.debug(f"purge step journal outcome ({run.table.name})")
        run.node.journal.record_outcome(run.intent, run.ledger.outcome())
        run.node.recorded.append(run.intent)


def forget_staging(run: TableRun) -> None:
    """The staging table dropped, metadata only (its directories are live now)."""
    table = run.table
    console.debug(
        f"purge step drop staging ({table.name}): metadata only, one metastore call for\n{run.sql.drop_staging}"
    )
    try:
        metastore.drop_external_table(run.spark, table.database, table.staging)
    except StatementError:
        console.warn(
            f"purge: {table.database}.{table.staging} is not an external table: not dropped, or its"
            " files (now live) would go; drop it by hand once its partitions are no longer referenced"
        )


def undo(run: TableRun, parts: list[PartitionRewrite], whole: bool) -> None:
    """Remove what the purge made for partitions it did not swap: their backup partitions (they
    would point at live data), their rewritten copies; with `whole`, the staging table too.  A
    partition that failed at its swap and may be live all the same keeps all of it."""
    maybe_live = _maybe_live(run, [p for p in parts if run.ledger.entry(p).failed_from is State.CHECKED])
    for part in parts:
        if part.path in maybe_live:
            continue
        if run.ledger.entry(part).backup_partition:
            _quietly(run, run.partition_sql(part).drop_backup, f"undo backup partition {part.label}")
        if part.new_location != part.location:
            filesystem.delete(run.spark, part.new_location)
        run.ledger.move(part, Step.UNDO)
    if whole and not maybe_live:
        # nothing of the table went live: the staging table and the backup go (both external:
        # the unpartitioned backup is the live location, whose files stay)
        table = run.table
        _quietly(run, run.sql.drop_staging, "undo staging table")
        _quietly(run, run.sql.drop_backup, "undo backup table")
        if table.partitioned:
            filesystem.delete(run.spark, table.staging_location)
            if not filesystem.list_dir(run.spark, table.backup_location, recursive=True):
                filesystem.delete(run.spark, table.backup_location)


def _maybe_live(run: TableRun, at_swap: list[PartitionRewrite]) -> set[str]:
    """The paths of the partitions that failed at their swap and may have moved all the same
    (the call failed after the metastore committed it): each is undone only when the catalog has
    it at its old location, or not at all."""
    if not at_swap:
        return set()
    why = ""
    try:
        now = committing.locations_now(run, at_swap)
    except Exception as exc:  # noqa: BLE001 - not known: nothing of theirs is deleted
        now, why = {}, f"the catalog could not be asked where it is ({first_line(exc)})"
    kept = set()
    for part in at_swap:
        if part.path in now and now[part.path] in (part.location, None):
            continue
        kept.add(part.path)
        where = why if part.path not in now else f"the catalog has it at {now[part.path]}"
        console.warn(
            f"purge: {run.table.name} {part.label}: recorded FAILED at its swap, but {where}: its new"
            f" directory {part.new_location}, its backup partition and the staging table's directory"
            " are kept; the next run purges what it still holds, and retention deletes the backup"
            " when it is due"
        )
    return kept


def _quietly(run: TableRun, sql: str, step: str) -> None:
    try:
        run.execute(sql, step)
    except Exception as exc:  # noqa: BLE001 - cleanup only: retention removes what is left
        console.debug(f"purge: {run.table.name}: {step} failed: {first_line(exc)}")


def abort(run: TableRun, exc: BaseException) -> None:
    """The table stopped early (an error or a cancellation): what was not swapped is undone,
    the outcome recorded, and the rows of what it did kept for the caller."""
    cancelled = isinstance(exc, CancelledError)
    reason = (
        f"cancelled ({run.node.cancellation.reason}) before its swap: left as it was, the next run purges it"
        if cancelled
        else f"not swapped: the table's purge stopped with an error: {first_line(exc)}"
    )
    committing.join_backup(run)  # its backup partitions exist before they are undone
    for part in run.ledger.unsettled():
        run.ledger.fail(part, reason)
    try:
        finish(run)
    except Exception as cleanup:  # noqa: BLE001 - the first error is the one to report
        console.debug(f"purge: {run.table.name}: cleaning up after an error failed: {first_line(cleanup)}")
    if not cancelled:
        # the caller adds the table's FAILED row; the partitions are in it
        run.rows = [r for r in run.rows if r["state"] == "COMMITTED"]


def failed_table(run: TableRun, exc: BaseException) -> dict[str, Any]:
    swapped = ", ".join(p.path for p in run.ledger.parts(State.SWAPPED))
    reason = f"Table {run.table.name}: the purge stopped with an error: {first_line(exc)}" + (
        f"; its partitions {swapped} were swapped before it (COMMITTED rows)"
        if swapped
        else "; it was left as it was"
    )
    console.say(f"purge: {reason}")
    return result_row(run.config, run.table, None, "FAILED", reason=reason)
