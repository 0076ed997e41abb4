"""What retention must not delete: every location a table or partition in the metastore references."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.lakehouse import filesystem
from dbt.adapters.lakehouse.filesystem import path_within

from python_hooks.catalog.metastore import Table


@dataclass
class Protected:
    location: str
    owner: tuple[str, str, str | None]  # (database, table, partition spec or None for the table)
    covers_inside: bool  # False for a partitioned table's own directory: its data is in its partitions
    stale: bool = False  # a stale data record not yet due, not a table or partition


class Protection:
    """The protected locations, kept current as tables and partitions are dropped or moved."""

    def __init__(self, spark: Any, tables: list[Table]) -> None:
        self.spark = spark
        self.entries: list[Protected] = []
        self.gone: list[str] = []  # what a dry run would have deleted, so that it is counted once
        for table in tables:
            self.protect(table)

    def protect(self, table: Table) -> None:
        if table.location:
            self.entries.append(
                Protected(
                    filesystem.qualify(self.spark, table.location),
                    (table.database, table.name, None),
                    not table.is_partitioned,
                )
            )
        for part in table.partitions:
            self.entries.append(
                Protected(
                    filesystem.qualify(self.spark, part.location),
                    (table.database, table.name, part.spec),
                    True,
                )
            )

    def forget(self, database: str, table: str, spec: str | None = None) -> None:
        """Stop protecting what a dropped table (spec None) or partition referenced."""
        self.entries = [
            p
            for p in self.entries
            if not (p.owner[0] == database and p.owner[1] == table and (spec is None or p.owner[2] == spec))
        ]

    def blocker(self, path: str) -> Protected | None:
        for p in self.entries:
            if path == p.location or (p.covers_inside and path_within(path, p.location)):
                return p
        return None
