"""What macros may call and set is declared once: every typed entry point of
`dbt.adapters.lakehouse.compliance` is called by a macro of the product, every other `@available`
method of the plugin that no macro calls is a documented macro API (README), and every var the
product reads is declared, with its default, in dbt_project.yml (the compaction inputs excepted:
setting one is what enables its compaction, and dbt_project.yml says so)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "adapter" / "src" / "dbt" / "adapters" / "lakehouse"
AVAILABLE = re.compile(r"@available(?:\.\w+)?(?:\([^)]*\))?\s*\n\s*def (\w+)\(")
# var('x'), and the product's typed readers of one: bool_var('x'), positive_int_var('x', 1), ...
VAR = re.compile(r"""\b(?:\w+_)?var\(\s*['"](\w+)['"]""")
# enabled by being set (dbt_project.yml's comment on them; macros/common/capabilities.sql)
COMPACTION_INPUTS = {
    "page_view_hourly_input",
    "page_view_expected_counts",
    "member_snapshot",
    "member_deltas",
}


def product_sql() -> str:
    """The product's macros, models and snapshots, and the models' yml (where model configs read vars)."""
    return "\n".join(
        path.read_text()
        for root in ("macros", "models", "snapshots")
        for pattern in ("*.sql", "*.yml")
        for path in (REPO / root).rglob(pattern)
    )


def available(module: str) -> list[str]:
    return AVAILABLE.findall((PLUGIN / module).read_text())


def test_every_entry_point_is_called_by_a_macro():
    names = available("compliance.py")
    assert len(names) > 20, names  # the pattern still finds them
    sql = product_sql()
    assert [n for n in names if not re.search(rf"\badapter\.{n}\(", sql)] == []


def test_every_other_available_method_is_called_or_documented():
    names = available("impl.py")
    assert names, "no @available method found in impl.py"
    sql, readme = product_sql(), (REPO / "README.md").read_text()
    unused = [n for n in names if not re.search(rf"\badapter\.{n}\(", sql)]
    assert [n for n in unused if f"`{n}`" not in readme and f"adapter.{n}(" not in readme] == []


def test_every_var_the_product_reads_is_declared():
    declared = set(yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"])
    python = "\n".join(path.read_text() for path in (REPO / "python_hooks").rglob("*.py"))
    used = set(VAR.findall(product_sql())) | set(VAR.findall(python))
    assert len(used) > 40, sorted(used)
    assert sorted(used - declared - COMPACTION_INPUTS) == []
    assert COMPACTION_INPUTS <= used and not COMPACTION_INPUTS & declared
    comment = (REPO / "dbt_project.yml").read_text()
    assert all(name in comment for name in COMPACTION_INPUTS)
