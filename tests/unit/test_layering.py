"""The import layering of the product's Python (import-linter's idea, with ast; no network).

    dbt.adapters.lakehouse             the adapter plugin, above python_hooks: only its `compliance`
                                       module (the typed entry points for macros) imports the
                                       capability packages; any of its modules may import
                                       python_hooks.errors and the catalog's leaf primitives
                                       (filesystem, partitions, scala, literals), nothing else
    python_hooks.errors                the error hierarchy; imports no package of python_hooks
    python_hooks.catalog               metastore and filesystem primitives; imports no capability package
    python_hooks.<capability>          purge, retention, restore, audit, erasure, compaction: import catalog
                                       and errors only, never each other
    python_hooks -> the adapter        never: no module of python_hooks imports any module of
                                       dbt.adapters.lakehouse, nested (lazy) imports included; what
                                       only the adapter knows (the product's version, where its run
                                       lock leaves refusal records) it passes down as arguments

Relative imports are resolved and checked like absolute ones.  No module imports another
module's `_private` names (`from m import _x`, or `m._x` on an imported module), and the graph of
imports between the project's modules (nested imports included) has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ADAPTER_ROOT = REPO / "adapter" / "src"
ADAPTER = ADAPTER_ROOT / "dbt" / "adapters" / "lakehouse"
HOOKS = REPO / "python_hooks"
CAPABILITIES = ("purge", "retention", "restore", "audit", "erasure", "compaction")
ADAPTER_PACKAGE = "dbt.adapters.lakehouse"

# what any module of the adapter may import from python_hooks (compliance: any capability too)
ADAPTER_MAY_IMPORT = {
    "python_hooks.errors",
    *(f"python_hooks.catalog.{name}" for name in ("filesystem", "partitions", "scala", "literals")),
}


def _is_adapter(module: str) -> bool:
    """`dbt.adapters.lakehouse` or any module under it, whether or not the file exists."""
    return module == ADAPTER_PACKAGE or module.startswith(ADAPTER_PACKAGE + ".")


def _module_name(path: Path) -> str:
    root = REPO if path.is_relative_to(HOOKS) else ADAPTER_ROOT
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return sorted([*HOOKS.rglob("*.py"), *ADAPTER.rglob("*.py")])


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imports(tree: ast.AST, me: str, package: bool) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of a file, nested ones too;
    relative imports resolved against `me` (a package's own name when `package`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".")
                base = base if package else base[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names], node.lineno))
    return found


def _package(module: str) -> str | None:
    """`python_hooks.<package>` of a python_hooks module (the top module for errors), else None."""
    parts = module.split(".")
    if parts[0] != "python_hooks":
        return None
    return ".".join(parts[:2]) if len(parts) > 1 else "python_hooks"


def _known(module: str) -> bool:
    if module.startswith("python_hooks"):
        path = REPO / Path(*module.split("."))
    elif module.startswith("dbt.adapters.lakehouse"):
        path = ADAPTER_ROOT / Path(*module.split("."))
    else:
        return False
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported_modules(module: str, names: list[str]) -> list[str]:
    """The modules an import statement reaches: `from python_hooks.catalog import tables` reaches
    python_hooks.catalog.tables when that is a module, else python_hooks.catalog."""
    return [f"{module}.{name}" if name and _known(f"{module}.{name}") else module for name in names or [""]]


def _edges(path: Path, text: str) -> list[tuple[str, str, int]]:
    """(importer, imported project module, line) of one file."""
    me = _module_name(path)
    tree = ast.parse(text, str(path))
    return [
        (me, target, line)
        for module, names, line in _imports(tree, me, _is_package(path))
        for target in _imported_modules(module, names)
        if _known(target)
    ]


def _file_violations(path: Path, text: str) -> list[str]:
    problems = []
    me = _module_name(path)
    tree = ast.parse(text, str(path))
    my_package = _package(me)
    for module, names, line in _imports(tree, me, _is_package(path)):
        where = f"{path.relative_to(REPO)}:{line}"
        for target in _imported_modules(module, names):
            theirs = _package(target)
            if me.startswith("dbt.adapters.lakehouse") and target.startswith("python_hooks"):
                if me != "dbt.adapters.lakehouse.compliance" and target not in ADAPTER_MAY_IMPORT:
                    problems.append(f"{where}: the adapter imports {target} (only its compliance module may)")
                elif theirs not in {f"python_hooks.{c}" for c in CAPABILITIES} | {
                    "python_hooks.catalog",
                    "python_hooks.errors",
                }:
                    problems.append(f"{where}: the adapter's entry points import {target}, not a capability")
            if my_package is not None and _is_adapter(target):
                problems.append(f"{where}: {me} imports the adapter's {target} (python_hooks never may)")
            if my_package == "python_hooks.catalog" and theirs not in (
                None,
                "python_hooks.catalog",
                "python_hooks.errors",
            ):
                problems.append(f"{where}: catalog imports the capability module {target}")
            if my_package == "python_hooks.errors" and theirs is not None:
                problems.append(f"{where}: errors imports {target}")
            if (
                my_package in {f"python_hooks.{c}" for c in CAPABILITIES}
                and theirs is not None
                and theirs not in (my_package, "python_hooks.catalog", "python_hooks.errors")
            ):
                problems.append(f"{where}: {my_package} imports {target} (only catalog and errors)")
        if module != me:
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    problems.append(f"{where}: imports the private name {module}.{name}")
    problems += _private_attribute_uses(path, tree)
    return problems


def _private_attribute_uses(path: Path, tree: ast.AST) -> list[str]:
    """`module._name` where `module` is a project module imported by this file."""
    me = _module_name(path)
    project_modules: set[str] = set()
    for module, names, _ in _imports(tree, me, _is_package(path)):
        if not module.startswith(("python_hooks", "dbt.adapters.lakehouse")):
            continue
        for name in names:
            if _known(f"{module}.{name}"):
                project_modules.add(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("python_hooks"):
                    project_modules.add(alias.asname or alias.name.split(".")[0])
    return [
        f"{path.relative_to(REPO)}:{node.lineno}: uses the private name {node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in project_modules
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]


def _cycles(edges: list[tuple[str, str, int]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (or a module importing itself),
    each as a sorted list: Tarjan's algorithm over the import graph."""
    graph: dict[str, set[str]] = {}
    for source, target, _ in edges:
        graph.setdefault(source, set()).add(target)
        graph.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_sources_are_found():
    names = {_module_name(p) for p in _sources()}
    assert {
        "python_hooks.catalog.metastore",
        "python_hooks.errors",
        *ADAPTER_MAY_IMPORT,
        "dbt.adapters.lakehouse.impl",
        "dbt.adapters.lakehouse.compliance",
    } <= names
    assert all(f"python_hooks.{c}" in names for c in CAPABILITIES)


def test_the_layers_import_only_downwards():
    assert [problem for path in _sources() for problem in _file_violations(path, path.read_text())] == []


def test_the_imports_have_no_cycle():
    edges = [edge for path in _sources() for edge in _edges(path, path.read_text())]
    assert len(edges) > 50  # the graph was built
    assert _cycles(edges) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "from python_hooks.retention import engine\n",
            "python_hooks.restore imports python_hooks.retention",
        ),
        ("from ..retention import engine\n", "python_hooks.restore imports python_hooks.retention"),
        ("from . import plan\nplan._secret()\n", "private name plan._secret"),
        ("from python_hooks.catalog.metastore import _catalog\n", "private name"),
        ("from python_hooks.catalog import metastore\nmetastore._jvm(None)\n", "private name metastore._jvm"),
        ("from dbt.adapters.lakehouse import impl\n", "imports the adapter's dbt.adapters.lakehouse.impl"),
        (
            "from dbt.adapters.lakehouse import run_lock\n",
            "imports the adapter's dbt.adapters.lakehouse.run_lock",
        ),
    ],
)
def test_a_violation_is_found(source, expected):
    problems = _file_violations(HOOKS / "restore" / "probe.py", source)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize("where", ["errors.py", "catalog/probe.py", "audit/probe.py", "erasure/probe.py"])
@pytest.mark.parametrize(
    "source",
    [
        "import dbt.adapters.lakehouse\n",
        "import dbt.adapters.lakehouse.storage as storage\n",
        "from dbt.adapters import lakehouse\n",
        "from dbt.adapters.lakehouse import run_lock, storage\n",
        "from dbt.adapters.lakehouse.filesystem import path_within\n",  # a module that moved away
        "def version():\n    from dbt.adapters.lakehouse.__version__ import version\n    return version\n",
        "class C:\n    def m(self):\n        import dbt.adapters.lakehouse.run_lock\n",
    ],
)
def test_python_hooks_never_imports_the_adapter(where, source):
    problems = _file_violations(HOOKS / where, source)
    assert any("imports the adapter's dbt.adapters.lakehouse" in problem for problem in problems), problems


def test_the_adapter_may_import_the_errors_and_the_leaf_primitives_only():
    allowed = (
        "from python_hooks.errors import LakehouseError\n"
        "from python_hooks.catalog import filesystem, partitions\n"
        "from python_hooks.catalog.scala import scala_list\n"
        "from python_hooks.catalog.literals import sql_literal\n"
    )
    assert _file_violations(ADAPTER / "connections.py", allowed) == []
    for source in ("from python_hooks.catalog import metastore\n", "import python_hooks\n"):
        problems = _file_violations(ADAPTER / "connections.py", source)
        assert any("only its compliance module may" in problem for problem in problems), problems


def test_the_adapter_reaches_python_hooks_only_through_its_entry_points():
    problems = _file_violations(ADAPTER / "impl.py", "from python_hooks.purge import engine\n")
    assert any("only its compliance module may" in problem for problem in problems), problems


def test_a_cycle_is_found_relative_imports_included():
    edges = [
        *_edges(HOOKS / "compaction" / "plan.py", "from . import records\n"),
        *_edges(HOOKS / "compaction" / "records.py", "def f():\n    from .plan import take_plan\n"),
    ]
    assert _cycles(edges) == [["python_hooks.compaction.plan", "python_hooks.compaction.records"]]
