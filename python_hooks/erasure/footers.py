"""When a data file's footer statistics prove it holds none of the ids, so it need not be read.

The rule (docs/erasure.md, "Verification of bytes"): a file is skipped only when, for every
row group (parquet) or for the file (ORC), the statistics of the identifier's own leaf column
are present, describe at least one non-null value, and every id lies outside [min, max].  Only
where that comparison means what Spark's `=` means:

- the identifier is an integral column (`tinyint` .. `bigint`) and so is the id column, stored as
  a signed parquet INT32/INT64 (no decimal, no unsigned annotation) or an ORC integer; or
- the identifier is a `string` and so is the id column, stored as a parquet BINARY annotated
  STRING (parquet-mr drops binary statistics written with the old signed ordering) or an ORC
  string written by a writer with ORC-203 (truncated bounds are recorded, and then read);
- the column is found by the exact identifier path (case-insensitively, as Spark resolves it),
  through structs only (no repeated level above it), and only once.

Anything else (no statistics, null-only statistics, a missing column, an ambiguous or repeated
path, floats, decimals, char/varchar, another format, a footer that cannot be read) means: read.
"""

from __future__ import annotations

import bisect
from typing import Any

from python_hooks.catalog import files
from python_hooks.catalog.column_types import INTEGRAL
from python_hooks.catalog.jvm import jvm as jvm_view


def id_kind(identifier_type: str, id_type: str) -> str | None:
    """`int` or `string` when footer statistics may prune for these two types, else None."""
    left, right = (identifier_type or "").lower(), (id_type or "").lower()
    if left in INTEGRAL and right in INTEGRAL:
        return "int"
    if left == "string" and right == "string":
        return "string"
    return None


def sortable_ids(ids: list[Any], kind: str | None) -> list[Any] | None:
    """The ids as sorted comparable keys (ints, or UTF-8 bytes), or None when pruning is off."""
    if kind == "int" and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return sorted(set(ids))
    if kind == "string" and all(isinstance(i, str) for i in ids):
        return sorted({i.encode("utf-8") for i in ids})
    return None


def range_may_hold(low: Any, high: Any, ids: list[Any]) -> bool:
    """Whether some id of the sorted `ids` lies in [low, high] (True when a bound is unknown)."""
    if low is None or high is None:
        return True
    index = bisect.bisect_left(ids, low)
    return index < len(ids) and ids[index] <= high


def _parquet_column(schema: Any, path: list[str]) -> tuple[int, Any] | None:
    """(index, descriptor) of the one leaf column at `path` (case-insensitive), None otherwise."""
    wanted = [p.lower() for p in path]
    columns = schema.getColumns()
    found = []
    for index in range(columns.size()):
        column = columns.get(index)
        if [str(p).lower() for p in column.getPath()] == wanted:
            found.append((index, column))
    if len(found) != 1 or found[0][1].getMaxRepetitionLevel() != 0:
        return None
    return found[0]


def _parquet_bound(value: Any, kind: str) -> Any:
    if kind == "int":
        return int(value)
    return bytes(value.getBytes())


def parquet_may_hold(spark: Any, status: Any, path: list[str], kind: str, ids: list[Any]) -> bool:
    """False only when the footer proves the parquet file holds none of `ids` (see the module rule)."""
    with files.parquet_footer_reader(spark, status) as reader:
        footer = reader.getFooter()
        found = _parquet_column(footer.getFileMetaData().getSchema(), path)
        if found is None:
            return True
        index, column = found
        primitive = column.getPrimitiveType()
        physical = str(primitive.getPrimitiveTypeName().name())
        annotation = primitive.getLogicalTypeAnnotation()
        annotation = str(annotation.toString()) if annotation is not None else ""
        if kind == "int" and not (
            physical in ("INT32", "INT64")
            and (annotation == "" or annotation.startswith("INTEGER(") and annotation.endswith("true)"))
        ):
            return True
        if kind == "string" and not (physical == "BINARY" and annotation == "STRING"):
            return True
        blocks = footer.getBlocks()
        for b in range(blocks.size()):
            block = blocks.get(b)
            if int(block.getRowCount()) == 0:
                continue
            chunk = block.getColumns().get(index)
            stats = chunk.getStatistics()
            if stats is None or stats.isEmpty() or not stats.hasNonNullValue():
                return True
            low = _parquet_bound(stats.genericGetMin(), kind)
            high = _parquet_bound(stats.genericGetMax(), kind)
            if range_may_hold(low, high, ids):
                return True
        return False


def orc_may_hold(spark: Any, status: Any, path: list[str], kind: str, ids: list[Any]) -> bool:
    """False only when the ORC file's statistics prove it holds none of `ids` (see the module rule)."""
    with files.orc_footer_reader(spark, status) as reader:
        if int(reader.getNumberOfRows()) == 0:
            return False
        current = reader.getSchema()
        for part in path:
            if str(current.getCategory().name()) != "STRUCT":
                return True
            names = [str(n).lower() for n in current.getFieldNames()]
            if names.count(part.lower()) != 1:
                return True
            current = current.getChildren().get(names.index(part.lower()))
        category = str(current.getCategory().name())
        if kind == "int" and category not in ("BYTE", "SHORT", "INT", "LONG"):
            return True
        if kind == "string":
            fixed = jvm_view(spark).org.apache.orc.OrcFile.WriterVersion.ORC_203
            if category != "STRING" or not reader.getWriterVersion().includes(fixed):
                return True
        stats = reader.getStatistics()[int(current.getId())]
        if int(stats.getNumberOfValues()) == 0:
            return True  # null-only: read it (the rule never infers from nulls)
        low, high = stats.getMinimum(), stats.getMaximum()
        if low is None or high is None:
            return True
        if kind == "int":
            return range_may_hold(int(low), int(high), ids)
        return range_may_hold(str(low).encode("utf-8"), str(high).encode("utf-8"), ids)


def may_hold(
    spark: Any,
    status: Any,
    storage_format: str | None,
    path: list[str],
    kind: str | None,
    ids: list[Any] | None,
) -> bool:
    """Whether a file must be read: False only when its footer proves it holds none of `ids`."""
    if kind is None or ids is None or storage_format not in ("parquet", "orc"):
        return True
    if not ids:
        return False
    try:
        if storage_format == "parquet":
            return parquet_may_hold(spark, status, path, kind, ids)
        return orc_may_hold(spark, status, path, kind, ids)
    except Exception:  # noqa: BLE001 - a footer that cannot be read: the file is read instead
        return True
