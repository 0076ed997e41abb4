"""Whether the dbt command that runs a destructive node asked for it by name.

The purge and retention delete data.  dbt runs every enabled node that a command selects, and a
command with no `--select` selects every node, so a package that is installed and configured
would purge in a host project's plain `dbt build`.  Instead, these nodes act only when the
command's own selection names the compliance job: the invocation's `--select` (or `--models`)
holds a criterion that, with its graph operators (`+`, `@`, `2+`) taken off, matches one of the
job's nodes by name, by a folder of its fqn (`compliance.purge`), by tag (`tag:purge`) or by path
(`path:models/purge`), and dbt selected the node itself (`purge+` names `purge`, and `retention`
downstream of it, for example).  An explicit `--selector <name>` is the user's own choice and
counts for every node it selects.

What never names the job: no selection at all (a plain `dbt build` / `dbt run`, or the project's
default selector), a wildcard (`fqn:*`, `purge*`), the package as a whole (`compliance`,
`package:compliance`), and nodes of the host project whose descendants include the purge
(`customer_revenue+`).  Then the node runs as a dry run: it lists what it would do, deletes
nothing, and says the command that acts.  `dbt retry` repeats the previous command's selection
(dbt sets the previous command's flags), so a retried purge acts as the purge it retries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# dbt's graph operators around a criterion: `@x`, `+x`, `2+x`, `x+`, `x+3`
_OPERATORS = re.compile(r"^(?:@|\d*\+)?(?P<body>.*?)(?:\+\d*)?$")
_WILDCARD = re.compile(r"[*?\[\]]")
_PATH_SUFFIXES = (".sql", ".py", ".csv", ".yml", ".yaml")


@dataclass(frozen=True)
class JobNode:
    """What a selector can match a node of the compliance job on."""

    unique_id: str
    name: str
    fqn: tuple[str, ...]
    tags: frozenset[str]
    paths: tuple[str, ...]  # relative to the root project: `models/purge/purge.sql`, `dbt_packages/...`

    @classmethod
    def from_graph(cls, node: Mapping[str, Any], root_project: str) -> JobNode:
        """A node of dbt's `graph` context (a dict), as a selector sees it."""
        path = str(node.get("original_file_path") or "").replace("\\", "/")
        package = str(node.get("package_name") or "")
        # dbt's path method is relative to the root project: a package's files are under its
        # packages-install-path (dbt_packages by default)
        paths = (path,) if package == root_project else (f"dbt_packages/{package}/{path}",)
        return cls(
            unique_id=str(node["unique_id"]),
            name=str(node.get("name") or ""),
            fqn=tuple(str(part) for part in node.get("fqn") or ()),
            tags=frozenset(str(tag) for tag in node.get("tags") or ()),
            paths=paths,
        )


@dataclass(frozen=True)
class Decision:
    """Whether the node acts; if not, why, and the command that would make it act."""

    named: bool
    reason: str
    command: str


def criteria(select: Any) -> list[str]:
    """The union's criteria of `--select` as dbt's invocation args hold it (a list of strings,
    each possibly space-separated), or a single string."""
    if select is None:
        return []
    values = [select] if isinstance(select, str) else list(select)
    return [part for value in values for part in str(value).split() if part]


def _strip_operators(part: str) -> str:
    match = _OPERATORS.match(part.strip())
    return (match.group("body") if match else part).strip()


def _method(body: str) -> tuple[str, str]:
    if ":" in body:
        method, value = body.split(":", 1)
        return method.strip().lower(), value.strip()
    if "/" in body or body.endswith(_PATH_SUFFIXES):
        return "path", body
    return "fqn", body


def _path_matches(value: str, paths: Iterable[str]) -> bool:
    value = value.strip().removeprefix("./").rstrip("/")
    if not value or value == ".":
        return False
    return any(path == value or path.startswith(value + "/") for path in paths)


def part_names(part: str, node: JobNode) -> bool:
    """Whether one criterion (no spaces or commas) names `node` itself, not through a wildcard
    or the package as a whole."""
    method, value = _method(_strip_operators(part))
    if not value or _WILDCARD.search(value):
        return False
    if method == "fqn":
        if value == node.name:
            return True
        parts = tuple(value.split("."))
        # a folder or node of the package (`compliance.purge`), never the package alone
        return len(parts) >= 2 and node.fqn[: len(parts)] == parts
    if method == "tag":
        return value in node.tags
    if method in ("path", "file"):
        if method == "file":
            return any(
                path.rsplit("/", 1)[-1] in (value, value + ".sql", value + ".py") for path in node.paths
            )
        return _path_matches(value, node.paths)
    return False


def criterion_names_job(criterion: str, job: Iterable[JobNode]) -> bool:
    """An intersection (`a,b`) names the job when one of its parts does (the others only narrow)."""
    nodes = list(job)
    return any(part_names(part, node) for part in criterion.split(",") if part for node in nodes)


def decide(
    node_id: str,
    args: Mapping[str, Any],
    selected: Iterable[str],
    job: Iterable[JobNode],
    command: str,
) -> Decision:
    """Whether the node `node_id` may act in this command (`args`: dbt's invocation_args_dict;
    `selected`: dbt's selected_resources; `job`: the compliance job's nodes; `command`: the
    documented command that runs it)."""
    if node_id not in set(selected or ()):
        return Decision(False, "this command did not select it", command)
    selector = args.get("selector")
    if selector:
        return Decision(True, f"selected by --selector {selector}", command)
    chosen = criteria(args.get("select")) or criteria(args.get("models"))
    if not chosen:
        return Decision(False, "this command has no --select (a plain run selects every node)", command)
    job = list(job)
    naming = [c for c in chosen if criterion_names_job(c, job)]
    if naming:
        return Decision(True, "named by --select " + " ".join(naming), command)
    return Decision(
        False,
        "--select " + " ".join(chosen) + " does not name the compliance job (by name, tag or path;"
        " wildcards and other projects' nodes do not count)",
        command,
    )
