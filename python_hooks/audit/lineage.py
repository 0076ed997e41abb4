"""Model lineage (the manifest's parent map) and column lineage (sqlglot over compiled SQL).

Column lineage: for each SQL model, each output column and the upstream columns it comes from,
found by sqlglot (dialect spark) over the model's compiled SQL, with the upstream relations'
columns from the Spark catalog (or the yml) so that `select *` and unqualified columns resolve.
Python models get one model-level edge per parent, flagged `lineage_level = 'model'`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.lineage import lineage as sqlglot_lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope

ColumnsOf = Callable[[str], "dict[str, str] | None"]


@dataclass(frozen=True)
class ColumnEdge:
    """One output column of a model and one upstream column it comes from."""

    model_unique_id: str
    column_name: str | None
    source_unique_id: str | None
    source_relation: str | None
    source_column: str | None
    lineage_level: str  # 'column' or 'model'
    is_python_model: bool


def lineage_edges(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (parent, child) edge of the manifest's parent map, sources and seeds included."""
    return sorted(
        {(parent, child) for child, parents in manifest.get("parent_map", {}).items() for parent in parents}
    )


def _norm(name: str | None) -> str:
    return (name or "").replace("`", "").replace('"', "").lower()


def relation_index(manifest: Mapping[str, Any]) -> dict[str, str]:
    """`schema.identifier` (lowercase, unquoted) -> unique_id, for every model, seed, snapshot and source."""
    index: dict[str, str] = {}
    for section in ("nodes", "sources"):
        for unique_id, node in manifest.get(section, {}).items():
            if node.get("resource_type") not in ("model", "seed", "snapshot", "source"):
                continue
            identifier = node.get("identifier") or node.get("alias") or node.get("name")
            index[f"{_norm(node.get('schema'))}.{_norm(identifier)}"] = unique_id
    return index


def _relation_key(table: exp.Table) -> str:
    return f"{_norm(table.db)}.{_norm(table.name)}"


def column_lineage(
    unique_id: str,
    compiled_sql: str,
    relations: Mapping[str, str],
    columns_of: ColumnsOf,
) -> list[ColumnEdge]:
    """The column lineage of one SQL model from its compiled SQL.

    `relations` maps `schema.table` to unique ids (see relation_index); `columns_of(relation)`
    returns {column: type} of an upstream relation, or None when unknown.  An output column
    computed from no column (a literal) gets one row with no source.
    """
    expression = sqlglot.parse_one(compiled_sql, dialect="spark")
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for table in expression.find_all(exp.Table):
        if not table.db:
            continue
        cols = columns_of(_relation_key(table))
        if cols:
            schema.setdefault(_norm(table.db), {})[_norm(table.name)] = {_norm(c): t for c, t in cols.items()}
    qualified = qualify(
        expression,
        schema=schema or None,
        dialect="spark",
        validate_qualify_columns=False,
        identify=False,
    )
    scope = build_scope(qualified)
    edges: list[ColumnEdge] = []
    for column in qualified.named_selects:
        node = sqlglot_lineage(
            column, qualified, schema=schema or None, dialect="spark", scope=scope, copy=False
        )
        sources: set[tuple[str | None, str | None, str | None]] = set()
        for leaf in node.walk():
            if leaf.downstream or not isinstance(leaf.source, exp.Table):
                continue
            if not leaf.source.name:  # a table function such as range(): no upstream relation
                continue
            key = _relation_key(leaf.source)
            source_column = leaf.name.split(".")[-1]
            sources.add((relations.get(key), key, _norm(source_column)))
        if not sources:
            sources.add((None, None, None))
        for source_id, relation, source_column in sorted(sources, key=lambda s: tuple(x or "" for x in s)):
            edges.append(ColumnEdge(unique_id, column, source_id, relation, source_column, "column", False))
    return edges


def model_level_lineage(
    unique_id: str, parents: list[str], relation_of: Callable[[str], str | None]
) -> list[ColumnEdge]:
    """Lineage of a model whose SQL cannot be read (Python models): one edge per parent."""
    return [
        ColumnEdge(unique_id, None, parent, relation_of(parent), None, "model", True)
        for parent in sorted(parents)
    ]
