"""No macro of the product shadows one of dbt's or an adapter's by accident.

A root project's macro wins over the global ones of the same name, so a product macro named like
one of dbt-spark's (say `tblproperties_clause`) silently replaces it for every model of the
project: the models' `tblproperties` config would be dropped.  Only deliberate overrides pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import dbt.include

REPO = Path(__file__).resolve().parents[2]
INCLUDE = Path(dbt.include.__path__[0])
DELIBERATE = {"generate_schema_name"}  # dbt's documented override point
MACRO = re.compile(r"{%-?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def macro_names(root: Path) -> set[str]:
    return {name for path in root.rglob("*.sql") for name in MACRO.findall(path.read_text())}


def test_no_product_macro_shadows_a_dbt_or_adapter_macro():
    ours = macro_names(REPO / "macros") | macro_names(REPO / "demo" / "macros")
    theirs = macro_names(INCLUDE)
    assert theirs, f"no macros found under {INCLUDE}"
    prefixed = {name.split("__", 1)[1] for name in theirs if "__" in name}
    shadowed = sorted((ours & (theirs | prefixed)) - DELIBERATE)
    assert not shadowed, f"these product macros replace dbt's or an adapter's of the same name: {shadowed}"
