"""The import layering of the project's Python (import-linter's idea, with ast; no network).

    adapter (dbt.adapters.lakehouse)   imports nothing from python_hooks
    python_hooks.errors                the one error type and result shape; imports no package of python_hooks
    python_hooks.catalog               metastore and filesystem primitives; imports no capability package
    python_hooks.<capability>          purge, retention, restore, audit, erasure, compaction: import catalog
                                       and errors only,
                                       never each other

and no module imports another module's `_private` names (`from m import _x`, or `m._x` on an
imported module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ADAPTER = REPO / "adapter" / "src" / "dbt" / "adapters" / "lakehouse"
HOOKS = REPO / "python_hooks"
CAPABILITIES = ("purge", "retention", "restore", "audit", "erasure", "compaction")


def _module_name(path: Path) -> str:
    if path.is_relative_to(HOOKS):
        parts = path.relative_to(REPO).with_suffix("").parts
    else:
        parts = ("dbt", "adapters", "lakehouse", *path.relative_to(ADAPTER).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[Path]:
    return sorted([*HOOKS.rglob("*.py"), *ADAPTER.rglob("*.py")])


def _imports(tree: ast.AST) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of a file, nested ones too."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names], node.lineno))
    return found


def _package(module: str) -> str | None:
    """`python_hooks.<package>` of a python_hooks module (the top module for errors), else None."""
    parts = module.split(".")
    if parts[0] != "python_hooks":
        return None
    return ".".join(parts[:2]) if len(parts) > 1 else "python_hooks"


def _imported_modules(module: str, names: list[str]) -> list[str]:
    """The modules an import statement reaches: `from python_hooks.catalog import tables` reaches
    python_hooks.catalog.tables when that is a module, else python_hooks.catalog."""
    reached = []
    for name in names or [""]:
        candidate = f"{module}.{name}" if name else module
        path = REPO / Path(*candidate.split("."))
        reached.append(candidate if (path.with_suffix(".py").is_file() or path.is_dir()) else module)
    return reached


def _violations() -> list[str]:
    return [problem for path in _sources() for problem in _file_violations(path, path.read_text())]


def _file_violations(path: Path, text: str) -> list[str]:
    problems = []
    tree = ast.parse(text, str(path))
    me = _module_name(path)
    my_package = _package(me)
    for module, names, line in _imports(tree):
        where = f"{path.relative_to(REPO)}:{line}"
        for target in _imported_modules(module, names):
            theirs = _package(target)
            if me.startswith("dbt.adapters.lakehouse") and target.startswith("python_hooks"):
                problems.append(f"{where}: the adapter imports {target}")
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
    project_modules: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0]
            in (
                "python_hooks",
                "dbt",
            )
        ):
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if (REPO / Path(*target.split("."))).with_suffix(".py").is_file() or target.startswith(
                    "dbt.adapters.lakehouse."
                ):
                    project_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
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


def test_the_sources_are_found():
    names = {_module_name(p) for p in _sources()}
    assert {"python_hooks.catalog.metastore", "python_hooks.errors", "dbt.adapters.lakehouse.impl"} <= names
    assert all(f"python_hooks.{c}" in names for c in CAPABILITIES)


def test_the_layers_import_only_downwards():
    assert _violations() == []


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "from python_hooks.retention import engine\n",
            "python_hooks.restore imports python_hooks.retention",
        ),
        ("from python_hooks.catalog.metastore import _catalog\n", "private name"),
        ("from python_hooks.catalog import metastore\nmetastore._jvm(None)\n", "private name metastore._jvm"),
    ],
)
def test_a_violation_is_found(source, expected):
    problems = _file_violations(HOOKS / "restore" / "probe.py", source)
    assert any(expected in problem for problem in problems), problems
