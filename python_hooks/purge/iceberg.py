"""The purge of an Apache Iceberg table: Iceberg's own row-level delete, never a swap of locations.

An Iceberg table's truth is its metadata files (each snapshot's manifests), so the Hive pattern
would cut it off them.  The table is reached through Iceberg's catalog (`iceberg`, beside Delta's
`spark_catalog`: docs/formats.md) and purged with the statements the macros render
(macros/purge/purge_iceberg.sql, overridable as every clause of the purge is):

1. the scan: per identity partition, the rows holding a listed id (the Hive tables' scan, read
   through Iceberg, whose file statistics skip the files the listed ids' range rules out);
2. the delete: a MERGE with the id table (`when matched then delete`), a join, never a list of
   ids, over the touched partitions and the listed ids' range (Iceberg's file statistics skip
   the files outside it; the log shows it masked).  A copy-on-write table rewrites the files
   that held them; a merge-on-read one writes position delete files, and the rows stay in the
   data files' bytes;
3. when the touched partitions then have delete files: `rewrite_data_files` over them with a
   delete-file threshold of 1 (every data file a delete file applies to is rewritten without the
   deleted rows, and, when there are equality delete files, those left dangling dropped), then
   `rewrite_position_delete_files`, which drops the position delete files left with nothing to
   apply to, so that no live file keeps a deleted row;
4. `rewrite_manifests`: a manifest keeps an entry, with the file's statistics, for each file a
   commit removed; written anew, the current snapshot's manifests hold its live files only, so
   that once the older snapshots expire no metadata file keeps a purged id.

Each is one Iceberg commit, atomic on its own.  A run stopped between 2 and 3 leaves the rows
deleted and still in the bytes, in partitions where the next run's scan finds no listed id any
more: the next run runs 3 over the whole table when it has delete files outside the partitions
its own scan touched (`rewrite_whole_table`, set by the scan), or when it touches none.
`purge_log` gets a row per touched partition (one for a table without identity partitions),
`COMMITTED`, with the snapshot before and after in `reason`.  The older snapshots still hold the
ids until `expire_snapshots` removes them.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import console
from python_hooks.catalog.iceberg import CATALOG, current_snapshot, identity_partitions, load, qualified
from python_hooks.catalog.literals import string_literal
from python_hooks.catalog.tables import DESCRIPTOR
from python_hooks.errors import first_line
from python_hooks.purge.plan import DEFAULT_PARTITION, PurgeConfig, TablePlan
from python_hooks.purge.scanning import as_logged
from python_hooks.purge.units import result_row

# how every purge_log reason of an Iceberg table begins: purge_verification reads the table
# through Iceberg's catalog by it (macros/purge/purge_verification.sql)
LABEL = "Apache Iceberg"


def table_plan(spark: Any, meta: Any) -> tuple[TablePlan, Any, str | None]:
    """One onboarded Iceberg table, its schema and its dataset.descriptor, read through Iceberg's
    catalog; planning.py resolves the identifier as for any table.  Only identity partitions are
    partitions here: a transform's (days(ts), bucket(...)) values are not a column's, and such a
    table is scanned, deleted from and rewritten as a whole."""
    database = str(meta.identifier().database().get()).lower()
    table = str(meta.identifier().table()).lower()
    plan = TablePlan(
        database=database,
        table=table,
        location="",
        database_location="",
        partition_columns=[],
        partition_types=[],
        data_columns=[],
        storage_format=None,
        bucketed=False,
        table_format="iceberg",
        scan="table",
        catalog=CATALOG,
    )
    name = qualified(database, table)
    try:
        schema = spark.table(name).schema
        loaded = load(spark, database, table)
        properties = dict(loaded.properties())
    except Exception as exc:  # noqa: BLE001 - the table's FAILED row
        plan.error = (
            f"{LABEL}: table {plan.name}: Iceberg could not read it: {first_line(exc)}; nothing was purged"
        )
        return plan, None, None
    plan.partition_columns = identity_partitions(loaded)
    plan.partition_types = [schema[c].dataType.simpleString() for c in plan.partition_columns]
    plan.data_columns = [f.name for f in schema.fields if f.name not in plan.partition_columns]
    plan.location = str(loaded.location())
    return plan, schema, properties.get(DESCRIPTOR)


def touched(table: TablePlan) -> str | None:
    """The predicate of `<table>.delete_files` rows in the table's touched partitions; None when
    it touches no identity partition (the whole table)."""
    alternatives = [
        " and ".join(
            f"partition.`{column}` is null"
            if value == DEFAULT_PARTITION
            else f"cast(partition.`{column}` as string) = {string_literal(value)}"
            for column, value in part.values
        )
        for part in table.todo
        if part.values
    ]
    return " or ".join(f"({a})" for a in alternatives) or None


def delete_files(spark: Any, table: TablePlan) -> tuple[int, int]:
    """The delete files the current snapshot applies where the rewrites go (the touched
    partitions, or the whole table): (all of them, the equality delete files)."""
    sql = f"select count(*), count_if(content = 2) from {qualified(table.database, table.table)}.delete_files"
    where = None if table.rewrite_whole_table else touched(table)
    if where is not None:
        sql += f" where {where}"
    found = spark.sql(sql).collect()[0]
    return int(found[0]), int(found[1] or 0)


def delete_files_elsewhere(spark: Any, table: TablePlan) -> int:
    """The delete files the current snapshot applies outside the table's touched partitions: a
    run stopped between its delete and its rewrites left its own there, where the scan finds no
    listed id any more (their rows are deleted), and the rows are still in the data files' bytes."""
    where = touched(table)
    if where is None:
        return 0
    sql = f"select count(*) from {qualified(table.database, table.table)}.delete_files where not coalesce({where}, false)"
    return int(spark.sql(sql).collect()[0][0])


def run_table(
    spark: Any, config: PurgeConfig, table: TablePlan, statements: dict[str, Any]
) -> list[dict[str, Any]]:
    """Purge one Iceberg table with its rendered statements; its result rows."""
    if not table.todo:
        if not config.dry_run:
            # a run stopped after its delete and before its rewrite left the rows in the bytes:
            # the statements cover the whole table then
            _rewrite(spark, table, statements)
        console.say(f"purge: {table.name} (Iceberg): no listed id")
        return [
            result_row(
                config, table, None, "SKIPPED", reason=f"{LABEL}: no listed id in this table", rows_purged=0
            )
        ]
    rows = sum(p.rows_purged for p in table.todo)
    if config.dry_run:
        console.say(
            f"purge: {table.name} (Iceberg): DRY_RUN, would delete {rows} row(s) in {len(table.todo)}"
            " partition(s) and rewrite the files their delete files apply to"
        )
        return [
            result_row(
                config, table, part, "DRY_RUN", reason=f"{LABEL}: would remove {part.rows_purged} rows"
            )
            for part in table.todo
        ]
    if table.rewrite_whole_table:
        console.say(
            f"purge: {table.name} (Iceberg): delete files outside the partitions holding listed ids"
            " (a run stopped before its rewrites leaves them): the rewrites cover the whole table"
        )
    before = current_snapshot(spark, table.database, table.table)
    _run(spark, table, "delete", statements["delete"])
    rewritten = _rewrite(spark, table, statements)
    # the current snapshot's manifests keep an entry, with its statistics, for each file removed
    _run(spark, table, "rewrite_manifests", statements["rewrite_manifests"])
    after = current_snapshot(spark, table.database, table.table)
    note = (
        f"{LABEL}: snapshot {before} -> {after}"
        + (
            " (delete, rewrite_data_files, rewrite_position_delete_files, rewrite_manifests)"
            if rewritten
            else " (delete, rewrite_manifests)"
        )
        + f"; snapshots up to {before} keep the ids until expire_snapshots removes them"
    )
    console.say(f"purge: {table.name} (Iceberg): {rows} row(s) deleted; {note}")
    return [
        result_row(
            config,
            table,
            part,
            "COMMITTED",
            reason=note,
            new_location=part.location,
            rows_purged=part.rows_purged,
        )
        for part in table.todo
    ]


def _rewrite(spark: Any, table: TablePlan, statements: dict[str, Any]) -> bool:
    """The rewrites, when the partitions they cover have delete files; whether they ran.  With
    equality delete files among them, the data files' rewrite drops the ones left dangling."""
    found, equality = delete_files(spark, table)
    if not found:
        return False
    rewrite = statements["rewrite_data_dangling" if equality else "rewrite_data"]
    _run(spark, table, "rewrite_data_files", rewrite)
    _run(spark, table, "rewrite_position_delete_files", statements["rewrite_deletes"])
    return True


def _run(spark: Any, table: TablePlan, step: str, sql: str) -> None:
    # the delete's id range is two listed ids: the log shows it masked, as the scans'
    console.debug(f"purge step {step} ({table.name}, Iceberg):\n{as_logged(sql)}")
    spark.sql(sql).collect()
