"""Where the product keeps state: the process's one `Driver` and each command's `Command`
(`adapter/.../driver.py`), and nowhere else at module level.

Read from the source with `ast`, like the layering test: no module of `python_hooks/` or the adapter
rebinds a module global (`global`), binds a lower-case module name to a mutable container, a lock
or None (state waiting to be set), or gives a class a mutable attribute its instances share; and
only `driver.py` makes a `Driver`.  Upper-case names are
constants (the audit tables' schemas, escape sets) and are never mutated.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("python_hooks", "adapter/src")
DRIVER_MODULE = REPO / "adapter/src/dbt/adapters/lakehouse/driver.py"
MUTABLE_CALLS = frozenset(
    {
        "dict",
        "list",
        "set",
        "defaultdict",
        "OrderedDict",
        "Counter",
        "deque",
        "Lock",
        "RLock",
        "Event",
        "local",
    }
)
MUTABLE_DISPLAYS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _called(value: ast.expr) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    function = value.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def module_state(source: str) -> list[str]:
    """What in `source` is module-level state (empty when there is none)."""
    found = []
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Name) or target.id.isupper() or target.id.startswith("__"):
                continue
            mutable = isinstance(value, MUTABLE_DISPLAYS) or _called(value) in MUTABLE_CALLS
            unset = isinstance(value, ast.Constant) and value.value is None
            if mutable or unset:
                found.append(f"line {node.lineno}: module name {target.id!r} holds state")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                value = item.value if isinstance(item, (ast.Assign, ast.AnnAssign)) else None
                if value is not None and (
                    isinstance(value, MUTABLE_DISPLAYS) or _called(value) in MUTABLE_CALLS
                ):
                    found.append(f"line {item.lineno}: class {node.name} shares a mutable attribute")
        if isinstance(node, ast.Global):
            found.append(f"line {node.lineno}: `global {', '.join(node.names)}` rebinds module state")
    return found


def _sources() -> list[Path]:
    return sorted(path for root in ROOTS for path in (REPO / root).rglob("*.py"))


def test_no_module_of_the_product_holds_state():
    found = [
        f"{path.relative_to(REPO)} {what}" for path in _sources() for what in module_state(path.read_text())
    ]
    assert found == []


def test_only_the_driver_module_makes_a_driver():
    makers = [
        path.relative_to(REPO)
        for path in _sources()
        for node in ast.walk(ast.parse(path.read_text()))
        if _called(node) == "Driver"  # type: ignore[arg-type]
    ]
    assert makers == [DRIVER_MODULE.relative_to(REPO)]


@pytest.mark.parametrize(
    "source",
    [
        "_held = {}",
        "cache: dict[str, int] = dict()",
        "import threading\n_guard = threading.Lock()",
        "_session = None",
        "from typing import Any\n_session: Any = None",
        "def start():\n    global started\n    started = True",
        "seen = [x for x in range(3)]",
        "class C:\n    seen: list[int] = []",
    ],
)
def test_state_is_found(source):
    assert module_state(source)


@pytest.mark.parametrize(
    "source",
    [
        "SCHEMAS = {'a': 1}",
        "__all__ = ['x']",
        "import re\n_NAME = re.compile('x')",
        "def f():\n    cache = {}\n    return cache",
        "class C:\n    command: object | None = None\n    __slots__ = ('a',)",
    ],
)
def test_constants_and_locals_are_not_state(source):
    assert module_state(source) == []
