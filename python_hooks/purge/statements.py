"""One table's rendered statements, as the engine runs them.

The macro `purge_render_table` (macros/purge/purge_render.sql) returns a dict per table and one
per partition; `TableStatements.of` turns it into the types below and refuses a dict whose keys
are not exactly the fields of these types, naming the macro: a key renamed or added on one side
only fails the node before anything runs, instead of running with a statement missing.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from python_hooks.errors import LakehouseError

MACRO = "purge_render_table (macros/purge/purge_render.sql)"


@dataclass(frozen=True)
class PartitionStatements:
    rewrite: str
    add_backup: str
    drop_backup: str
    swap: str
    before_swap: tuple[str, ...] = ()

    @classmethod
    def of(cls, rendered: dict[str, Any], where: str) -> PartitionStatements:
        _check_keys(cls, rendered, where)
        return cls(
            rewrite=_text(rendered["rewrite"]),
            add_backup=_text(rendered["add_backup"]),
            drop_backup=_text(rendered["drop_backup"]),
            swap=_text(rendered["swap"]),
            before_swap=tuple(_text(s) for s in rendered["before_swap"] or [] if _text(s)),
        )


@dataclass(frozen=True)
class TableStatements:
    """One table's rendered statements; `partitions` by partition path ('' unpartitioned)."""

    create_staging: str
    create_backup: str
    add_backup_partitions: str
    rewrite: str
    rewrite_files: str
    drop_staging: str
    drop_backup: str
    partitions: dict[str, PartitionStatements]
    # every partition's swap is the default ALTER: the engine makes them in one metastore call
    swap_in_one_call: bool = False
    # the properties of the staging table and of the backup, each while its `create table ... like`
    # is the package's own (else None): the engine makes it as one catalog call
    create_staging_properties: dict[str, str] | None = None
    create_backup_properties: dict[str, str] | None = None

    @classmethod
    def of(cls, rendered: dict[str, Any], table: str = "") -> TableStatements:
        """The statements `purge_render_table` rendered for `table`; a missing or extra key is refused."""
        where = f"table {table}" if table else "a table"
        _check_keys(cls, rendered, where)
        flags = ("partitions", "swap_in_one_call", "create_staging_properties", "create_backup_properties")
        values = {k: _text(v) for k, v in rendered.items() if k not in flags}
        parts = {
            str(spec): PartitionStatements.of(p, f"{where}, partition {spec or '(unpartitioned)'}")
            for spec, p in rendered["partitions"].items()
        }
        return cls(
            **values,
            partitions=parts,
            swap_in_one_call=rendered["swap_in_one_call"] is True,
            create_staging_properties=_properties(rendered["create_staging_properties"]),
            create_backup_properties=_properties(rendered["create_backup_properties"]),
        )


def _properties(rendered: Any) -> dict[str, str] | None:
    """A rendered dict of table properties as strings, or None (rendered as none or empty text)."""
    if not isinstance(rendered, dict):
        return None
    return {str(k): str(v) for k, v in rendered.items()}


def _check_keys(kind: type, rendered: dict[str, Any], where: str) -> None:
    expected = {f.name for f in fields(kind)}
    given = set(rendered)
    missing, extra = sorted(expected - given), sorted(given - expected)
    if missing or extra:
        raise LakehouseError(
            f"The statements {MACRO} rendered for {where} do not match the engine's {kind.__name__}"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; not expected: {', '.join(extra)}" if extra else "")
            + ". An overriding macro must return exactly the keys of the package's own. Nothing was run."
        )


def _text(value: Any) -> str:
    return str(value).strip() if value is not None else ""
