"""The id table's source (models/purge/_purge__sources.yml) names the table the purge reads.

The purge and every macro take the id table's name from `table_name_parts`
(python_hooks/purge/id_table.py, through `compliance.id_table_name`); a sources yml cannot call
the adapter, so it splits var `compliance_id_table` itself.  Rendered here with the var set as a
user might write it, the two must give the same database and table.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
import yaml

from python_hooks.purge.id_table import table_name_parts

REPO = Path(__file__).resolve().parents[2]


def rendered(value: str) -> tuple[str, str]:
    """(schema, identifier) of the id table's source with var compliance_id_table = `value`."""
    source = yaml.safe_load((REPO / "models/purge/_purge__sources.yml").read_text())["sources"][0]
    table = next(t for t in source["tables"] if t["name"] == "id_table")

    def var(name: str, default: str = "") -> str:
        return value if name == "compliance_id_table" else default

    def render(text: str) -> str:
        return jinja2.Environment().from_string(text).render(var=var)

    return render(source["schema"]), render(table["identifier"])


@pytest.mark.parametrize("value", ["u_purger.guestids", " U_Purger.GuestIds ", "db1.t_2\n"])
def test_the_source_names_the_table_the_purge_reads(value: str) -> None:
    assert rendered(value) == table_name_parts(value)
