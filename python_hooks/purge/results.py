"""The purge node's result rows: their columns (defined here only) and the write of its relation.

One row per table and partition per run; `purge_log` appends them.  Never the ids themselves.
The relation is a small `using json` table replaced as a whole (catalog.json_table), so its
columns and types are these; models/purge/_purge__models.yml documents the same columns
(tests/python_hooks/test_column_contracts.py checks that they agree).
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import json_table

RESULT_COLUMNS: list[tuple[str, str]] = [
    ("purge_log_id", "string"),
    ("invocation_id", "string"),
    ("purge_ts", "bigint"),
    ("database_name", "string"),
    ("table_name", "string"),
    ("partition_spec", "string"),
    ("identifier_field", "string"),
    ("state", "string"),
    ("reason", "string"),
    ("old_location", "string"),
    ("new_location", "string"),
    ("backup_table", "string"),
    ("rows_before", "bigint"),
    ("rows_after", "bigint"),
    ("rows_purged", "bigint"),
    ("dry_run", "boolean"),
    ("started_at", "timestamp"),
    ("ended_at", "timestamp"),
]


def replace_results(spark: Any, database: str, table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Make the purge node's relation `database.table` hold exactly `rows`; {ok, error, created}."""
    return json_table.replace_rows(spark, database, table, [list(c) for c in RESULT_COLUMNS], rows)
