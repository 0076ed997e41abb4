"""The purge of a Delta Lake table: Delta's own delete, never a swap of locations.

A Delta table's truth is its transaction log, so the Hive pattern (a staging table, a backup and
a swap of locations) would cut it off its history.  Instead, with the statements the macros
render (macros/purge/purge_delta.sql, overridable as every clause of the purge is):

1. the scan: per partition, the rows holding a listed id (the Hive tables' scan, through Delta,
   which already leaves out rows a deletion vector hides);
2. the delete: a MERGE with the id table (`when matched then delete`), a join, never a list of
   ids, so that no id reaches the log's `commitInfo`;
3. with deletion vectors on, `REORG TABLE ... WHERE <the touched partitions> APPLY (PURGE)`: a
   delete only marks the rows, and the purge rewrites the files that hold them.

Each is one Delta commit, atomic on its own.  A run stopped between 2 and 3 leaves the rows
marked and no id readable; the next run finds no listed id and still purges the marked rows
(its REORG covers the whole table then, rewriting only files that have deletion vectors).

`purge_log` gets a row per touched partition (one for an unpartitioned table), `COMMITTED`, with
the table's version before and after in `reason`.  The older versions still hold the ids: they
are readable by time travel until `VACUUM` removes their files (docs/formats.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from python_hooks.catalog import console, filesystem
from python_hooks.catalog.jvm import path_string
from python_hooks.catalog.metastore import Partition
from python_hooks.catalog.tables import DESCRIPTOR
from python_hooks.errors import ConfigError, first_line
from python_hooks.purge.delta_log import LOG_RETENTION, log_note, log_retention_hours
from python_hooks.purge.plan import (
    DEFAULT_PARTITION,
    PartitionRewrite,
    PurgeConfig,
    ScannedPlan,
    TablePlan,
)
from python_hooks.purge.units import result_row

# whether a MERGE marks the rows it deletes with deletion vectors (Delta's default, on a table
# that has them) or rewrites their files
MERGE_DELETION_VECTORS = "spark.databricks.delta.merge.deletionVectors.persistent"


def table_plan(spark: Any, meta: Any) -> tuple[TablePlan, Any, str | None]:
    """One onboarded Delta table, its schema and its dataset.descriptor, from Delta (the metastore
    holds none of the three); planning.py resolves the identifier as for any table."""
    database = str(meta.identifier().database().get()).lower()
    table = str(meta.identifier().table()).lower()
    plan = TablePlan(
        database=database,
        table=table,
        location=path_string(spark, meta.location()),
        database_location="",
        partition_columns=[],
        partition_types=[],
        data_columns=[],
        storage_format=None,
        bucketed=False,
        table_format="delta",
        scan="table",
    )
    try:
        detail = spark.sql(f"describe detail `{database}`.`{table}`").collect()[0]
        schema = spark.table(f"`{database}`.`{table}`").schema
    except Exception as exc:  # noqa: BLE001 - the table's FAILED row
        plan.error = f"Table {plan.name}: Delta could not read it: {first_line(exc)}; nothing was purged"
        return plan, None, None
    properties = detail.properties or {}
    plan.partition_columns = [str(c) for c in detail.partitionColumns]
    plan.partition_types = [schema[c].dataType.simpleString() for c in plan.partition_columns]
    plan.data_columns = [f.name for f in schema.fields if f.name not in plan.partition_columns]
    plan.deletion_vectors = str(properties.get("delta.enableDeletionVectors", "")).lower() == "true"
    plan.location = str(detail.location)
    plan.log_retention_hours = log_retention_hours(properties.get(LOG_RETENTION))
    return plan, schema, properties.get(DESCRIPTOR)


def deletion_vectors_left(spark: Any, table: TablePlan, at: int) -> bool:
    """Whether any file of the table's version `at` may carry a deletion vector: False only when
    the version's checksum file (`_delta_log/<version>.crc`, which Delta writes at each commit)
    counts none; True when it is missing or does not count them."""
    path = f"{table.location.rstrip('/')}/_delta_log/{at:020d}.crc"
    try:
        counted = json.loads(filesystem.read_text(spark, path)).get("numDeletionVectorsOpt")
    except Exception:  # noqa: BLE001 - no checksum (yet): the REORG decides
        return True
    return counted is None or int(counted) > 0


def version(spark: Any, table: TablePlan) -> int:
    """The table's latest version."""
    row = spark.sql(f"describe history `{table.database}`.`{table.table}` limit 1").collect()[0]
    return int(row.version)


def run_scans(spark: Any, plan: ScannedPlan, scans: dict[str, Any], cancellation: Any) -> ScannedPlan:
    """A new plan whose Delta tables have their touched partitions (`todo`, with the rows each
    holds), from the scans the macros rendered; a scan that fails is the table's FAILED row."""
    scanned = []
    for table in plan.delta:
        if table.error is not None:
            scanned.append(table)
            continue
        cancellation.check(f"before the scan of {table.name}")
        try:
            rows = [list(r) for r in spark.sql(scans[table.name]).collect()]
        except Exception as exc:  # noqa: BLE001 - the table's FAILED row
            scanned.append(
                replace(table, error=f"Table {table.name}: the scan for listed ids failed: {first_line(exc)}")
            )
            continue
        todo = []
        for row in rows:
            pairs = [
                (column, DEFAULT_PARTITION if value is None else str(value))
                for column, value in zip(table.partition_columns, row[:-1], strict=True)
            ]
            # where the partition's files are (an Iceberg table's under its `data/`)
            root = f"{table.location}/data" if table.table_format == "iceberg" else table.location
            where = f"{root}/{Partition(pairs, '').path}" if pairs else table.location
            todo.append(PartitionRewrite(pairs, where, new_location=where, rows_purged=int(row[-1])))
        table = replace(table, todo=sorted((p for p in todo if p.rows_purged > 0), key=lambda p: p.path))
        if table.table_format == "iceberg" and table.todo:
            from python_hooks.purge import iceberg

            table = replace(table, rewrite_whole_table=iceberg.delete_files_elsewhere(spark, table) > 0)
        scanned.append(table)
        console.debug(
            f"purge: {table.name} ({label(table)}): the scan found ids in {len(scanned[-1].todo)} partition(s)"
        )
    return replace(plan, delta=scanned)


def label(table: TablePlan) -> str:
    return "Iceberg" if table.table_format == "iceberg" else "Delta"


def run_table(
    spark: Any, config: PurgeConfig, table: TablePlan, statements: dict[str, Any]
) -> list[dict[str, Any]]:
    """Purge one Delta table (or, by iceberg.py, an Iceberg one) with its rendered statements;
    its result rows."""
    if table.table_format == "iceberg":
        from python_hooks.purge import iceberg

        return iceberg.run_table(spark, config, table, statements)
    if not table.todo:
        if (
            table.deletion_vectors
            and not config.dry_run
            and deletion_vectors_left(spark, table, version(spark, table))
        ):
            # rows a delete marked and did not remove (a run stopped after its delete and before
            # its REORG, or someone else's delete) are still in the files' bytes
            _run(spark, table, "reorg", statements["reorg"])
        console.say(f"purge: {table.name} (Delta): no listed id")
        return [
            result_row(config, table, None, "SKIPPED", reason="no listed id in this table", rows_purged=0)
        ]
    rows = sum(p.rows_purged for p in table.todo)
    if config.dry_run:
        console.say(
            f"purge: {table.name} (Delta): DRY_RUN, would delete {rows} row(s) in {len(table.todo)} partition(s)"
            + (", then REORG the files that still carry deletion vectors" if table.deletion_vectors else "")
        )
        return [
            result_row(config, table, part, "DRY_RUN", reason=f"would remove {part.rows_purged} rows")
            for part in table.todo
        ]
    before = version(spark, table)
    # the MERGE rewrites the files that hold an id rather than marking their rows with deletion
    # vectors, which only the REORG would then remove from the bytes: one rewrite, not two
    with _session_setting(spark, MERGE_DELETION_VECTORS, "false"):
        _run(spark, table, "delete", statements["delete"])
    after = version(spark, table)
    reorg = table.deletion_vectors and deletion_vectors_left(spark, table, after)
    if reorg:
        # the files of the touched partitions that still carry deletion vectors (an earlier delete
        # of someone else's, which may hide an id)
        _run(spark, table, "reorg", statements["reorg"])
        after = version(spark, table)
    note = (
        f"Delta Lake: version {before} -> {after}"
        + (" (delete, then REORG APPLY (PURGE))" if reorg else " (delete)")
        + f"; versions up to {before} keep the ids until VACUUM removes their files"
        + f"; {log_note(table)}"
    )
    console.say(f"purge: {table.name} (Delta): {rows} row(s) deleted; {note}")
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


@contextmanager
def _session_setting(spark: Any, key: str, value: str) -> Iterator[None]:
    """`key` set to `value` for the block, then as it was."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _run(spark: Any, table: TablePlan, step: str, sql: str) -> None:
    console.debug(f"purge step {step} ({table.name}, Delta):\n{sql}")
    spark.sql(sql)


# the statements purge_render_delta renders for a table, by its format
STATEMENTS = {
    "delta": ("delete", "reorg"),
    "iceberg": ("delete", "rewrite_data", "rewrite_data_dangling", "rewrite_deletes", "rewrite_manifests"),
}


def statements_of(rendered: dict[str, Any], table: str) -> dict[str, str]:
    """The statements `purge_render_delta` rendered for `table`: exactly a Delta table's `delete`
    and `reorg`, or an Iceberg table's `delete`, `rewrite_data`, `rewrite_data_dangling`,
    `rewrite_deletes` and `rewrite_manifests`."""
    if not isinstance(rendered, dict) or set(rendered) not in [set(keys) for keys in STATEMENTS.values()]:
        raise ConfigError(
            f"purge_render_delta (macros/purge/purge_delta.sql) rendered {json.dumps(sorted(rendered or {}))} for"
            f" {table}; expected exactly delete and reorg (a Delta table) or delete, rewrite_data,"
            " rewrite_data_dangling, rewrite_deletes and rewrite_manifests (an Iceberg table). Nothing was run."
        )
    return {k: str(v).strip() for k, v in rendered.items()}
