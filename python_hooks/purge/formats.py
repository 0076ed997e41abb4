"""The table formats the Hive purge must not rewrite: Apache Iceberg tables, and Delta Lake tables
registered as plain parquet (a Delta table whose provider is `delta` is purged by delta.py)."""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import filesystem, metastore


def table_format(spark: Any, meta: Any, location: str) -> str | None:
    """`Delta Lake` or `Apache Iceberg` for a table kept in one of those formats, else None (a
    table whose provider is `delta` never gets here: python_hooks/purge/delta.py purges it).

    By the catalog's provider (`iceberg`), by the property Iceberg's Hive catalog sets
    (`table_type` ICEBERG), and by the files: a `_delta_log` directory under the location of a
    table registered as plain parquet (a Delta table exposed to Hive readers) is a Delta table
    all the same."""
    found = meta.properties().get("table_type")
    table_type = str(found.get()).upper() if found.isDefined() else ""
    if metastore.provider(meta) == "iceberg" or table_type == "ICEBERG":
        return "Apache Iceberg"
    if filesystem.exists(spark, f"{location.rstrip('/')}/_delta_log"):
        return "Delta Lake"
    return None


def table_format_refusal(spark: Any, meta: Any, name: str, location: str) -> str | None:
    """Why the purge leaves a Delta Lake or Iceberg table alone, or None for a Hive-format one.

    The purge rewrites a table through a staging table and a swap of locations; a Delta or
    Iceberg table's truth is its log or its metadata files, which a swap would cut it off from
    (and its older versions would keep the ids).  So such a table (an Iceberg table, or a Delta
    table registered as plain parquet, which Delta's own commands cannot reach by its name) fails
    alone, untouched, with what to do."""
    kind = table_format(spark, meta, location)
    if kind is None:
        return None
    truth = "transaction log" if kind == "Delta Lake" else "metadata files"
    return (
        f"{name} is {'a' if kind == 'Delta Lake' else 'an'} {kind} table, which this purge does not"
        f" rewrite (a swap of locations would cut it off its {truth}): it was not purged and nothing"
        f' was changed. Blacklist it (var purge_blacklist: "{name}"), or '
        + (
            f"register its location as a Delta table (`create table ... using delta location '{location}'`),"
            " which the purge purges"
            if kind == "Delta Lake"
            else "put Iceberg's catalog in the session (its runtime jar beside Delta's), which the purge purges"
        )
        + " (docs/formats.md)"
    )
