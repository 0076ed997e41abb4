"""Which tables the purge cleans: whitelisted, not blacklisted, onboarded, not the project's own.

A table is onboarded by its `dataset.descriptor` table property (a Delta Lake table's is in its
log, read through Delta), and it is the project's own
(a staging, backup or trash table, whose data is a backup) only by its side-table registration
(`lakehouse.side_table*` properties): never by its name, so a user's `orders_backup_202401151200`
is purged like any other table.  Only the whitelisted databases are listed, one metastore call
per database for all its tables' metadata.  A pattern that matches no table is a warning that
names it and the nearest existing names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.jvm import scala_list
from python_hooks.errors import did_you_mean
from python_hooks.purge.plan import PurgeConfig, TablePattern

DESCRIPTOR = "dataset.descriptor"
SIDE_TABLE = "lakehouse.side_table"


@dataclass
class Selection:
    onboarded: list[Any] = field(default_factory=list)  # CatalogTable of each table to purge
    notices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    databases: list[str] = field(default_factory=list)  # every database of the metastore


def _property(meta: Any, key: str) -> str | None:
    value = meta.properties().get(key)
    return str(value.get()) if value.isDefined() else None


def select_tables(spark: Any, config: PurgeConfig) -> Selection:
    """The onboarded tables the whitelist and blacklist select, and what to tell the user."""
    found = Selection(databases=[str(d).lower() for d in metastore.databases(spark)])
    listed: dict[str, list[str]] = {}
    for database in found.databases:
        if not any(p.may_match_database(database) for p in config.whitelist):
            continue
        names = [str(n).lower() for n in metastore.table_names(spark, database)]
        listed[database] = names
        chosen = [
            name
            for name in names
            if any(p.matches(database, name) for p in config.whitelist)
            and not any(p.matches(database, name) for p in config.blacklist)
        ]
        for meta in metastore.tables_by_name(spark, database, chosen):
            name = f"{database}.{str(meta.identifier().table()).lower()}"
            if str(meta.tableType().name()) == "VIEW" or _property(meta, SIDE_TABLE) is not None:
                continue
            if metastore.table_property(spark, meta, DESCRIPTOR) is None:
                found.notices.append(
                    f"{name} is whitelisted but has no dataset.descriptor table property: skipped"
                    " (onboard it with `dbt run-operation onboard`)"
                )
                continue
            found.onboarded.append(meta)
    found.warnings = _unmatched(spark, config, found.databases, listed)
    return found


def _unmatched(
    spark: Any, config: PurgeConfig, databases: list[str], listed: dict[str, list[str]]
) -> list[str]:
    """A warning per whitelist or blacklist entry that matches no table of the metastore."""
    warnings = []
    for var, patterns in (("purge_whitelist", config.whitelist), ("purge_blacklist", config.blacklist)):
        for pattern in patterns:
            if pattern.database in databases and pattern.database not in listed:
                listed[pattern.database] = [
                    str(n).lower() for n in metastore.table_names(spark, pattern.database)
                ]
            if any(pattern.matches(db, name) for db, names in listed.items() for name in names):
                continue
            warnings.append(
                f"{var} entry {pattern.text!r} matches no table{_suggestion(pattern, databases, listed)}"
            )
    return warnings


def _suggestion(pattern: TablePattern, databases: list[str], listed: dict[str, list[str]]) -> str:
    if pattern.table is not None and pattern.database in listed:
        known = [f"{pattern.database}.{name}" for name in listed[pattern.database]]
        return did_you_mean(f"{pattern.database}.{pattern.table}", known)
    if pattern.table is not None:
        close = did_you_mean(pattern.database, databases)
        return (
            close.replace("did you mean", f"no database {pattern.database}; did you mean")
            if close
            else (f" (no database {pattern.database})")
        )
    return did_you_mean(pattern.database, databases)


def partition_columns(meta: Any) -> list[str]:
    return [str(c) for c in scala_list(meta.partitionColumnNames())]
