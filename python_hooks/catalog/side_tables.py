"""The side tables purge and restore make, `<table>_<kind>_<ts>`, and the clock that stamps them.

A side table is recognised by its registration, never by its name alone: purge and restore
create every staging, backup and trash table with the table properties of
macros/common/side_tables.sql (`lakehouse.side_table` = its kind, `lakehouse.side_table.of` =
the live table, `...created_at`, `...invocation_id`).  The name pattern only pre-selects: a
table that merely looks like `orders_backup_202401151200` is a user's table and is never touched.
"""

from __future__ import annotations

import re
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.jvm import scala_list

# `<table>_<kind>_<ts>`: the names purge and restore give to their side tables (ts in epoch ms).
SIDE_TABLE = re.compile(r"^(?P<base>.+)_(?P<kind>backup|staging|trash)_(?P<ts>\d{10,})$")


def side_table(name: str) -> tuple[str, str, int] | None:
    """(base table, kind, ts) for `<base>_<kind>_<ts>`, or None for any other name."""
    match = SIDE_TABLE.match(name)
    if not match:
        return None
    return match.group("base"), match.group("kind"), int(match.group("ts"))


KINDS = ("staging", "backup", "trash")


def registration(table: Any) -> tuple[str, str, int] | None:
    """(base table, kind, ts) of a registered side table (a metastore.Table), else None.

    Registered means: a known kind, `of` naming a table of the side table's own database, and a
    numeric creation time.  Anything less is not a side table.
    """
    props = getattr(table, "properties", None) or {}
    kind = props.get("lakehouse.side_table")
    of = str(props.get("lakehouse.side_table.of") or "")
    created = str(props.get("lakehouse.side_table.created_at") or "")
    database, _, base = of.partition(".")
    if (
        kind not in KINDS
        or not base
        or database.lower() != str(table.database).lower()
        or not created.isdigit()
    ):
        return None
    return base, kind, int(created)


def named_side_tables(
    spark: Any, database: str, base: str | None = None
) -> list[tuple[metastore.Table, tuple[str, str, int] | None]]:
    """Every table of `database` named like a side table (of `base` only, when given), with its
    registration (None: a look-alike).  The name pre-selects; only those tables are read."""
    found = []
    for name in metastore.table_names(spark, database):
        side = side_table(name)
        if side is None or (base is not None and side[0].lower() != base.lower()):
            continue
        table = metastore.get_table(spark, database, name)
        if table is not None:
            found.append((table, registration(table)))
    return found


def looks_like_side_table(table: Any) -> bool:
    """Named like a side table but not registered as one (a user's table, or one made before
    registration existed: `dbt run-operation adopt_side_tables` lists and adopts those)."""
    return side_table(table.name) is not None and registration(table) is None


def adoption_candidates(spark: Any, databases: list[str] | None = None) -> list[dict[str, Any]]:
    """Tables named like side tables that carry no registration, with whether each may be adopted.

    For `dbt run-operation adopt_side_tables`: side tables that purge and restore made before
    they were registered.  One may be adopted when its base table exists in the same database
    with the same columns and partition columns (a backup, staging or trash table is always
    `like` its table); otherwise the reason is given and it is left as a user's table.
    """
    catalog = metastore.session_catalog(spark)
    found = []
    for database in databases or metastore.databases(spark):
        names = metastore.table_names(spark, database)
        for name in names:
            side = side_table(name)
            if side is None:
                continue
            table = metastore.get_table(spark, database, name, with_partitions=False)
            if table is None or registration(table) is not None:
                continue
            base, kind, ts = side
            row = {"database": database, "table": name, "kind": kind, "of": f"{database}.{base}", "ts": ts}
            if base not in names:
                found.append({**row, "adoptable": False, "reason": f"no table {database}.{base} exists"})
                continue
            mine = catalog.getTableMetadata(metastore.identifier(spark, database, name))
            theirs = catalog.getTableMetadata(metastore.identifier(spark, database, base))
            same_columns = list(mine.schema().fieldNames()) == list(theirs.schema().fieldNames())
            same_partitions = [str(c) for c in scala_list(mine.partitionColumnNames())] == [
                str(c) for c in scala_list(theirs.partitionColumnNames())
            ]
            if not (same_columns and same_partitions):
                reason = (
                    f"its columns or partition columns differ from {database}.{base}'s: not made `like` it"
                )
                found.append({**row, "adoptable": False, "reason": reason})
                continue
            found.append({**row, "adoptable": True, "reason": None})
    return found
