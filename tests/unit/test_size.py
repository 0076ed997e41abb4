"""Every unit of the product stays readable: no Python function of python_hooks/, adapter/,
scripts/ (what `make demo` and the services run) or models/ (the Python models), and no macro
or materialization under macros/ or the adapter's own macros, is longer than 80 lines; no class
is longer than 250, and no module of the purge (python_hooks/purge/) longer than 250.

The limit is on the unit a newcomer reads at once: a function, a macro.  Eighty lines fit on a
screen, so each can be read whole and understood from its name, its signature and its body,
without scrolling back for a CTE or a branch defined fifty lines up.  The check reads the source
itself (Python's ast for functions, a regular expression for Jinja's macro and materialization
blocks), so it needs neither Spark nor a dbt parse and runs in the unit suite.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 80
CLASS_LIMIT = 250
MODULE_LIMIT = 250
MODULE_ROOT = "python_hooks/purge"
PYTHON_ROOTS = ("python_hooks", "adapter", "scripts", "models")
MACRO_ROOTS = ("macros", "adapter/src/dbt/include")
BLOCK = re.compile(r"{%-?\s*(macro|materialization)\s+(\w+).*?{%-?\s*end(macro|materialization)\s*-?%}", re.S)


def python_units() -> list[tuple[str, ast.AST]]:
    """(file, node) of every function and class of PYTHON_ROOTS, each file parsed once."""
    found = []
    for root in PYTHON_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.append((str(path.relative_to(REPO)), node))
    return found


def _lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1


def long_functions() -> list[str]:
    return [
        f"{name}:{node.name} has {_lines(node)} lines"
        for name, node in python_units()
        if not isinstance(node, ast.ClassDef) and _lines(node) > LIMIT
    ]


def long_classes() -> list[str]:
    return [
        f"{name}:{node.name} has {_lines(node)} lines"
        for name, node in python_units()
        if isinstance(node, ast.ClassDef) and _lines(node) > CLASS_LIMIT
    ]


def long_modules() -> list[str]:
    """The purge's modules over MODULE_LIMIT lines: each is one step or one fact of the engine
    (planning, the id table, footers, skipping, scanning, rewriting, committing, results...)."""
    found = []
    for path in sorted((REPO / MODULE_ROOT).rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > MODULE_LIMIT:
            found.append(f"{path.relative_to(REPO)} has {lines} lines")
    return found


def macro_blocks() -> list[tuple[str, str, int]]:
    """(file:name, macro or materialization, lines) of every block under MACRO_ROOTS."""
    found = []
    for path in sorted(p for root in MACRO_ROOTS for p in (REPO / root).rglob("*.sql")):
        for match in BLOCK.finditer(path.read_text()):
            found.append(
                (f"{path.relative_to(REPO)}:{match.group(2)}", match.group(1), match.group(0).count("\n") + 1)
            )
    return found


def long_macros() -> list[str]:
    return [f"{name} has {length} lines" for name, _, length in macro_blocks() if length > LIMIT]


def test_the_check_sees_what_it_limits():
    for root in (*PYTHON_ROOTS, *MACRO_ROOTS, MODULE_ROOT):
        assert (REPO / root).is_dir(), f"{root}/ is missing: the size check would pass vacuously"
    assert {kind for _, kind, _ in macro_blocks()} == {"macro", "materialization"}
    # the adapter's materializations are seen too (snapshot, incremental, table...)
    assert any(name.startswith("adapter/") and kind == "materialization" for name, kind, _ in macro_blocks())
    # ... and the Python models' functions
    assert any(name.startswith("models/") for name, _ in python_units())


def test_no_function_is_over_80_lines():
    assert long_functions() == []


def test_no_macro_or_materialization_is_over_80_lines():
    assert long_macros() == []


def test_no_class_is_over_250_lines():
    assert long_classes() == []


def test_no_module_of_the_purge_is_over_250_lines():
    assert len(list((REPO / MODULE_ROOT).rglob("*.py"))) > 10, (
        "the purge's modules are not where the check looks"
    )
    assert long_modules() == []
