"""The audit tables' rows: one invocation, its node results, the node registry, the lineage edges and the column lineage."""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import socket
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from python_hooks.audit import values
from python_hooks.audit.manifest import all_nodes, relation_name

FAILED_STATUSES = {"error", "fail", "runtime error"}

# Every status a dbt_invocations row can have: the schema test of _audit__models.yml accepts
# exactly these (tests/python_hooks/test_artifacts.py compares them).
INVOCATION_STATUSES = ("success", "error", "cancelled", "interrupted", "refused")


def _selection(args: Mapping[str, Any]) -> str | None:
    parts = []
    for key in ("select", "exclude", "selector", "resource_types", "models"):
        value = args.get(key)
        if value:
            parts.append(
                f"--{key.replace('_', '-')} {' '.join(value) if isinstance(value, (list, tuple)) else value}"
            )
    return " ".join(parts) or None


def _who() -> tuple[str, str]:
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in some containers
        user = os.environ.get("USER", "unknown")
    return user, socket.gethostname()


def invocation_row(
    invocation_id: str,
    args: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    *,
    target_name: str | None,
    target_schema: str | None,
    dbt_version: str | None,
    project_name: str | None,
    started_at: Any,
    ended_at: Any,
    loaded_from: str,
    status: str | None = None,
    message: str | None = None,
    run_by: str | None = None,
    host: str | None = None,
) -> dict[str, Any]:
    failed = sum(1 for r in results if str(r.get("status")) in FAILED_STATUSES)
    if status is None:
        status = "error" if failed else "success"
    if status not in INVOCATION_STATUSES:
        raise ValueError(f"dbt_invocations status {status!r} is not one of {', '.join(INVOCATION_STATUSES)}")
    user, hostname = _who()
    command = args.get("cli_command") or args.get("which") or args.get("command")
    vars_value = args.get("vars")
    if isinstance(vars_value, str):
        vars_json = vars_value if vars_value.strip() not in ("", "{}") else None
    else:
        vars_json = values.json_text(vars_value)
    return {
        "invocation_id": invocation_id,
        "command": str(command) if command else None,
        "args": values.json_text(args),
        "selection": _selection(args),
        "target_name": target_name or args.get("target"),
        "target_schema": target_schema,
        "vars": vars_json,
        "dbt_version": dbt_version,
        "project_name": project_name,
        "full_refresh": bool(args.get("full_refresh") or False),
        "started_at": values.ts(started_at),
        "ended_at": values.ts(ended_at),
        "status": status,
        "nodes_total": len(results),
        "nodes_failed": failed,
        "message": message,
        "run_by": run_by or user,
        "host": host or hostname,
        "loaded_from": loaded_from,
        "loaded_at": values.now(),
    }


def result_dict(result: Any) -> dict[str, Any]:
    """An in-memory RunResult as the dict run_results.json holds (plus the node's own fields)."""
    node = getattr(result, "node", None)
    timing = [values.plain(t) for t in (getattr(result, "timing", None) or [])]
    status = getattr(result, "status", None)
    return {
        "unique_id": getattr(node, "unique_id", None),
        "status": str(getattr(status, "value", status)) if status is not None else None,
        "thread_id": getattr(result, "thread_id", None),
        "execution_time": getattr(result, "execution_time", None),
        "timing": timing,
        "message": getattr(result, "message", None),
        "failures": getattr(result, "failures", None),
        "adapter_response": values.plain(getattr(result, "adapter_response", None) or {}),
        "compiled_code": getattr(node, "compiled_code", None),
        "relation_name": getattr(node, "relation_name", None),
        "language": str(getattr(node, "language", "") or "") or None,
    }


def _timing(result: Mapping[str, Any], name: str, edge: str) -> datetime | None:
    return values.ts(values.timing(result, name, edge))


def node_result_rows(
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    partitions: Mapping[str, tuple[list[str], list[str]]] | None = None,
) -> list[dict[str, Any]]:
    nodes = all_nodes(manifest)
    now = values.now()
    rows = []
    for result in results:
        unique_id = result.get("unique_id")
        node = nodes.get(unique_id, {})
        response = result.get("adapter_response") or {}
        rows_affected = response.get("rows_affected")
        read, written = (partitions or {}).get(unique_id, (None, None))
        rows.append(
            {
                "result_id": f"{invocation_id}:{unique_id}",
                "invocation_id": invocation_id,
                "unique_id": unique_id,
                "node_name": node.get("name") or (unique_id or "").split(".")[-1],
                "resource_type": node.get("resource_type") or (unique_id or "").split(".")[0],
                "materialization": (node.get("config") or {}).get("materialized"),
                "relation_name": result.get("relation_name") or relation_name(node),
                "status": result.get("status"),
                "thread_id": result.get("thread_id"),
                "compile_started_at": _timing(result, "compile", "started_at"),
                "execute_started_at": _timing(result, "execute", "started_at"),
                "completed_at": _timing(result, "execute", "completed_at")
                or _timing(result, "compile", "completed_at"),
                "execution_time": float(result.get("execution_time") or 0.0),
                "message": None if result.get("message") is None else str(result.get("message")),
                "failures": result.get("failures"),
                "rows_affected": rows_affected
                if isinstance(rows_affected, int) and rows_affected >= 0
                else None,
                "partitions_read": read,
                "partitions_written": written,
                "loaded_at": now,
            }
        )
    return rows


def _checksum(node: Mapping[str, Any]) -> str | None:
    checksum = node.get("checksum")
    if isinstance(checksum, Mapping):
        return f"{checksum.get('name')}:{checksum.get('checksum')}"
    if node.get("resource_type") == "macro":
        return "sha256:" + _sha(node.get("macro_sql") or "")
    return "sha256:" + _sha(
        json.dumps(
            {k: node.get(k) for k in ("description", "depends_on", "config")}, sort_keys=True, default=str
        )
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def node_registry_rows(
    invocation_id: str, manifest: Mapping[str, Any], known: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """Rows for nodes that are new, changed or removed since the registry's latest version.

    `known` maps unique_id -> latest recorded checksum (None when its latest row is 'removed').
    """
    now = values.now()
    rows = []
    current: dict[str, Mapping[str, Any]] = {}
    for section in ("nodes", "sources", "macros", "exposures", "metrics", "semantic_models", "unit_tests"):
        current.update(manifest.get(section, {}))
    for unique_id, node in sorted(current.items()):
        checksum = _checksum(node)
        previous = known.get(unique_id, "__absent__")
        if previous == checksum:
            continue
        config = node.get("config") or {}
        tags = node.get("tags") or config.get("tags") or []
        rows.append(
            {
                "node_version_id": f"{invocation_id}:{unique_id}",
                "invocation_id": invocation_id,
                "unique_id": unique_id,
                "resource_type": node.get("resource_type"),
                "name": node.get("name"),
                "package_name": node.get("package_name"),
                "original_file_path": node.get("original_file_path"),
                "materialization": config.get("materialized"),
                "language": node.get("language"),
                "checksum": checksum,
                "tags": [str(t) for t in (tags if isinstance(tags, list) else [tags])],
                "description": node.get("description") or None,
                "relation_name": relation_name(node),
                "change": "added" if previous in ("__absent__", None) else "changed",
                "recorded_at": now,
            }
        )
    for unique_id, previous in sorted(known.items()):
        if unique_id not in current and previous is not None:
            rows.append(
                {
                    "node_version_id": f"{invocation_id}:{unique_id}",
                    "invocation_id": invocation_id,
                    "unique_id": unique_id,
                    "resource_type": unique_id.split(".")[0],
                    "name": unique_id.split(".")[-1],
                    "checksum": None,
                    "tags": [],
                    "change": "removed",
                    "recorded_at": now,
                }
            )
    return rows


def edge_rows(invocation_id: str, manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    from python_hooks.audit import lineage

    nodes = all_nodes(manifest)
    now = values.now()
    return [
        {
            "edge_id": f"{invocation_id}:{parent}->{child}",
            "invocation_id": invocation_id,
            "parent_unique_id": parent,
            "child_unique_id": child,
            "parent_resource_type": nodes.get(parent, {}).get("resource_type") or parent.split(".")[0],
            "child_resource_type": nodes.get(child, {}).get("resource_type") or child.split(".")[0],
            "loaded_at": now,
        }
        for parent, child in lineage.lineage_edges(manifest)
    ]


def column_lineage_rows(
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    columns_of: Any,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Column lineage of the models compiled in this invocation, and the models it could not parse."""
    from python_hooks.audit import lineage  # sqlglot, imported when the lineage is needed

    nodes = manifest.get("nodes", {})
    relations = lineage.relation_index(manifest)
    now = values.now()
    edges: list[lineage.ColumnEdge] = []
    unparsed: list[str] = []
    for result in results:
        unique_id = result.get("unique_id") or ""
        node = nodes.get(unique_id, {})
        if node.get("resource_type") != "model":
            continue
        parents = list((node.get("depends_on") or {}).get("nodes") or [])
        if (result.get("language") or node.get("language")) == "python":
            edges.extend(
                lineage.model_level_lineage(
                    unique_id, parents, lambda p: relation_name(all_nodes(manifest).get(p, {}))
                )
            )
            continue
        sql = result.get("compiled_code")
        if not sql:
            continue
        try:
            edges.extend(lineage.column_lineage(unique_id, sql, relations, columns_of))
        except Exception as exc:  # sqlglot cannot read every statement; the model-level edges remain
            unparsed.append(f"{unique_id}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    rows = []
    for edge in edges:
        key = ":".join(
            x or ""
            for x in (edge.column_name, edge.source_unique_id or edge.source_relation, edge.source_column)
        )
        rows.append(
            {
                "lineage_id": f"{invocation_id}:{edge.model_unique_id}:{key}",
                "invocation_id": invocation_id,
                "model_unique_id": edge.model_unique_id,
                "column_name": edge.column_name,
                "source_unique_id": edge.source_unique_id,
                "source_relation": edge.source_relation,
                "source_column": edge.source_column,
                "lineage_level": edge.lineage_level,
                "is_python_model": edge.is_python_model,
                "loaded_at": now,
            }
        )
    return rows, unparsed
