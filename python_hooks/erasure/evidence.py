"""The evidence rows a certificate rests on, in one canonical text, and its SHA-256 digest.

A certificate names what it rests on (its *selection*): the request, the verification, the purge
runs that served the request, the retention attempts that deleted its copies, and the columns of
each table as they were read.  `evidence_text` reads those rows again and writes them as lines,
in this order of parts:

    1. purge_log               the rows of those purge runs          by purge_log_id
    2. retention_log           the rows of those attempts            by attempt_id
    3. journal                 the purge journal's entries of those runs, by run then table
    4. verification_run        the verification's row of erasure_verification_runs
    5. verification_locations  its rows of erasure_verification_locations, by location
    6. verification_findings   its rows for the request in erasure_verification_findings, by location
    7. verification_request    its row for the request in erasure_verification

Each line is `<part>` TAB `<row as JSON>` LF; the JSON has its keys sorted, no spaces
(`separators=(",", ":")`), UTF-8; a timestamp is the UTC instant `YYYY-MM-DDTHH:MM:SS.ffffffZ`
(read as `unix_micros`, so the reader's time zone plays no part), a decimal its plain text, a
missing value `null`; rows that tie on the key are ordered by their JSON.  The digest is the
SHA-256 of the whole text: `sha256sum <request>.evidence.txt` gives it too.  No part holds an id:
the tables hold counts, locations, names and times.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from python_hooks.catalog import metastore
from python_hooks.catalog.journal import Journal
from python_hooks.catalog.literals import string_literal
from python_hooks.errors import NotFoundError, first_line

PARTS = (
    "purge_log",
    "retention_log",
    "journal",
    "verification_run",
    "verification_locations",
    "verification_findings",
    "verification_request",
)
# part -> (table, key column, the selection that picks its rows)
TABLE_PARTS = {
    "purge_log": ("purge_log", "purge_log_id"),
    "retention_log": ("retention_log", "attempt_id"),
    "verification_run": ("erasure_verification_runs", "verification_id"),
    "verification_locations": ("erasure_verification_locations", "location"),
    "verification_findings": ("erasure_verification_findings", "location"),
    "verification_request": ("erasure_verification", "request_id"),
}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def canonical_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        instant = value if value.tzinfo else value.astimezone()
        return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): canonical_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical_value(v) for v in value]
    return str(value)


def micros_text(micros: int | None) -> str | None:
    """Epoch microseconds as the canonical UTC text."""
    if micros is None:
        return None
    return (EPOCH + timedelta(microseconds=int(micros))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def line(part: str, row: dict[str, Any]) -> str:
    return (
        part
        + "\t"
        + json.dumps(canonical_value(row), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    )


def _select(
    spark: Any, database: str, table: str, columns: list[str] | None, where: str
) -> tuple[list[str], list[dict]]:
    """The rows of a table (timestamps as canonical UTC text) and the columns read."""
    from pyspark.sql.types import TimestampType

    if not metastore.table_exists(spark, database, table):
        return list(columns or []), []
    frame = metastore.read_table(spark, database, table)
    types = {f.name.lower(): f for f in frame.schema.fields}
    wanted = columns or [f.name for f in frame.schema.fields]
    missing = [c for c in wanted if c.lower() not in types]
    if missing:
        raise NotFoundError(
            f"{database}.{table} has no column {', '.join(missing)} any more: the rows the certificate rests on cannot be read as they were"
        )
    timestamps = {c for c in wanted if isinstance(types[c.lower()].dataType, TimestampType)}
    selected = ", ".join(
        f"unix_micros({metastore.quote(c)}) as {metastore.quote(c)}"
        if c in timestamps
        else metastore.quote(c)
        for c in wanted
    )
    rows = spark.sql(
        f"select {selected} from {metastore.table_name(database, table)} where {where}"
    ).collect()
    found = []
    for row in rows:
        values = row.asDict()
        found.append({c: (micros_text(values[c]) if c in timestamps else values[c]) for c in wanted})
    return list(wanted), found


def _in_list(column: str, values: list[str]) -> str:
    if not values:
        return "false"
    quoted = ", ".join(string_literal(str(v)) for v in values)
    return f"{metastore.quote(column)} in ({quoted})"


def _where(part: str, selection: dict[str, Any]) -> str:
    if part == "purge_log":
        return _in_list("invocation_id", selection.get("purge_invocation_ids") or [])
    if part == "retention_log":
        return _in_list("attempt_id", selection.get("retention_attempt_ids") or [])
    verification = _in_list("verification_id", [selection["verification_id"]])
    if part in ("verification_findings", "verification_request"):
        return verification + " and " + _in_list("request_id", [selection["request_id"]])
    return verification


def journal_rows(spark: Any, invocation_ids: list[str]) -> list[dict[str, Any]]:
    """The journal's entries of those purge runs, as plain rows."""
    wanted = set(invocation_ids)
    rows = []
    for entry in Journal(spark).read_entries():
        if entry.intent.invocation_id in wanted:
            rows.append(
                {
                    "run": entry.intent.run,
                    "table": entry.intent.name,
                    "intent": asdict(entry.intent),
                    "outcome": asdict(entry.outcome) if entry.outcome is not None else None,
                    "logged": entry.logged,
                }
            )
    return sorted(rows, key=lambda r: (r["run"], r["table"]))


def evidence_text(
    spark: Any, schema: str, selection: dict[str, Any], tolerant: bool = False
) -> tuple[str, dict[str, Any]]:
    """(the canonical text, {part: {rows, sha256, columns, error}}) of the rows `selection` names.

    `selection`: {request_id, verification_id, purge_invocation_ids, retention_attempt_ids,
    columns: {part: [column]} (absent: every column, as the certificate is written)}.
    `tolerant` (the re-check): a journal that cannot be read any more (a file edited behind the
    filesystem's checksum) is one `error` row of its part, so the part is named as changed.
    """
    lines: list[str] = []
    parts: dict[str, Any] = {}
    columns = selection.get("columns") or {}
    for part in PARTS:
        error = None
        if part == "journal":
            try:
                rows = journal_rows(spark, selection.get("purge_invocation_ids") or [])
            except Exception as exc:  # noqa: BLE001 - named as the part's error when tolerant
                if not tolerant:
                    raise
                error = f"the journal cannot be read: {first_line(exc)}"
                rows = [{"run": "", "table": "", "error": error}]
            used = ["run", "table", "intent", "outcome", "logged"]
            key = ("run", "table")
        else:
            table, key_column = TABLE_PARTS[part]
            used, rows = _select(spark, schema, table, columns.get(part), _where(part, selection))
            key = (key_column,)
        keyed = [(tuple(str(r.get(k)) for k in key), line(part, r)) for r in rows]
        ordered = [text for _, text in sorted(keyed)]
        lines += ordered
        parts[part] = {
            "rows": len(ordered),
            "sha256": hashlib.sha256("".join(t + "\n" for t in ordered).encode("utf-8")).hexdigest(),
            "columns": used,
            "error": error,
        }
    return "".join(t + "\n" for t in lines), parts


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
