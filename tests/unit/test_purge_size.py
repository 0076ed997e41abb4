"""The purge stays readable: no function of its engine (python_hooks/purge) and no macro of
macros/purge is longer than 80 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 80


def long_functions() -> list[str]:
    found = []
    for path in sorted((REPO / "python_hooks" / "purge").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > LIMIT:
                    found.append(f"{path.name}:{node.name} has {length} lines")
    return found


def long_macros() -> list[str]:
    found = []
    pattern = re.compile(
        r"{%-?\s*(macro|materialization)\s+(\w+).*?{%-?\s*end(macro|materialization)\s*-?%}", re.S
    )
    for path in sorted((REPO / "macros" / "purge").glob("*.sql")):
        for match in pattern.finditer(path.read_text()):
            length = match.group(0).count("\n") + 1
            if length > LIMIT:
                found.append(f"{path.name}:{match.group(2)} has {length} lines")
    return found


def test_no_purge_function_is_over_80_lines():
    assert long_functions() == []


def test_no_purge_macro_is_over_80_lines():
    assert long_macros() == []
