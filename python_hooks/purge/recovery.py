"""Completing purge_log from the journal: what an interrupted purge swapped, accounted for.

A purge node that was cut (Ctrl-C twice, SIGKILL, a lost driver) may have swapped partitions
whose rows never reached purge_log.  Its journal (catalog/journal.py) says, per table, what it
was about to swap and, if it got that far, what it swapped.  The next purge node, before it
plans anything, completes each open entry from the journal and the metastore:

- a partition the outcome lists as swapped, or (no outcome) whose location is now the new
  location, was swapped: it gets its COMMITTED row (the interrupted run's invocation and
  purge_log_id, so it is never logged twice) and its old location is recorded as stale data;
- a partition still at its old location was not: whatever the run left around it (the backup
  partition pointing at the live data, the rewritten copy, the staging table) is removed, and it
  gets a FAILED row saying so; the purge that is starting rewrites it again;
- a partition at neither location (changed since by something else) is left alone, FAILED with
  the locations, for a person to look at.

purge_log receives only rows it does not hold yet (by purge_log_id), then the entry is marked
logged.  The rows also go into this run's results, so the node's output shows them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from python_hooks.catalog import console, journal, metastore
from python_hooks.catalog.journal import Entry, Journal
from python_hooks.purge import results
from python_hooks.purge.plan import PurgeConfig

STALE_REASON = "purge"


def complete_from_journal(spark: Any, config: PurgeConfig) -> list[dict[str, Any]]:
    """Every open journal entry completed into purge_log; the rows written (or already there)."""
    book = Journal(spark)
    entries = book.read_entries(open_only=True)
    # this run's own entries are still being written by it (a node retried in-process)
    entries = [e for e in entries if e.intent.invocation_id != config.invocation_id]
    if not entries:
        return []
    rows: list[dict[str, Any]] = []
    stale: list[dict[str, Any]] = []
    for entry in entries:
        found, moved = _account(spark, entry, config)
        rows.extend(found)
        stale.extend(moved)
    results.append_log(spark, config.log_schema, rows, deduplicate=True)
    results.record_stale(spark, config.target_schema, config.invocation_id, stale, deduplicate=True)
    for entry in entries:
        book.mark_logged(entry.intent)
    committed = sum(1 for r in rows if r["state"] == "COMMITTED")
    console.say(
        f"purge: completed purge_log from the journal of {len(entries)} interrupted table purge(s):"
        f" {committed} partition(s) had been swapped (COMMITTED), {len(rows) - committed} had not (FAILED, undone)"
    )
    return rows


def _current_locations(spark: Any, entry: Entry) -> dict[str, str | None]:
    intent = entry.intent
    table = metastore.get_table(spark, intent.database, intent.table, with_partitions=True)
    if table is None:
        return {}
    if not table.partition_columns:
        return {"": table.location}
    from python_hooks.catalog.partitions import spec_path

    return {spec_path(p.pairs): p.location for p in table.partitions}


def _account(
    spark: Any, entry: Entry, config: PurgeConfig
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    intent, outcome = entry.intent, entry.outcome
    current = _current_locations(spark, entry)
    rows, stale, undo = [], [], []
    for swap in intent.partitions:
        now = current.get(swap.partition_spec)
        swapped = swap.partition_spec in outcome.swapped if outcome is not None else now == swap.new_location
        if swapped:
            state, reason = (
                "COMMITTED",
                f"recovered from the journal by run {config.invocation_id}: swapped by the interrupted run",
            )
            stale.append(_stale_row(intent, swap))
        elif now == swap.old_location or now is None:
            state = "FAILED"
            reason = (outcome.failed.get(swap.partition_spec) if outcome is not None else None) or (
                f"the run was interrupted before its swap; undone by run {config.invocation_id}; the next purge rewrites it"
            )
            undo.append(swap)
        else:
            state = "FAILED"
            reason = (
                f"the run was interrupted; the partition now points at {now}, neither its old location"
                f" {swap.old_location} nor the rewrite {swap.new_location}: left alone"
            )
        rows.append(_row(intent, swap, state, reason))
    if undo:
        _undo(spark, intent, undo)
    return rows, stale


def _row(intent: journal.Intent, swap: journal.PartitionSwap, state: str, reason: str) -> dict[str, Any]:
    spec = swap.partition_spec or None
    committed = state == "COMMITTED"
    rows_after = (
        swap.rows_before - swap.rows_purged
        if committed and swap.rows_before is not None and swap.rows_purged is not None
        else None
    )
    return {
        "purge_log_id": hashlib.md5(
            f"{intent.invocation_id}|{intent.database}|{intent.table}|{spec or ''}".encode()
        ).hexdigest(),
        "invocation_id": intent.invocation_id,
        "purge_ts": intent.purge_ts,
        "database_name": intent.database,
        "table_name": intent.table,
        "partition_spec": spec,
        "identifier_field": intent.identifier_field,
        "state": state,
        "reason": reason,
        "old_location": swap.old_location,
        "new_location": swap.new_location if committed else None,
        "backup_table": intent.backup_table if committed else None,
        "rows_before": swap.rows_before,
        "rows_after": rows_after,
        "rows_purged": swap.rows_purged,
        "dry_run": False,
        "started_at": intent.started_at,
        "ended_at": intent.started_at,
    }


def _stale_row(intent: journal.Intent, swap: journal.PartitionSwap) -> dict[str, Any]:
    return {
        "database_name": intent.database,
        "table_name": intent.table,
        "partition_spec": swap.partition_spec or None,
        "location": swap.old_location,
        "reason": STALE_REASON,
    }


def _undo(spark: Any, intent: journal.Intent, undo: list[journal.PartitionSwap]) -> None:
    """Remove what an interrupted table purge left around partitions it did not swap: their
    backup partitions (pointing at the live data), their rewritten copies, and the staging table
    when nothing of it went live."""
    from python_hooks.catalog import filesystem

    backup_db, _, backup_table = intent.backup_table.partition(".")
    backup = metastore.get_table(spark, backup_db, backup_table, with_partitions=True)
    for swap in undo:
        if backup is not None and swap.values:
            if any([list(p) for p in part.pairs] == swap.values for part in backup.partitions):
                metastore.drop_partition_metadata(
                    spark, backup_db, backup_table, [tuple(v) for v in swap.values]
                )
        if swap.new_location != swap.old_location:
            filesystem.delete(spark, swap.new_location)
    if len(undo) == len(intent.partitions):
        staging = metastore.get_table(spark, intent.database, intent.staging_table, with_partitions=False)
        if staging is not None and staging.table_type == "EXTERNAL":
            metastore.session_catalog(spark).dropTable(
                metastore.identifier(spark, intent.database, intent.staging_table), True, False
            )
        if backup is not None and not intent.partitions[0].values and backup.table_type == "EXTERNAL":
            # an unpartitioned table's backup is the table's live location: forget it, keep the files
            metastore.session_catalog(spark).dropTable(
                metastore.identifier(spark, backup_db, backup_table), True, False
            )
        if intent.partitions and intent.partitions[0].values:
            filesystem.delete(spark, intent.staging_location)
