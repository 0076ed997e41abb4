"""Onboarding: the dataset descriptor written onto many tables in one command.

`dbt run-operation onboard_tables --args '{file: onboarding.yml}'` (macros/purge/onboard.sql)
reads a list of tables and their identifier fields, checks every entry against the metastore
before it changes anything, and writes the descriptor only where it differs.  Cost: one
metastore call per database to read the tables (getTablesByName), one per changed table to write.

A list is a yml file (a list of {table, identifier}, the same under a `tables:` key, or a
mapping table -> identifier) or a csv file with `table` and `identifier` columns (a seed file).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from python_hooks.catalog import metastore, statistics
from python_hooks.catalog.tables import DESCRIPTOR, descriptor_identifier, field_in_schema
from python_hooks.errors import ConfigError, LakehouseError, first_line
from python_hooks.purge.id_table import table_name_parts

EXAMPLE = "tables:\n  - table: tracking.event\n    identifier: metadata.guestid"


def read_list(spark: Any, path: str) -> list[dict[str, Any]]:
    """The entries ({table, identifier}) of a yml or csv list; ConfigError naming the file and
    what is wrong with it otherwise."""
    file = Path(str(path))
    if not file.is_file():
        raise ConfigError(
            f"onboard_tables: {path}: no such file (give the path of a yml or csv list, relative to the"
            " directory dbt runs in). Nothing was changed."
        )
    try:
        if file.suffix.lower() == ".csv":
            with file.open(newline="", encoding="utf-8") as handle:
                reader = csv.DictReader(handle)
                header = [name.strip().lower() for name in reader.fieldnames or []]
                if "table" not in header or "identifier" not in header:
                    raise ConfigError(
                        f"onboard_tables: {path}: its header is {','.join(header) or '(empty)'}; it needs the"
                        " columns table,identifier. Nothing was changed."
                    )
                entries = [{k.strip().lower(): v for k, v in row.items() if k} for row in reader]
        elif file.suffix.lower() in (".yml", ".yaml"):
            entries = _yml_entries(yaml.safe_load(file.read_text(encoding="utf-8")))
        else:
            raise ConfigError(f"onboard_tables: {path}: not a .yml, .yaml or .csv file. Nothing was changed.")
    except (OSError, UnicodeDecodeError, csv.Error, yaml.YAMLError, ValueError) as exc:
        raise ConfigError(
            f"onboard_tables: {path}: {str(exc).splitlines()[0]}. Expected for example:\n{EXAMPLE}\n"
            "Nothing was changed."
        ) from exc
    return [
        {"table": e.get("table"), "identifier": e.get("identifier"), "statistics": e.get("statistics")}
        for e in entries
    ]


def _yml_entries(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, dict) and "tables" in document:
        document = document["tables"]
    if isinstance(document, dict):
        return [{"table": table, "identifier": identifier} for table, identifier in document.items()]
    if isinstance(document, list) and all(isinstance(e, dict) for e in document):
        return document
    raise ValueError("it holds neither a list of {table, identifier} nor a mapping table: identifier")


def descriptor_with(before: str | None, field: str) -> str:
    """The descriptor naming `field`; any other key of the table's current descriptor is kept."""
    try:
        current = json.loads(before) if before else {}
    except ValueError:
        current = {}
    if not isinstance(current, dict):
        current = {}
    spec = current.get("complianceSpec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    spec["identifierField"] = field
    return json.dumps({**current, "complianceSpec": spec})


def plan(
    spark: Any, entries: list[dict[str, Any]], id_table: str | None = None, id_column: str | None = None
) -> list[dict[str, Any]]:
    """Each entry checked against the metastore, in order, and against the id column's type when
    the id table (`id_table`, `id_column`: the purge's vars) exists; nothing is written.

    Each: {entry (1-based), table, identifier (as given), field (the table's own spelling),
    type, before (the current descriptor), descriptor (the one to write), status: added,
    changed, unchanged or refused, error (what is wrong and what to do, for refused)}.  An entry
    repeating an earlier one is left out; one naming another field for the same table is refused.
    """
    rows: list[dict[str, Any]] = []
    first: dict[str, dict[str, Any]] = {}
    wanted: dict[str, list[str]] = defaultdict(list)
    for number, entry in enumerate(entries, 1):
        given = entry.get("table")
        name = str(given if given is not None else "").strip().lower()
        identifier = str(entry.get("identifier") if entry.get("identifier") is not None else "").strip()
        row = {"entry": number, "table": name, "identifier": identifier, "field": None, "type": None}
        row.update(before=None, descriptor=None, status="refused", error=None, properties={})
        row["statistics"] = statistics.wanted(entry.get("statistics"))
        if row["statistics"] is None:
            row["error"] = (
                f"{name}: statistics is {json.dumps(str(entry.get('statistics')))}; give true (the default) or"
                " false (no file statistics of the identifier in a Delta Lake or Iceberg table's metadata)."
            )
        elif table_name_parts(name) is None:
            row["error"] = (
                f"table {json.dumps(given)} must be given as db.table (for example tracking.event)."
            )
        elif name in first:
            earlier = first[name]
            if (earlier["identifier"].lower(), earlier["statistics"]) == (
                identifier.lower(),
                row["statistics"],
            ):
                continue
            row["error"] = (
                f"{name} is listed twice, with {statistics.entry_text(earlier)} (entry {earlier['entry']}) "
                f"and {statistics.entry_text(row)} (entry {number}); keep one."
            )
        else:
            first[name] = row
            database, table = name.split(".")
            if table not in wanted[database]:
                wanted[database].append(table)
        rows.append(row)
    found = _tables_by_name(spark, wanted)
    for row in rows:
        if not row["error"]:
            _check(spark, row, found.get(row["table"]))
    _check_id_type(spark, rows, id_table, id_column)
    return rows


def _check_id_type(
    spark: Any, rows: list[dict[str, Any]], id_table: str | None, id_column: str | None
) -> None:
    """Refuse an identifier that cannot be compared with the id column without a lossy cast."""
    from python_hooks.catalog import tables
    from python_hooks.catalog.column_types import types_comparable

    parts = table_name_parts(id_table)
    if parts is None or not str(id_column or "").strip():
        return
    name = ".".join(parts)
    described = tables.describe_table(spark, *parts)
    if not described["exists"]:
        return
    column = next((c for c in described["columns"] if c.lower() == str(id_column).strip().lower()), None)
    if column is None:
        return
    id_type = described["columns"][column]
    for row in rows:
        if row["status"] != "refused" and row["type"] and not types_comparable(row["type"], id_type):
            row.update(
                status="refused",
                error=f"{row['table']}.{row['field']} is {row['type']} but the id column {name}.{column} is {id_type};"
                " they cannot be compared safely.",
            )


def _tables_by_name(spark: Any, wanted: dict[str, list[str]]) -> dict[str, Any]:
    """{db.table: CatalogTable} of those that exist, one metastore call per database."""
    return {
        f"{database}.{str(meta.identifier().table()).lower()}": meta
        for database, names in wanted.items()
        for meta in metastore.tables_by_name(spark, database, names)
    }


def _check(spark: Any, row: dict[str, Any], meta: Any) -> None:
    name = row["table"]
    if meta is None:
        row["error"] = (
            f"table {name} does not exist; create it first (or declare the descriptor in its model's tblproperties)."
        )
        return
    if str(meta.tableType().name()) == "VIEW":
        row["error"] = f"{name} is a view, which holds no data of its own: onboard the tables it reads."
        return
    from pyspark.sql.types import StructType

    try:  # a Delta Lake table's columns and properties are in its log
        schema = StructType.fromJson(metastore.schema_json(spark, meta))
    except LakehouseError as exc:  # its log cannot be read: refused, as any other bad entry
        row["error"] = first_line(exc)
        return
    resolved = field_in_schema(schema, row["identifier"]) if row["identifier"] else None
    if resolved is None:
        row["error"] = (
            f"{json.dumps(row['identifier'])} is not a column or struct field of {name} "
            f"(columns: {', '.join(f.name for f in schema.fields)}). Give the identifier as a column or a "
            "dotted path such as metadata.guestid."
        )
        return
    current = metastore.table_properties(spark, meta)
    before = current.get(DESCRIPTOR)
    field = ".".join(resolved["path"])
    row.update(field=field, type=resolved["type"], before=before)
    if not row["statistics"]:
        table_format = metastore.table_format(meta)
        row["error"] = statistics.refused(spark, name, table_format)
        if row["error"]:
            return
        wanted = statistics.off_properties(
            table_format, schema.jsonValue(), field, statistics.partition_columns(spark, meta, table_format)
        )
        row["properties"] = {k: v for k, v in wanted.items() if current.get(k) != v}
    if before is not None and descriptor_identifier(before) == field:
        row.update(status="changed" if row["properties"] else "unchanged", descriptor=before)
    else:
        row.update(
            status="changed" if before is not None else "added", descriptor=descriptor_with(before, field)
        )


def apply(spark: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Write the descriptor (and the statistics settings) of every added or changed row:
    {written: [db.table], failed: {db.table: error}} (a table that could not be written does not
    stop the others).  Each format's properties go where its readers look (metastore.set_table_properties)."""
    by_database: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for row in rows:
        if row["status"] in ("added", "changed"):
            database, table = row["table"].split(".")
            by_database[database][table] = {DESCRIPTOR: row["descriptor"], **row["properties"]}
    written, failed = [], {}
    for database, updates in by_database.items():
        for table, error in metastore.set_table_properties(spark, database, updates).items():
            if error is None:
                written.append(f"{database}.{table}")
            else:
                failed[f"{database}.{table}"] = error
    return {"written": written, "failed": failed}
