"""Whether a Delta Lake or Iceberg table's metadata keeps file statistics of its identifier.

Both formats keep, for every data file, the smallest and largest value of its columns in the
table's metadata (Delta's `_delta_log` entries, Iceberg's manifests), apart from the data. A purge
rewrites the data files, but the metadata of the older versions keeps the purged ids as bounds
until it expires (docs/formats.md). Onboarding with `statistics: false` turns them off for the
identifier, and marks the table so (`compliance.identifier_statistics` = `none`); pii_coverage
then flags a marked table whose identifier gets statistics again (`kept`).

- Delta: `delta.dataSkippingStatsColumns`, the columns that get statistics, set to every other
  column of a type Delta keeps them for (a partition column is never listed: its value is in the
  log as a partition value, statistics or not);
- Iceberg: `write.metadata.metrics.column.<identifier>` = `none`.  Without it, a column of the
  table's sort order keeps `truncate(16)` bounds even when `write.metadata.metrics.default` is
  `none` (Iceberg's MetricsConfig promotes it): the sort order is read from the metastore, where
  Iceberg's Hive catalog writes it (`default-sort-order`, beside `current-schema`).
"""

from __future__ import annotations

import json
import re
from typing import Any

MARKER = "compliance.identifier_statistics"
DELTA_COLUMNS = "delta.dataSkippingStatsColumns"
DELTA_COUNT = "delta.dataSkippingNumIndexedCols"
DELTA_DEFAULT_COUNT = 32
ICEBERG_DEFAULT = "write.metadata.metrics.default"

# the types whose smallest and largest values Delta keeps (and accepts in dataSkippingStatsColumns)
_DELTA_TYPES = (
    "byte",
    "short",
    "integer",
    "long",
    "float",
    "double",
    "decimal",
    "string",
    "date",
    "timestamp",
)


def iceberg_column(identifier: str) -> str:
    return f"write.metadata.metrics.column.{identifier}"


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quoted(path: list[str]) -> str:
    """A field path as Delta's property names it: a part other than a plain ASCII name in backticks."""
    return ".".join(p if _PLAIN.fullmatch(p) else "`" + p.replace("`", "``") + "`" for p in path)


def _delta_leaves(data_type: dict[str, Any], prefix: list[str], identifier: list[str]) -> list[str]:
    """The paths (quoted) of the struct's leaf fields of a type Delta keeps statistics for, the
    identifier's left out (Delta refuses a struct in the list that holds a field of another type)."""
    found = []
    for field in data_type.get("fields", []):
        path = [*prefix, field["name"]]
        kind = field["type"]
        lowered = [p.lower() for p in path]
        if lowered == identifier:
            continue
        if isinstance(kind, dict) and kind.get("type") == "struct":
            found += _delta_leaves(kind, path, identifier)
        elif (
            isinstance(kind, str) and kind.split("(")[0] in _DELTA_TYPES or str(kind).startswith("timestamp")
        ):
            found.append(_quoted(path))
    return found


def off_properties(
    table_format: str, schema: dict[str, Any], identifier: str, partition_columns: list[str]
) -> dict[str, str]:
    """The table properties that turn the identifier's statistics off (Spark's schema as JSON)."""
    if table_format == "iceberg":
        return {iceberg_column(identifier): "none", MARKER: "none"}
    partitions = {c.lower() for c in partition_columns}
    wanted = identifier.lower().split(".")
    columns = [
        c for c in _delta_leaves(schema, [], wanted) if c.split(".")[0].strip("`").lower() not in partitions
    ]
    # an empty list is refused by Delta; a table whose only other columns are partitions keeps
    # statistics on none of its columns by counting none
    if not columns:
        return {DELTA_COUNT: "0", MARKER: "none"}
    return {DELTA_COLUMNS: ",".join(columns), MARKER: "none"}


def _names(listed: str) -> list[str]:
    return [c.strip().replace("`", "").lower() for c in listed.split(",") if c.strip()]


def kept(table_format: str, properties: dict[str, str], fields: list[str], identifier: str) -> str | None:
    """Why the table's metadata still keeps statistics of `identifier`, or None when it keeps none
    (`fields`: the table's field paths in schema order, as coverage.field_paths gives them)."""
    lowered = {k.lower(): v for k, v in properties.items()}
    wanted = identifier.lower()
    if table_format == "iceberg":
        column = lowered.get(iceberg_column(wanted))
        if column is not None:
            return None if column.strip().lower() == "none" else f"{iceberg_column(identifier)} is {column}"
        default = lowered.get(ICEBERG_DEFAULT, "truncate(16)")
        if default.strip().lower() == "none":
            return _iceberg_sorted(lowered, identifier)
        return f"{iceberg_column(identifier)} is not set, and {ICEBERG_DEFAULT} is {default}"
    if table_format != "delta":
        return None
    listed = lowered.get(DELTA_COLUMNS.lower())
    if listed is not None:
        for name in _names(listed):
            if wanted == name or wanted.startswith(name + "."):
                return f"{DELTA_COLUMNS} lists {name}"
        return None
    # without the list, Delta keeps statistics of the first N data columns: the identifier's
    # position among them is not worked out here (partition columns are not counted, nested
    # fields are), so it counts as kept unless N is 0
    count = lowered.get(DELTA_COUNT.lower())
    if count is not None and count.strip() == "0":
        return None
    return (
        f"{DELTA_COLUMNS} is not set, and Delta keeps statistics of the first"
        f" {count if count is not None else DELTA_DEFAULT_COUNT} columns"
    )


ICEBERG_SCHEMA = "current-schema"
ICEBERG_SORT_ORDER = "default-sort-order"


def _iceberg_sorted(properties: dict[str, str], identifier: str) -> str | None:
    """Why an Iceberg table whose default keeps no statistic still keeps the identifier's (it is
    in the sort order, or the metastore does not say whether it is), or None."""
    if ICEBERG_SCHEMA not in properties:
        return (
            f"{iceberg_column(identifier)} is not set, and the metastore does not hold the table's schema and"
            " sort order (Iceberg keeps bounds of a sort column whatever its default)"
        )
    order = properties.get(ICEBERG_SORT_ORDER)
    if order is None:
        return None  # Iceberg writes the sort order beside the schema when the table has one
    try:
        field = _iceberg_field_id(json.loads(properties[ICEBERG_SCHEMA]), identifier.lower().split("."))
        sources = {f.get("source-id") for f in json.loads(order).get("fields", [])}
    except (ValueError, AttributeError):
        field, sources = None, set()
    if field is None:
        return (
            f"{iceberg_column(identifier)} is not set, and the table's sort order cannot be told apart from"
            f" {identifier} (Iceberg keeps bounds of a sort column whatever its default)"
        )
    if field not in sources:
        return None
    return (
        f"{iceberg_column(identifier)} is not set, and {identifier} is in the table's sort order, whose"
        f" columns Iceberg keeps bounds of (truncate(16)) whatever {ICEBERG_DEFAULT} says"
    )


def _iceberg_field_id(struct: dict[str, Any], path: list[str]) -> int | None:
    """The field id of `path` in an Iceberg schema (as JSON), or None."""
    for field in struct.get("fields", []):
        if str(field.get("name", "")).lower() == path[0]:
            if len(path) == 1:
                return field.get("id")
            kind = field.get("type")
            return _iceberg_field_id(kind, path[1:]) if isinstance(kind, dict) else None
    return None


def wanted(value: Any) -> bool | None:
    """An entry's `statistics` (true when absent), or None when it is neither true nor false."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    if isinstance(value, bool):
        return value
    return {"true": True, "yes": True, "false": False, "no": False}.get(str(value).strip().lower())


def entry_text(row: dict[str, Any]) -> str:
    """An onboarding entry's identifier, and its `statistics: false`, as an error names them."""
    return json.dumps(row["identifier"]) + ("" if row["statistics"] else " and statistics: false")


def refused(spark: Any, name: str, table_format: str) -> str | None:
    """Why `statistics: false` is refused for a table of this format, or None: checked before
    anything is written, as every onboarding check is."""
    from python_hooks.catalog.iceberg import in_session

    if table_format == "iceberg" and not in_session(spark):
        return (
            f"{name} is an Apache Iceberg table, whose statistics settings are written through Iceberg's"
            " catalog, which is not in this session: put Iceberg's runtime jar beside Delta's (docs/formats.md)"
        )
    if table_format in ("delta", "iceberg"):
        return None
    return (
        f"{name} is a {table_format} table: statistics: false is for Delta Lake and Iceberg tables, whose"
        " metadata keeps their files' statistics apart from the rows (a parquet or ORC file keeps its own"
        " with its rows, and the purge rewrites it). Leave statistics out for this table."
    )


def partition_columns(spark: Any, meta: Any, table_format: str) -> list[str]:
    """A Delta Lake table's partition columns (its log's: its metastore entry lists none)."""
    if table_format != "delta":  # Iceberg's setting names the one column
        return []
    database, table = str(meta.identifier().database().get()), str(meta.identifier().table())
    return [str(c) for c in spark.sql(f"describe detail `{database}`.`{table}`").first().partitionColumns]
