"""The manifest: read from target/, and where its nodes and the audit tables live; the hooks' own
files in target/."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from python_hooks.errors import LakehouseError


def read_manifest(target_path: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(target_path) / "manifest.json"
    if not path.is_file():
        raise LakehouseError(f"{path} does not exist: run any dbt command (dbt parse) to write it")
    return json.loads(path.read_text())


def write_target_json(path: Path, value: Any) -> None:
    """Write a JSON file of the hooks into the target directory whole or not at all (a temporary
    name, then a rename), so that a process killed midway leaves the previous file or none."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(value, sort_keys=True, default=str))
    os.replace(temporary, path)


def audit_relation(manifest: Mapping[str, Any], kind: str, default_schema: str) -> str:
    """`schema.table` of an audit table: where its model builds, else the target schema."""
    for node in manifest.get("nodes", {}).values():
        if node.get("resource_type") == "model" and node.get("name") == kind:
            return f"{node['schema']}.{node.get('alias') or kind}"
    return f"{default_schema}.{kind}"


def relation_name(node: Mapping[str, Any]) -> str | None:
    if node.get("resource_type") not in ("model", "seed", "snapshot", "source"):
        return None
    identifier = node.get("identifier") or node.get("alias") or node.get("name")
    return f"{node.get('schema')}.{identifier}"


def all_nodes(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for section in ("nodes", "sources", "macros", "exposures", "metrics", "semantic_models", "unit_tests"):
        found.update(manifest.get(section, {}))
    return found
