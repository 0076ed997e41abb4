"""The manifest: read from target/, and where its nodes and the audit tables live; the hooks' own
files in target/."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from python_hooks.errors import LakehouseError

# how long a read waits for a manifest.json that another command is rewriting in place
REWRITE_WAIT = (20, 0.1)


def read_manifest(target_path: str | os.PathLike[str], invocation_id: str | None = None) -> dict[str, Any]:
    """target/manifest.json; with `invocation_id`, the one this command wrote, or an error.

    Two commands on one project directory (a dev and a prod target) share target/, and dbt
    rewrites manifest.json in place: a read may catch it half-written (read again, for up to two
    seconds), or find the other command's, whose nodes are compiled for its own target.  Then
    this command's manifest is gone, which is an error naming both commands: the other's nodes
    are never taken for this one's.
    """
    path = Path(target_path) / "manifest.json"
    tries, pause = REWRITE_WAIT
    for attempt in range(tries):
        if not path.is_file():
            raise LakehouseError(f"{path} does not exist: run any dbt command (dbt parse) to write it")
        try:
            manifest = json.loads(path.read_text())
            break
        except ValueError:
            if attempt == tries - 1:
                raise
            time.sleep(pause)
    written_by = (manifest.get("metadata") or {}).get("invocation_id")
    if invocation_id and written_by != invocation_id:
        raise LakehouseError(
            f"{path} is another dbt command's (invocation {written_by}), written since this one "
            f"({invocation_id}) parsed the project: two targets share this target directory; "
            "give each its own (--target-path) for the audit to read its own manifest"
        )
    return manifest


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
