"""The id table of a purge (vars compliance_id_table / compliance_id_column): its name parsed
once, its column checked, and the listed ids' range that the data skipping uses.

A bad name, a missing table or column is refused here with a message that names the var and
the value, before any table is touched: nothing is purged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from python_hooks.catalog import files, metastore, tables
from python_hooks.catalog.jvm import path_string
from python_hooks.errors import ConfigError, NotFoundError, did_you_mean
from python_hooks.purge import footers
from python_hooks.purge.plan import INTEGRAL, IdSource, PurgeConfig
from python_hooks.purge.selection import partition_columns

_TABLE_NAME = re.compile(r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$")


def table_name_parts(text: Any) -> tuple[str, str] | None:
    """(database, table) of a table named as `db.table`, lower-cased, or None when it is not one:
    the one parse of such names (var compliance_id_table for the purge and every macro, through
    `compliance.id_table_name`; the tables of an onboarding file)."""
    name = str(text if text is not None else "").strip()
    if not _TABLE_NAME.match(name):
        return None
    database, table = name.lower().split(".")
    return database, table


def id_source(spark: Any, config: PurgeConfig, with_bounds: bool = True) -> IdSource:
    """The id table of vars compliance_id_table / compliance_id_column, checked, with the listed ids' range."""
    name = config.id_table.strip()
    column = config.id_column.strip()
    parts = table_name_parts(name)
    if parts is None:
        raise ConfigError(
            f"Var compliance_id_table is {json.dumps(name)}: it must name the id table as db.table"
            " (for example u_purger.guestids). Nothing was purged."
        )
    if not column:
        raise ConfigError(
            f"Var compliance_id_column is empty: name the column of {name} that holds the ids"
            " (for example guestid). Nothing was purged."
        )
    database, table = parts
    described = tables.describe_table(spark, database, table)
    if not described["exists"]:
        known = [f"{database}.{t}" for t in tables.list_tables(spark, database)] or tables.list_databases(
            spark
        )
        raise NotFoundError(
            f"The id table {name} (var compliance_id_table) does not exist{did_you_mean(name, known)}."
            " Create it or point the var at the table of ids to purge. Nothing was purged."
        )
    found = [c for c in described["columns"] if c.lower() == column.lower()]
    if not found:
        raise NotFoundError(
            f"The id table {name} has no column {json.dumps(column)} (var compliance_id_column)"
            f"{did_you_mean(column, described['columns'])}; its columns are: "
            f"{', '.join(described['columns'])}. Nothing was purged."
        )
    id_type = described["columns"][found[0]]
    bounds = id_bounds(spark, database, table, found[0]) if id_type in INTEGRAL and with_bounds else None
    return IdSource(database, table, found[0], id_type, bounds)


def id_bounds(spark: Any, database: str, table: str, column: str) -> tuple[int, int] | None:
    """The smallest and largest listed id (None: none is listed): from the id table's footers
    when every file's statistics give them (no Spark job), else one aggregate over the column.
    Exact either way: a file's min/max statistics are its values' own."""
    meta = metastore.session_catalog(spark).getTableMetadata(metastore.identifier(spark, database, table))
    storage = files.storage_format(meta)
    if (
        storage is not None
        and not partition_columns(meta)
        and footers.reads_like_the_table(spark, meta, storage)
    ):
        found = footers.footer_bounds(spark, path_string(spark, meta.location()), storage, column)
        if found is not False:
            return found
    row = (
        spark.table(metastore.table_name(database, table))
        .where(f"{metastore.quote(column)} is not null")
        .selectExpr(f"min({metastore.quote(column)})", f"max({metastore.quote(column)})")
        .collect()[0]
    )
    return None if row[0] is None else (int(row[0]), int(row[1]))


def id_source_of(spark: Any, id_table: str, id_column: str) -> dict[str, Any]:
    """`id_source` for macros: {database, table, column, type, name}."""
    config = PurgeConfig("", 0, "", [], [], id_table, id_column)
    ids = id_source(spark, config, with_bounds=False)
    return {key: getattr(ids, key) for key in ("database", "table", "column", "type", "name")}
