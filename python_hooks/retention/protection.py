"""What retention must not delete: every location a table or partition in the metastore references.

The protected locations are listed on first use, not when the pass starts: a pass that deletes
nothing (every backup, partition and stale record still within its policy) never consults them,
and then costs what its side tables and policy tables cost, not a listing of every partition of
every table.  The first delete, drop or reap reads the whole metastore at that moment, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from python_hooks.catalog import filesystem
from python_hooks.catalog.filesystem import path_within
from python_hooks.catalog.metastore import Table

# `scheme:` or `scheme://authority`, then an absolute path
_LOCATION = re.compile(r"^(?P<prefix>[A-Za-z][A-Za-z0-9+.-]*:(?://[^/]*)?)(?P<path>/.*)$")
# what Hadoop's Path would normalise away: empty, `.` and `..` segments
_UNNORMAL = re.compile(r"//|/\.{1,2}(?:/|$)")


@dataclass
class Protected:
    location: str
    owner: tuple[str, str, str | None]  # (database, table, partition spec or None for the table)
    covers_inside: bool  # False for a partitioned table's own directory: its data is in its partitions
    stale: bool = False  # a stale data record not yet due, not a table or partition


class Protection:
    """The protected locations, kept current as tables and partitions are dropped or moved.

    `tables` is the metastore's tables with their partitions, or a function that lists them:
    called on the first read of `entries` (or `blocker`), and never when nothing is deleted.
    """

    def __init__(self, spark: Any, tables: list[Table] | Callable[[], list[Table]]) -> None:
        self.spark = spark
        self._tables = tables
        self._entries: list[Protected] | None = None
        # added before the listing (stale records not yet due), and forgotten before it (a dry
        # run drops no metadata, so the listing still holds what it forgot)
        self._added: list[Protected] = []
        self._forgotten: list[tuple[str, str, str | None]] = []
        self.gone: list[str] = []  # what a dry run would have deleted, so that it is counted once
        # `scheme:` / `scheme://authority` prefixes whose paths the filesystem qualifies as themselves
        self._qualified_prefixes: set[str] = set()

    @property
    def listed(self) -> bool:
        """Whether the protected locations have been listed (the pass consulted them)."""
        return self._entries is not None

    @property
    def entries(self) -> list[Protected]:
        if self._entries is None:
            self._entries = []
            for table in self._tables() if callable(self._tables) else self._tables:
                self.protect(table)
            for owner in self._forgotten:
                self._drop(*owner)
            self._entries.extend(self._added)
        return self._entries

    def add(self, entry: Protected) -> None:
        """Protect one more location (a stale data record not yet due)."""
        if self._entries is None:
            self._added.append(entry)
        else:
            self._entries.append(entry)

    def qualify(self, location: str) -> str:
        """filesystem.qualify, without a JVM call for a location already in qualified form.

        The metastore holds qualified locations, and a pass protects every partition of every
        table: at three py4j calls each, tens of thousands of partitions cost seconds.  A location is taken
        as it is when its scheme and authority are ones the filesystem has already qualified to
        themselves in this pass and its path holds nothing Hadoop's Path would normalise (an
        empty, `.` or `..` segment); anything else is qualified by the filesystem.
        """
        text = location.rstrip("/")
        match = _LOCATION.match(text)
        if (
            match
            and match.group("prefix") in self._qualified_prefixes
            and not _UNNORMAL.search(match.group("path"))
        ):
            return text
        qualified = filesystem.qualify(self.spark, location)
        if match and qualified == text:
            self._qualified_prefixes.add(match.group("prefix"))
        return qualified

    def protect(self, table: Table) -> None:
        entries = self.entries
        if table.location:
            entries.append(
                Protected(
                    self.qualify(table.location),
                    (table.database, table.name, None),
                    not table.is_partitioned,
                )
            )
        for part in table.partitions:
            entries.append(
                Protected(
                    self.qualify(part.location),
                    (table.database, table.name, part.spec),
                    True,
                )
            )

    def forget(self, database: str, table: str, spec: str | None = None) -> None:
        """Stop protecting what a dropped table (spec None) or partition referenced."""
        if self._entries is None:
            self._forgotten.append((database, table, spec))
        else:
            self._drop(database, table, spec)

    def _drop(self, database: str, table: str, spec: str | None) -> None:
        self._entries = [
            p
            for p in self._entries or []
            if not (p.owner[0] == database and p.owner[1] == table and (spec is None or p.owner[2] == spec))
        ]

    def blocker(self, path: str) -> Protected | None:
        for p in self.entries:
            if path == p.location or (p.covers_inside and path_within(path, p.location)):
                return p
        return None
