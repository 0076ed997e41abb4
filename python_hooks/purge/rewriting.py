"""The steps of a table's purge up to its rewrite (table_purge.STEPS): PENDING -> REWRITTEN.

1. facts: the partitions' files listed and fingerprinted, their rows read from the footers, and
   (file-level rewrite) each file sorted by its footer into "may hold an id" and "cannot";
2. the rewrite: one insert for every partition (over a view of the files that may hold ids, the
   others copied byte for byte meanwhile), or, when it fails, one insert per partition, so that
   one bad partition fails alone;
3. the row check: rows written = rows before - rows purged (Gobblin's), from the rewrite's footers.
"""

from __future__ import annotations

from concurrent.futures import Future

from python_hooks.catalog import console, filesystem, metastore
from python_hooks.catalog.file_facts import Listing
from python_hooks.errors import LakehouseError, first_line
from python_hooks.purge import footers, scanning
from python_hooks.purge.plan import PartitionRewrite
from python_hooks.purge.states import State, Step
from python_hooks.purge.table_run import TableRun


def take_facts(run: TableRun) -> None:
    """The partitions' files before anything is written: fingerprint, rows, file-level split."""
    table, facts = run.table, run.node.facts
    run.progress.set_step("reading the partitions' files")
    run.spark.catalog.refreshTable(metastore.table_name(table.database, table.table))
    exclude = None if table.partitioned else table.staging_location
    listings = facts.list([p.location for p in table.todo], recursive=not table.partitioned, exclude=exclude)
    bounds = footers.bounds_for(run.node.plan.ids, table)
    usable = {p.location: listings[p.location] for p in table.todo if listings[p.location].error is None}
    split = None
    if (
        bounds is not None
        and run.config.file_level
        and table.partitioned
        and not table.bucketed
        and all(not item.subdirectories for item in usable.values())
    ):
        split = footers.split(facts, table, usable, bounds)
    for part in table.todo:
        listing = listings[part.location]
        if listing.error is not None:
            run.ledger.fail(
                part,
                f"could not list the files of {part.location}: {listing.error}; nothing was written, the next run tries again",
            )
            continue
        run.ledger.entry(part).files = list(listing.files)
        part.rows_before = split[0][part.location] if split else _rows(run, part, listing, table.table)
    if split is not None:
        _, rewrite, copy = split
        pending = run.ledger.parts(State.PENDING)
        if all(rewrite[p.location] for p in pending) and any(copy[p.location] for p in pending):
            run.file_level = {p.path: (rewrite[p.location], copy[p.location]) for p in pending}


def _rows(run: TableRun, part: PartitionRewrite, listing: Listing, table: str) -> int:
    return scanning.count_rows(
        run.spark,
        run.node.facts,
        (run.table.database, table),
        run.table.storage_format,
        part.values,
        listing,
    )


def rewrite(run: TableRun) -> None:
    """Every pending partition into the staging table: together, else one by one."""
    table, pending = run.table, run.ledger.parts(State.PENDING)
    run.progress.set_step(f"rewriting {len(pending)} partition(s)")
    for part in pending:
        if table.partitioned:
            filesystem.mkdirs(run.spark, part.new_location)
    copying: Future | None = None
    statement = run.sql.rewrite
    if run.file_level is not None:
        scanning.make_view(
            run.spark, table, table.candidate_view, {s: files for s, (files, _) in run.file_level.items()}
        )
        copies = [(path, p.new_location) for p in pending for path in run.file_level[p.path][1]]
        copying = run.pool.submit(run.node.facts.copy, copies)
        statement = run.sql.rewrite_files
    try:
        run.execute_staging_write(statement, "rewrite partitions")
        errors = copying.result() if copying is not None else []
        if errors:
            raise LakehouseError(f"copying the files without listed ids failed: {errors[0]}")
    except Exception as exc:  # noqa: BLE001 - one statement per partition instead
        if copying is not None:
            copying.result()
        run.check_cancelled()
        console.say(
            f"purge: {table.name}: rewriting {len(pending)} partition(s) together failed, one by one: {first_line(exc)}"
        )
        rewrite_one_by_one(run, pending)
    else:
        _say_file_level(run)
        for part in pending:
            run.ledger.move(part, Step.REWRITE)
    finally:
        if run.file_level is not None:
            run.spark.catalog.dropTempView(table.candidate_view)


def _say_file_level(run: TableRun) -> None:
    if run.file_level is None:
        return
    copied = sum(len(c) for _, c in run.file_level.values())
    rewritten = sum(len(r) for r, _ in run.file_level.values())
    console.say(
        f"purge: {run.table.name}: file-level rewrite: {rewritten} file(s) that may hold listed ids rewritten,"
        f" {copied} whose footers rule them out copied unchanged"
    )


def rewrite_one_by_one(run: TableRun, pending: list[PartitionRewrite]) -> None:
    for part in pending:
        if run.table.partitioned:
            filesystem.delete(run.spark, part.new_location)
        try:
            run.execute_staging_write(run.partition_sql(part).rewrite, f"rewrite {part.label}")
        except Exception as exc:  # noqa: BLE001 - this partition's FAILED row
            run.check_cancelled()
            run.ledger.fail(part, f"the rewrite into {run.table.staging} failed: {first_line(exc)}")
            continue
        run.ledger.move(part, Step.REWRITE)


def check_rows(run: TableRun) -> None:
    """Rows written = rows before - rows purged, from the rewrite's footers (Gobblin's row check)."""
    rewritten = run.ledger.parts(State.REWRITTEN)
    listings = run.node.facts.list([p.new_location for p in rewritten], recursive=not run.table.partitioned)
    for part in rewritten:
        after = _rows_written(run, part, listings[part.new_location])
        expected = part.rows_before - part.rows_purged if part.rows_before is not None else None
        if after is None or after != expected:
            run.ledger.fail(
                part,
                f"the rewrite holds {after} rows, expected {expected} ({part.rows_before} minus {part.rows_purged}):"
                " the partition changed during the purge; not swapped, the next run purges it again",
            )
        elif after == 0 and run.table.partitioned:
            filesystem.mkdirs(run.spark, part.new_location)  # every row purged: it must not point at nothing


def _rows_written(run: TableRun, part: PartitionRewrite, listing: Listing) -> int | None:
    if not listing.exists:
        return 0
    try:
        return _rows(run, part, listing, run.table.staging)
    except Exception as exc:  # noqa: BLE001 - unknown rows fail the row check
        console.debug(f"purge: {run.table.name} {part.label}: could not count the rewrite: {first_line(exc)}")
        return None
