"""Project checks over target/manifest.json (dbt-checkpoint's idea, as a local pre-commit hook).

    python -m tools.manifest_checks target/manifest.json

Checks every model of the project's own package (and that seeds and sources are described):
- the model has a description, documents at least one column, and every documented column has
  a description;
- the model has at least one data test or unit test;
- the SQL names no table directly (`from db.table` / `join db.table` outside Jinja): use
  `ref()`, `source()` or a var, so lineage and environments work.
Prints one line per finding and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
SQL_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
STRINGS = re.compile(r"'(?:[^'\\]|\\.)*'")
IDENT = r"`?[A-Za-z_][\w$]*`?"
HARD_CODED = re.compile(rf"\b(from|join)\s+({IDENT}\s*\.\s*{IDENT}(?:\s*\.\s*{IDENT})?)", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    path: str
    node: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.node}: [{self.check}] {self.message}"


def hard_coded_tables(raw_sql: str) -> list[str]:
    """Dotted table names after FROM/JOIN outside Jinja, comments and string literals."""
    text = STRINGS.sub("''", SQL_COMMENTS.sub(" ", JINJA.sub(" __jinja__ ", raw_sql)))
    return [re.sub(r"[\s`]+", "", m.group(2)) for m in HARD_CODED.finditer(text)]


def check_manifest(manifest: Mapping[str, Any], package: str | None = None) -> list[Finding]:
    package = package or (manifest.get("metadata") or {}).get("project_name")
    nodes = manifest.get("nodes", {})
    unit_tests = manifest.get("unit_tests", {})
    child_map = manifest.get("child_map", {})
    tested_by_unit = {(u.get("model") or "") for u in unit_tests.values()}
    findings: list[Finding] = []
    for unique_id, node in sorted(nodes.items()):
        if node.get("resource_type") != "model" or (package and node.get("package_name") != package):
            continue
        path = node.get("original_file_path") or unique_id
        name = node.get("name") or unique_id
        if not (node.get("description") or "").strip():
            findings.append(Finding(path, name, "description", "the model has no description in its yml"))
        columns = node.get("columns") or {}
        if not columns:
            findings.append(Finding(path, name, "columns", "no column is documented in its yml"))
        for column, spec in sorted(columns.items()):
            if not (spec.get("description") or "").strip():
                findings.append(Finding(path, name, "columns", f"column `{column}` has no description"))
        tests = [c for c in child_map.get(unique_id, []) if c.startswith(("test.", "unit_test."))]
        if not tests and name not in tested_by_unit:
            findings.append(Finding(path, name, "tests", "the model has no data test or unit test"))
        if node.get("language", "sql") == "sql":
            for table in hard_coded_tables(node.get("raw_code") or ""):
                findings.append(
                    Finding(
                        path, name, "hard-coded", f"`{table}` is named directly: use ref(), source() or a var"
                    )
                )
    for section, kind in (("nodes", "seed"), ("sources", "source")):
        for unique_id, node in sorted(manifest.get(section, {}).items()):
            if node.get("resource_type") != kind or (package and node.get("package_name") != package):
                continue
            path = node.get("original_file_path") or unique_id
            name = node.get("name") or unique_id
            if kind == "source":
                name = f"{node.get('source_name')}.{name}"
            if not (node.get("description") or "").strip():
                findings.append(
                    Finding(path, name, "description", f"the {kind} has no description in its yml")
                )
            for column, spec in sorted((node.get("columns") or {}).items()):
                if not (spec.get("description") or "").strip():
                    findings.append(Finding(path, name, "columns", f"column `{column}` has no description"))
    return findings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.manifest_checks", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("manifest", nargs="?", default="target/manifest.json")
    parser.add_argument("--package", default=None, help="package to check (default: the manifest's project)")
    args = parser.parse_args(argv)
    path = Path(args.manifest)
    if not path.is_file():
        print(f"{path} does not exist: run `dbt parse` first", file=sys.stderr)
        return 2
    findings = check_manifest(json.loads(path.read_text()), args.package)
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s) in {path}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
