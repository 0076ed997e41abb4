"""Coverage: which tables may hold identifiers without being onboarded for the purge.

Two sources of evidence, both cheap at hundreds of tables:

- the catalog: every table of the given databases with its nested schema, its descriptor and
  its side-table registration, in one metastore call per database (`getTablesByName`), and the
  field paths whose names match the identifier names in use or the `pii_column_patterns`;
- the project's own lineage (the audit tables `dbt_lineage_edges` and `dbt_nodes`): the
  relations downstream of an onboarded table.

Which tables are selected, onboarded or excepted is decided by the macros
(macros/erasure/coverage.sql), with the pattern grammar of macros/common/table_patterns.sql.
Nothing here reads a row of a user's table: only the metastore, and a Delta Lake table's latest
schema and properties from its log; no id value is ever read.
"""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict, deque
from typing import Any

from python_hooks.catalog import metastore, side_tables, statistics
from python_hooks.catalog.tables import DESCRIPTOR, descriptor_identifier
from python_hooks.errors import LakehouseError, result

# the nodes whose relations hold data (tests, macros, exposures hold none)
DATA_NODES = ("model", "seed", "snapshot", "source")


def field_paths(schema: Any, prefix: str = "") -> list[str]:
    """Every column and nested field of a Spark schema (a StructType or its JSON dict) as a path.

    Struct fields are joined with `.` (`metadata.guestid`); the elements of an array or the values
    of a map are written `[]` (`items[].guestid`), so a path names exactly where the field is.
    """
    if hasattr(schema, "jsonValue"):
        schema = schema.jsonValue()
    found: list[str] = []
    for field in schema.get("fields", []):
        path = f"{prefix}{field['name']}"
        found.append(path)
        found.extend(_nested_paths(field["type"], path))
    return found


def _nested_paths(data_type: Any, path: str) -> list[str]:
    if not isinstance(data_type, dict):
        return []
    kind = data_type.get("type")
    if kind == "struct":
        return field_paths(data_type, f"{path}.")
    if kind == "array":
        return _nested_paths(data_type.get("elementType"), f"{path}[]")
    if kind == "map":
        return _nested_paths(data_type.get("valueType"), f"{path}[]")
    return []


def leaf_name(path: str) -> str:
    """The last name of a field path, lower case: `metadata.guestid` -> `guestid`."""
    return re.split(r"[.\[\]]+", path.strip("`").rstrip("[]"))[-1].strip("`").lower()


def compile_patterns(patterns: Any) -> list[tuple[str, re.Pattern[str]]]:
    """`pii_column_patterns` as (text, compiled regex): case-insensitive globs (`*email*`,
    `*_ssn`), or a regex after `re:` (`re:^(e_?mail|phone)$`), each matched against a field's
    name and against its whole path.  Raises LakehouseError naming a bad entry."""
    if patterns in (None, ""):
        return []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, (list, tuple)):
        raise LakehouseError(
            f"Var pii_column_patterns must be a list of globs or `re:` regexes, got {patterns!r}"
        )
    compiled = []
    for raw in patterns:
        text = str(raw).strip()
        if not text:
            continue
        source = text[3:] if text.startswith("re:") else fnmatch.translate(text)
        try:
            compiled.append((text, re.compile(source, re.IGNORECASE)))
        except re.error as exc:
            raise LakehouseError(
                f"Var pii_column_patterns has an entry {text!r} that is not a valid regex ({exc}). "
                "Give globs such as '*email*' or regexes prefixed with 're:' such as 're:^e_?mail$'."
            ) from None
    return compiled


def matching_fields(
    paths: list[str], names: list[str], patterns: list[tuple[str, re.Pattern[str]]]
) -> list[str]:
    """The paths whose leaf name is one of `names` (case-insensitive) or that a pattern matches
    (on the leaf name or on the path without its `[]` markers)."""
    wanted = {n.strip().lower() for n in names if n and n.strip()}
    found = []
    for path in paths:
        leaf = leaf_name(path)
        plain = path.replace("[]", "")
        if leaf in wanted or any(p.fullmatch(leaf) or p.fullmatch(plain) for _, p in patterns):
            found.append(path)
    return found


def _group(tables: list[Any]) -> dict[str, list[str]]:
    by_database: dict[str, list[str]] = defaultdict(list)
    for database, table in tables:
        name = str(table).lower()
        if name not in by_database[str(database).lower()]:
            by_database[str(database).lower()].append(name)
    return by_database


def describe_tables(spark: Any, tables: list[Any]) -> list[dict[str, Any]]:
    """The tables given as [[database, table], ...] that exist, from the metastore.

    One `getTablesByName` per database (Hive's getTableObjectsByName: one metastore round trip
    whatever the number of tables).  A Delta Lake table keeps its columns and properties in its
    own log, not in its metastore entry: those are read from its latest version, one read each.
    Each: {database, table, table_id, is_view, side_table (True for a registered side table of
    this project), descriptor, identifier (its complianceSpec.identifierField, None when it has
    none or a bad one), fields: [path], statistics_kept (for a table onboarded with statistics off
    for its identifier, why its metadata still keeps them, else None: catalog.statistics)}.
    """
    found = []
    for database, names in sorted(_group(tables).items()):
        for meta in metastore.tables_by_name(spark, database, names):
            name = str(meta.identifier().table()).lower()
            table_type = str(meta.tableType().name())
            fields = field_paths(metastore.schema_json(spark, meta))  # first: names an unreadable log
            properties = {} if table_type == "VIEW" else metastore.table_properties(spark, meta)
            descriptor = properties.get(DESCRIPTOR)
            identifier = descriptor_identifier(descriptor)
            kept = None
            if identifier and properties.get(statistics.MARKER) == "none":
                kept = statistics.kept(metastore.table_format(meta), properties, fields, identifier)
            registered = side_tables.registration(
                metastore.Table(
                    database, name, table_type, "", [], properties=metastore.registration_properties(meta)
                )
            )
            found.append(
                {
                    "database": database,
                    "table": name,
                    "table_id": f"{database}.{name}",
                    "is_view": table_type == "VIEW",
                    "side_table": registered is not None,
                    "descriptor": descriptor,
                    "identifier": identifier,
                    "fields": fields,
                    "statistics_kept": kept,
                }
            )
    return sorted(found, key=lambda t: t["table_id"])


def match_columns(
    spark: Any, tables: list[dict[str, Any]], names: list[str], patterns: Any
) -> dict[str, list[str]]:
    """{table_id: matching field paths} for the tables (as describe_tables gives them) with any.

    Pure Python over what describe_tables read (`spark` is the python_hook convention, unused)."""
    compiled = compile_patterns(patterns)
    matched = {}
    for table in tables:
        paths = matching_fields(table.get("fields") or [], names, compiled)
        if paths:
            matched[table["table_id"]] = paths
    return matched


def _relation(name: Any) -> str:
    return str(name or "").replace("`", "").replace('"', "").strip().lower()


def lineage_graph(spark: Any, edges_relation: str, nodes_relation: str) -> dict[str, Any]:
    """The latest invocation's edges and every node's current relation, from the audit tables.

    {ok, error, invocation_id, edges: [[parent, child]], nodes: {unique_id: {relation,
    resource_type, tags}}}; not ok when the audit tables cannot be read (never loaded).
    """
    latest_edges = f"""
        with latest as (
            select max_by(invocation_id, loaded_at) as invocation_id from {edges_relation}
        )
        select e.invocation_id, e.parent_unique_id, e.child_unique_id
        from {edges_relation} as e
        inner join latest as l on e.invocation_id = l.invocation_id
    """
    current_nodes = f"""
        select unique_id, resource_type, relation_name, tags from (
            select *, row_number() over (partition by unique_id order by recorded_at desc) as version
            from {nodes_relation}
        ) where version = 1 and change != 'removed'
    """
    try:
        edge_rows = spark.sql(latest_edges).collect()
        node_rows = spark.sql(current_nodes).collect()
    except Exception as exc:  # noqa: BLE001 - no audit yet: the caller says so
        return result(exc, invocation_id=None, edges=[], nodes={})
    nodes = {
        str(r.unique_id): {
            "relation": _relation(r.relation_name) or None,
            "resource_type": str(r.resource_type or r.unique_id.split(".")[0]),
            "tags": [str(t) for t in (r.tags or [])],
        }
        for r in node_rows
    }
    return result(
        invocation_id=str(edge_rows[0].invocation_id) if edge_rows else None,
        edges=[[str(r.parent_unique_id), str(r.child_unique_id)] for r in edge_rows],
        nodes=nodes,
    )


def downstream(
    edges: list[Any], nodes: dict[str, Any], onboarded: list[str], exempt_tags: list[str] | None = None
) -> list[dict[str, Any]]:
    """The relations downstream (at any distance) of an onboarded table, with the onboarded
    tables they descend from: [{table_id, unique_id, upstream: [table_id]}].

    Lineage goes through every node (views, ephemeral models, tests are walked through) but only
    models, seeds and snapshots with a relation are listed, and not those tagged with one of
    `exempt_tags` (the product's own logs and audit tables hold names and counts, never ids).
    """
    onboarded_set = {_relation(t) for t in onboarded}
    exempt = {t.lower() for t in exempt_tags or []}
    children: dict[str, list[str]] = defaultdict(list)
    for parent, child in edges:
        children[str(parent)].append(str(child))
    origins: dict[str, set[str]] = defaultdict(set)
    for unique_id, node in nodes.items():
        relation = node.get("relation")
        if relation not in onboarded_set:
            continue
        queue, seen = deque([unique_id]), {unique_id}
        while queue:
            for child in children.get(queue.popleft(), []):
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
                    origins[child].add(relation)
    found = []
    for unique_id, upstream in origins.items():
        node = nodes.get(unique_id) or {}
        relation = node.get("relation")
        if (
            node.get("resource_type") not in DATA_NODES
            or not relation
            or "." not in relation
            or relation in onboarded_set
            or exempt & {t.lower() for t in node.get("tags") or []}
        ):
            continue
        found.append({"table_id": relation, "unique_id": unique_id, "upstream": sorted(upstream)})
    return sorted(found, key=lambda r: r["table_id"])


def manifest_lineage(manifest_nodes: list[dict[str, Any]] | None) -> tuple[list[list[str]], dict[str, Any]]:
    """The running command's own project as lineage: (edges, nodes) from its manifest's nodes and
    sources ({unique_id, resource_type, relation_name, tags, depends_on: [unique_id], descriptor}),
    built or not yet: the models a `dbt build` is about to create are judged with the others."""
    edges: list[list[str]] = []
    nodes: dict[str, Any] = {}
    for node in manifest_nodes or []:
        unique_id = str(node["unique_id"])
        nodes[unique_id] = {
            "relation": _relation(node.get("relation_name")) or None,
            "resource_type": str(node.get("resource_type") or unique_id.split(".")[0]),
            "tags": [str(t) for t in node.get("tags") or []],
            "descriptor": node.get("descriptor") or None,
            "planned": True,
        }
        edges.extend([str(parent), unique_id] for parent in node.get("depends_on") or [])
    return edges, nodes


def downstream_tables(
    spark: Any,
    edges_relation: str,
    nodes_relation: str,
    onboarded: list[str],
    exempt_tags: list[str],
    manifest_nodes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """downstream() over the audit tables' latest lineage and this command's manifest:
    {ok, error, invocation_id, tables: [{..., planned, descriptor}]}; never raises.

    `ok` is False when the audit tables cannot be read: then only this project's manifest is
    walked (the lineage of other projects' runs is unknown).  A table of this manifest is
    `planned`: it is listed even before it is built, with the descriptor its config declares."""
    graph = lineage_graph(spark, edges_relation, nodes_relation)
    edges, nodes = manifest_lineage(manifest_nodes)
    edges = graph["edges"] + edges
    nodes = {**graph["nodes"], **nodes}
    tables = downstream(edges, nodes, onboarded, exempt_tags)
    for table in tables:
        node = nodes[table["unique_id"]]
        table.update(planned=bool(node.get("planned")), descriptor=node.get("descriptor"))
    return result(
        graph["error"] if not graph["ok"] else None, invocation_id=graph["invocation_id"], tables=tables
    )
