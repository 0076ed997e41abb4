"""The workflow graph (BDRE's generated workflow diagram) as graphviz dot, from the manifest.

Written on every run into `target/` by the on-run-end hook (`workflow_graph.dot` for the whole
project, `workflow_graph_run.dot` for the nodes of that run, coloured by status; an `.svg` of
each when graphviz's `dot` is installed), and on demand by

    python -m python_hooks.audit.workflow_graph [--select SPEC ...] [--exclude SPEC ...] [--tests] [--output PATH]

(`make graph`).  Selection follows dbt's basic grammar: `name`, `+name` (with ancestors),
`name+` (with descendants), `tag:x`, `path:models/purge`, `resource_type:model`, `package:x`;
several specs are a union.  With no manifest yet, `dbt parse` writes one first.

What a person reads: the models, seeds, snapshots and sources, each in a box of its capability
(`purge`, `retention`, `compaction`, `erasure`, `audit` for this package; one box per other
package, the installing project's own nodes among them), and the data tests counted on the node
they test (`3 tests`; in a run's graph `3 tests: 2 pass, 1 fail`, coloured by the worst).  The
tests themselves are drawn only on request (`--tests`, or var `audit_workflow_graph_tests: true`
for the hook's graphs).  A run's graph holds the nodes it ran and, for a run of tests only, the
nodes they tested, so `dbt test` draws the models with their results instead of a column of test
boxes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import graphviz

from python_hooks.errors import LakehouseError

SHAPES = {
    "source": ("cylinder", "#d9ead3"),
    "seed": ("cylinder", "#fff2cc"),
    "model": ("box", "#cfe2f3"),
    "snapshot": ("box3d", "#ead1dc"),
    "test": ("note", "#eeeeee"),
    "unit_test": ("note", "#eeeeee"),
    "exposure": ("house", "#fce5cd"),
}
PRODUCT = "compliance"
CAPABILITIES = ("purge", "retention", "compaction", "erasure", "audit")
TEST_TYPES = ("test", "unit_test")
# worst first: a node's test summary takes the colour of its worst result
TEST_STATUS_ORDER = ("error", "fail", "warn", "skipped", "pass", "success")
STATUS_COLOURS = {
    "success": "#93c47d",
    "pass": "#93c47d",
    "warn": "#ffd966",
    "error": "#e06666",
    "fail": "#e06666",
    "skipped": "#cccccc",
}


def graph_nodes(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every node of the manifest's parent map, with its properties."""
    known: dict[str, Mapping[str, Any]] = {}
    for section in (
        "nodes",
        "sources",
        "exposures",
        "metrics",
        "semantic_models",
        "saved_queries",
        "unit_tests",
    ):
        known.update(manifest.get(section, {}))
    ids = set(manifest.get("parent_map", {})) | {
        p for ps in manifest.get("parent_map", {}).values() for p in ps
    }
    return {
        unique_id: known.get(unique_id, {"resource_type": unique_id.split(".")[0]})
        for unique_id in sorted(ids)
    }


def _closure(start: set[str], edges: Mapping[str, Sequence[str]]) -> set[str]:
    seen, stack = set(start), list(start)
    while stack:
        for nxt in edges.get(stack.pop(), []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _matches(spec: str, unique_id: str, node: Mapping[str, Any]) -> bool:
    method, _, value = spec.partition(":") if ":" in spec else ("", "", spec)
    tags = set(node.get("tags") or []) | set((node.get("config") or {}).get("tags") or [])
    if method == "tag":
        return value in tags
    if method == "path":
        return str(node.get("original_file_path") or "").startswith(value.rstrip("/"))
    if method == "resource_type":
        return node.get("resource_type") == value
    if method == "package":
        return node.get("package_name") == value
    if method == "source":
        return unique_id.startswith("source.") and (
            f"{node.get('source_name')}.{node.get('name')}" == value or node.get("source_name") == value
        )
    return node.get("name") == spec or unique_id == spec


def select(manifest: Mapping[str, Any], specs: Iterable[str], exclude: Iterable[str] = ()) -> set[str]:
    """The unique ids a dbt-like selection names (empty specs: everything)."""
    nodes = graph_nodes(manifest)
    parents = manifest.get("parent_map", {})
    children = manifest.get("child_map", {})

    def one(spec: str) -> set[str]:
        up, down = spec.startswith("+"), spec.endswith("+")
        core = spec.strip("+")
        hits = {u for u, n in nodes.items() if _matches(core, u, n)}
        if not hits:
            raise LakehouseError(f"selection {spec!r} matches no node of the manifest")
        result = set(hits)
        if up:
            result |= _closure(hits, parents)
        if down:
            result |= _closure(hits, children)
        return result

    specs = [s for spec in specs for s in spec.split()]
    chosen = set(nodes) if not specs else set().union(*(one(s) for s in specs))
    for excluded in (s for spec in exclude for s in spec.split()):
        chosen -= one(excluded)
    return chosen


def capability(unique_id: str, node: Mapping[str, Any]) -> str:
    """The box a node is drawn in: its capability for this package's nodes (tag, else folder),
    its package's name for any other package's, the installing project's included."""
    package = str(node.get("package_name") or unique_id.split(".")[1] if "." in unique_id else "")
    if package != PRODUCT:
        return package or "other"
    tags = set(node.get("tags") or []) | set((node.get("config") or {}).get("tags") or [])
    for name in CAPABILITIES:
        if name in tags:
            return name
    parts = str(node.get("original_file_path") or "").split("/")
    for part in parts[:2]:
        if part in CAPABILITIES:
            return part
    return PRODUCT


def _tested(manifest: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """{node: the data and unit tests attached to it}: a test counts on each non-test parent."""
    tested: dict[str, list[str]] = {}
    for child, parents in manifest.get("parent_map", {}).items():
        if nodes.get(child, {}).get("resource_type") not in TEST_TYPES:
            continue
        for parent in parents:
            tested.setdefault(parent, []).append(child)
    return tested


def _test_summary(tests: list[str], statuses: Mapping[str, str] | None) -> tuple[str, str | None]:
    """(`3 tests` or `3 tests: 2 pass, 1 fail`, the worst status among those that ran)."""
    ran = [str(statuses[t]) for t in tests if statuses and t in statuses]
    text = f"{len(tests)} test{'s' if len(tests) != 1 else ''}"
    if not ran:
        return text, None
    counts = {status: ran.count(status) for status in sorted(set(ran), key=_status_rank)}
    return text + ": " + ", ".join(f"{n} {status}" for status, n in counts.items()), min(
        ran, key=_status_rank
    )


def _status_rank(status: str) -> int:
    return TEST_STATUS_ORDER.index(status) if status in TEST_STATUS_ORDER else len(TEST_STATUS_ORDER)


def run_nodes(manifest: Mapping[str, Any], statuses: Mapping[str, str]) -> set[str]:
    """What a run's graph draws: the nodes the run executed, and the nodes its tests tested."""
    nodes = graph_nodes(manifest)
    chosen = {u for u in statuses if u in nodes and nodes[u].get("resource_type") not in TEST_TYPES}
    for unique_id in statuses:
        if nodes.get(unique_id, {}).get("resource_type") in TEST_TYPES:
            chosen |= {
                p
                for p in manifest.get("parent_map", {}).get(unique_id, [])
                if nodes.get(p, {}).get("resource_type") not in TEST_TYPES
            }
    return chosen


def build_dot(
    manifest: Mapping[str, Any],
    selected: set[str] | None = None,
    statuses: Mapping[str, str] | None = None,
    title: str = "dbt workflow",
    tests: bool = False,
) -> graphviz.Digraph:
    """The graph of `selected` (default every node), in one box per capability; tests counted on
    the nodes they test, or drawn as nodes of their own with `tests`."""
    nodes = graph_nodes(manifest)
    chosen = set(nodes) if selected is None else selected & set(nodes)
    # the project's hooks (on-run-start/-end operations) run around every command: not a step
    chosen = {u for u in chosen if nodes[u].get("resource_type") != "operation"}
    if not tests:
        chosen = {u for u in chosen if nodes[u].get("resource_type") not in TEST_TYPES}
    tested = _tested(manifest, nodes)
    dot = graphviz.Digraph(
        "workflow",
        graph_attr={
            "rankdir": "LR",
            "label": title,
            "labelloc": "t",
            "fontname": "Helvetica",
            "nodesep": "0.15",
            "ranksep": "0.5",
            "compound": "true",
        },
    )
    dot.attr("node", fontname="Helvetica", fontsize="10", style="filled", margin="0.08,0.03")
    dot.attr("edge", arrowsize="0.6", color="#666666")
    boxes: dict[str, list[str]] = {}
    for unique_id in sorted(chosen):
        boxes.setdefault(capability(unique_id, nodes[unique_id]), []).append(unique_id)
    for box, members in sorted(boxes.items()):
        with dot.subgraph(name=f"cluster_{box}") as cluster:
            cluster.attr(
                label=box, style="rounded,filled", color="#bbbbbb", fillcolor="#fafafa", fontsize="12"
            )
            for unique_id in members:
                node = nodes[unique_id]
                kind = str(node.get("resource_type") or unique_id.split(".")[0])
                shape, colour = SHAPES.get(kind, ("ellipse", "#ffffff"))
                status = (statuses or {}).get(unique_id)
                name = str(node.get("name") or unique_id.split(".")[-1])
                if kind == "source" and node.get("source_name"):
                    name = f"{node['source_name']}.{name}"
                detail = kind + (f", {status}" if status else "")
                label = f"{name}\\n({detail})"
                fill = STATUS_COLOURS.get(status or "", colour)
                style = "filled"
                if statuses is not None and status is None and kind not in ("source",):
                    style = "filled,dashed"  # drawn for its tests: it did not run itself
                if not tests and tested.get(unique_id):
                    summary, worst = _test_summary(tested[unique_id], statuses)
                    label += f"\\n{summary}"
                    if worst in ("error", "fail", "warn") and status in (None, "success", "pass"):
                        fill = STATUS_COLOURS[worst]
                cluster.node(
                    unique_id, label=label, shape=shape, fillcolor=fill, style=style, tooltip=unique_id
                )
    for child, parents in sorted(manifest.get("parent_map", {}).items()):
        for parent in parents:
            if parent in chosen and child in chosen:
                dot.edge(parent, child)
    return dot


def write(dot: graphviz.Digraph, output: Path) -> list[Path]:
    """`<output>.dot`, and `<output>.svg` when graphviz's `dot` program is installed."""
    output.parent.mkdir(parents=True, exist_ok=True)
    dot_path = output.with_suffix(".dot")
    dot_path.write_text(dot.source)
    written = [dot_path]
    if shutil.which("dot"):
        svg = output.with_suffix(".svg")
        subprocess.run(["dot", "-Tsvg", str(dot_path), "-o", str(svg)], check=True, timeout=120)
        written.append(svg)
    return written


def write_run_graphs(
    manifest: Mapping[str, Any], target_path: Path, results: Sequence[Mapping[str, Any]], tests: bool = False
) -> list[str]:
    """The hook's drawings: the whole project, and this run's nodes coloured by status (tests
    counted on the nodes they test unless `tests`)."""
    statuses = {str(r.get("unique_id")): str(r.get("status")) for r in results if r.get("unique_id")}
    paths = write(build_dot(manifest, tests=tests), Path(target_path) / "workflow_graph")
    if statuses:
        chosen = run_nodes(manifest, statuses) | (set(statuses) if tests else set())
        paths += write(
            build_dot(
                manifest, selected=chosen, statuses=statuses, title="dbt workflow: last run", tests=tests
            ),
            Path(target_path) / "workflow_graph_run",
        )
    return [str(p) for p in paths]


def _load_manifest(path: Path) -> dict[str, Any]:
    if not path.is_file():
        from dbt.cli.main import dbtRunner

        print(f"{path} is missing: running `dbt parse` to write it", file=sys.stderr)
        outcome = dbtRunner().invoke(["parse", "--target-path", str(path.parent)])
        if not outcome.success or not path.is_file():
            raise SystemExit(f"dbt parse failed; cannot draw the workflow graph ({outcome.exception})")
    return json.loads(path.read_text())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m python_hooks.audit.workflow_graph", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--manifest", default="target/manifest.json", help="manifest to read (default: %(default)s)"
    )
    parser.add_argument(
        "-s", "--select", nargs="*", default=[], help="dbt-like selection specs (default: all)"
    )
    parser.add_argument("--exclude", nargs="*", default=[], help="specs to leave out")
    parser.add_argument(
        "--tests",
        action="store_true",
        help="draw data tests and unit tests as nodes (default: counted on their models)",
    )
    parser.add_argument("--no-tests", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        help="output path without suffix (default: target/workflow_graph[_selection])",
    )
    args = parser.parse_args(argv)
    manifest_path = Path(args.manifest)
    manifest = _load_manifest(manifest_path)
    try:
        chosen = select(manifest, args.select, args.exclude)
    except LakehouseError as exc:
        parser.error(str(exc))
    name = "workflow_graph" + ("_selection" if args.select or args.exclude else "")
    output = Path(args.output) if args.output else manifest_path.parent / name
    title = "dbt workflow" + (f": {' '.join(args.select)}" if args.select else "")
    for path in write(build_dot(manifest, selected=chosen, title=title, tests=args.tests), output):
        print(path)
    if not shutil.which("dot"):
        print(
            "graphviz's `dot` is not installed (apt-get install graphviz): wrote the .dot only",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
