"""The table-pattern grammar every capability selects tables with (Gobblin's whitelist grammar:
`db`, `db.table`, `db*`, `db.table*`, case-insensitive).  The macros parse and validate the vars
(macros/common/table_patterns.sql, parse_table_patterns); Python matches with this one class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TablePattern:
    """One entry of a whitelist, blacklist or scope."""

    database: str
    table: str | None
    prefix: bool
    text: str

    @classmethod
    def of(cls, parsed: dict[str, Any]) -> TablePattern:
        """From macros/common/table_patterns.sql's parse_table_patterns."""
        return cls(
            str(parsed["database"]), parsed.get("table"), bool(parsed.get("prefix")), str(parsed["text"])
        )

    @classmethod
    def parse(cls, text: str) -> TablePattern:
        """From one entry's text, as a seed row holds it (already validated by the macros)."""
        body = text.strip().lower()
        prefix = body.endswith("*")
        body = body.rstrip("*")
        database, _, table = body.partition(".")
        return cls(database, table if "." in body else None, prefix, text)

    def matches(self, database: str, table: str) -> bool:
        db, tb = database.lower(), table.lower()
        if self.table is None:
            return db.startswith(self.database) if self.prefix else db == self.database
        if db != self.database:
            return False
        return tb.startswith(self.table) if self.prefix else tb == self.table

    def may_match_database(self, database: str) -> bool:
        if self.table is None and self.prefix:
            return database.lower().startswith(self.database)
        return database.lower() == self.database


def in_scope(scope: list[TablePattern] | None, database: str, table: str) -> bool:
    """Whether a table is in a scope; a blank scope holds everything."""
    return not scope or any(p.matches(database, table) for p in scope)
