"""The steps of a table's purge around its commit (table_purge.STEPS): the journal's intent, the
staging table, the backup (REWRITTEN -> BACKED_UP), Gobblin's commit check (-> CHECKED) and the
swaps (-> SWAPPED): the partitions' rendered ALTERs, made as one metastore call when they are the
package's own.  A swap is never made that the journal does not know, nor of a partition without
its backup or whose files changed since the rewrite read them.
"""

from __future__ import annotations

from python_hooks.catalog import console, metastore
from python_hooks.catalog.journal import Intent, PartitionSwap
from python_hooks.errors import first_line
from python_hooks.purge.plan import PartitionRewrite, PurgeConfig, TablePlan
from python_hooks.purge.states import State, Step
from python_hooks.purge.table_run import TableRun


def intent_of(config: PurgeConfig, table: TablePlan) -> Intent:
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
            PartitionSwap(p.path, p.values, p.location, p.new_location, p.rows_before, p.rows_purged)
            for p in table.todo
        ],
    )


def write_intent(run: TableRun) -> None:
    """The journal's intent (catalog/journal.py), before the staging table is made."""
    run.intent = intent_of(run.config, run.table)
    console.debug(f"purge step journal intent ({run.table.name})")
    run.node.journal.record_intent(run.intent)


def create_staging(run: TableRun) -> None:
    sql, table = run.sql, run.table
    create_side_table(
        run,
        "create staging",
        sql.create_staging,
        sql.create_staging_properties,
        table.staging,
        table.staging_location,
    )


def create_side_table(
    run: TableRun,
    step: str,
    statement: str,
    properties: dict[str, str] | None,
    name: str,
    location: str,
    if_not_exists: bool = False,
) -> None:
    """The staging table or the backup `name` at `location`: its rendered `create table ... like`
    when a project's macro made it (`properties` None), else what the package's own statement
    does, as one `createTable` of the catalog (metastore.create_table_like)."""
    if properties is None:
        run.execute(statement, step)
        return
    console.debug(f"purge step {step} ({run.table.name}): one catalog call for\n{statement}")
    metastore.create_table_like(
        run.spark, run.table.database, name, run.table.table, location, properties, if_not_exists
    )


def start_backup(run: TableRun) -> None:
    """The backup, made on a background thread while the rewrite runs (joined by wait_backup)."""
    run.backup = run.pool.submit(make_backup, run)


def make_backup(run: TableRun) -> None:
    """The backup table, then every partition's backup (pointing at its live directory)."""
    sql, table = run.sql, run.table
    create_side_table(
        run,
        "create backup",
        sql.create_backup,
        sql.create_backup_properties,
        table.backup,
        table.backup_location,
        if_not_exists=True,
    )
    if run.table.partitioned and run.sql.add_backup_partitions:
        try:
            add_backup_partitions_together(run)
        except Exception as exc:  # noqa: BLE001 - each partition adds its own backup in wait_backup
            console.debug(
                f"purge: {run.table.name}: adding the backup partitions together failed: {first_line(exc)}"
            )
            return
        for part in run.table.todo:
            run.ledger.entry(part).backup_partition = True


def add_backup_partitions_together(run: TableRun) -> None:
    """What the rendered `alter table <backup> add if not exists partition ...` does, as one
    `createPartitions` of the catalog: each backup partition pointing at its live directory.  The
    statement is the package's own (it is rendered only while no partition's is overridden)."""
    table = run.table
    console.debug(
        f"purge step backup partitions ({table.name}): one metastore call for\n{run.sql.add_backup_partitions}"
    )
    metastore.add_partitions(
        run.spark, table.database, table.backup, [(list(part.pairs), part.location) for part in table.todo]
    )


def join_backup(run: TableRun) -> BaseException | None:
    """The background backup finished; its error, if it failed."""
    if run.backup is None:
        return None
    try:
        run.backup.result()
    except Exception as exc:  # noqa: BLE001 - the caller decides what the error fails
        return exc
    return None


def wait_backup(run: TableRun) -> None:
    """The backup made in the background; without it nothing may be swapped."""
    error = join_backup(run)
    if error is not None:
        run.ledger.fail_all(State.REWRITTEN, f"could not create {run.table.backup}: {first_line(error)}")
        return
    for part in run.ledger.parts(State.REWRITTEN):
        entry = run.ledger.entry(part)
        if run.table.partitioned and not entry.backup_partition:
            try:
                run.execute(run.partition_sql(part).add_backup, f"backup partition {part.label}")
            except Exception as exc:  # noqa: BLE001 - this partition's FAILED row
                run.ledger.fail(
                    part, f"could not add the backup partition to {run.table.backup}: {first_line(exc)}"
                )
                continue
            entry.backup_partition = True
        run.ledger.move(part, Step.BACKUP)


def safe_point(run: TableRun) -> None:
    """The last point where a cancellation stops the table (undone); after it the swaps finish."""
    run.check_cancelled()


def check_commit(run: TableRun) -> None:
    """Gobblin's commit check: the files the rewrite read are still the partition's files."""
    console.debug(f"purge step commit check ({run.table.name})")
    for part in run.ledger.parts(State.BACKED_UP):
        for sql in run.partition_sql(part).before_swap:
            run.execute(sql, f"before swap {part.label}")
    backed_up = run.ledger.parts(State.BACKED_UP)
    exclude = None if run.table.partitioned else run.table.staging_location
    listings = run.node.facts.list(
        [p.location for p in backed_up], recursive=not run.table.partitioned, exclude=exclude
    )
    for part in backed_up:
        listing = listings[part.location]
        if listing.error is not None:
            run.ledger.fail(
                part,
                f"the files of the partition could not be listed for the commit check ({listing.error}):"
                " not swapped, the next run purges it again",
            )
        elif changed := listing.changes_since(run.ledger.entry(part).files):
            run.ledger.fail(
                part,
                "the files of the partition changed between the start of the rewrite and the swap (a concurrent"
                f" write? {changed}): not swapped, the next run purges it again",
            )
        else:
            run.ledger.move(part, Step.COMMIT_CHECK)


def swap(run: TableRun) -> None:
    """Every checked partition to its rewrite, never interrupted: in one metastore call when
    every swap is the default ALTER, else (or for those that call did not move) one rendered
    ALTER each."""
    checked = run.ledger.parts(State.CHECKED)
    run.progress.set_step(f"swapping {len(checked)} partition(s)")
    if run.sql.swap_in_one_call and len(checked) > 1:
        checked = swap_together(run, checked)
    for part in checked:
        try:
            run.execute(run.partition_sql(part).swap, f"swap {part.label}")
        except Exception as exc:  # noqa: BLE001 - this partition's FAILED row, unless it did move
            if location_now(run, part) != part.new_location:
                run.ledger.fail(part, f"the location swap failed: {first_line(exc)}")
                continue
        run.ledger.move(part, Step.SWAP)


def swap_together(run: TableRun, checked: list[PartitionRewrite]) -> list[PartitionRewrite]:
    """What the partitions' rendered ALTERs do, as one `alterPartitions` of the catalog: one
    metastore transaction, so a reader sees every partition of the table move at once, and one
    alter and one refresh of the table (its stale statistics dropped) instead of one of each per
    partition.  Returns the partitions still to swap: none, or after an error those that did
    not move."""
    table = run.table
    statements = ";\n".join(run.partition_sql(part).swap for part in checked)
    console.debug(f"purge step swap together ({table.name}): one metastore call for\n{statements}")
    moves = [(list(part.pairs), part.new_location) for part in checked]
    try:
        metastore.set_partition_locations(run.spark, table.database, table.table, moves)
    except Exception as exc:  # noqa: BLE001 - those that did not move go one by one
        now = locations_now(run, checked)
        left = [part for part in checked if now[part.path] != part.new_location]
        console.say(
            f"purge: {table.name}: swapping {len(checked)} partition(s) in one call failed"
            f" ({first_line(exc)}); {len(left)} left to swap one by one"
        )
    else:
        left = []
    remaining = {part.path for part in left}
    for part in checked:
        if part.path not in remaining:
            run.ledger.move(part, Step.SWAP)
    return left


def location_now(run: TableRun, part: PartitionRewrite) -> str | None:
    """Where the catalog says the partition (or the unpartitioned table) is now."""
    return locations_now(run, [part])[part.path]


def locations_now(run: TableRun, parts: list[PartitionRewrite]) -> dict[str, str | None]:
    """Where the catalog says each of `parts` is now, by path (None: it does not exist), from one
    listing of the table's partitions."""
    table = run.table
    if not table.partitioned:
        found = metastore.get_table(run.spark, table.database, table.table, with_partitions=False)
        return {part.path: found.location if found else None for part in parts}
    listed = {
        tuple(pairs): location
        for pairs, location in metastore.partition_locations(
            run.spark, table.database, table.table, table.partition_columns
        )
    }
    return {part.path: listed.get(tuple(part.pairs)) for part in parts}
