"""Kill a dbt command (SIGKILL to its process group) in the middle of its on-run-end audit load:
its node results, column lineage, node registry and lineage edges written, its invocation row
not yet (python_hooks/audit/artifacts.py `write_audit` writes it last).  Then the next command
on the same warehouse: the killed command is in `dbt_invocations` once, with the status its
on-run-end had decided (its run record says so: docs/audit.md), no node result or lineage row
is written twice, every audit table reads, and the next command's own rows are there.

The kill point is the launcher's marker for the `dbt_invocations` write that follows the
on-run-end's `load_run` (`Fault.after`): an on-run-start that finds an earlier command to load
writes that table too, so the marker does not depend on what the target directory holds.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from tests.faults.harness import SCHEMA, Fault, Lake

# each case starts dbt and Spark processes of its own (`make test-long`)
pytestmark = pytest.mark.slow

# the cheapest command with both hooks: one model (an audit table's own, which selects no rows)
COMMAND = ("run", "--select", "dbt_invocations")
VARIABLES = json.dumps({"audit_workflow_graph": False})
ON_RUN_END = Fault(
    r"^call python_hooks\.audit\.audit_tables\.write_rows \S+ dbt_invocations ",
    after=r"^call python_hooks\.audit\.artifacts\.load_run ",
)
# the audit tables and the key that names one row of each (python_hooks/audit/audit_tables.KEYS)
KEYS = {
    "dbt_invocations": "invocation_id",
    "dbt_node_results": "result_id",
    "dbt_nodes": "node_version_id",
    "dbt_lineage_edges": "edge_id",
    "dbt_column_lineage": "lineage_id",
}


@pytest.fixture(scope="session")
def audit_lake() -> Lake:
    """An empty warehouse after one audited command (the audit tables exist, and the command's
    hook results wait in its run_results.json for the next command)."""
    lake = Lake("audit")
    lake.reset()
    first = lake.dbt(*COMMAND, "--vars", VARIABLES)
    assert first.ok, first.output[-3000:]
    lake.save()
    return lake


def invocation_of(lake: Lake, artifact: str) -> str:
    return json.loads((lake.root / "target" / artifact).read_text())["metadata"]["invocation_id"]


def rows_of(seen: dict[str, Any], table: str, invocation_id: str) -> list[dict[str, Any]]:
    return [r for r in seen[f"{SCHEMA}.{table}"]["rows"] if r["invocation_id"] == invocation_id]


def test_a_command_killed_in_its_audit_load_is_recorded_once_by_the_next(audit_lake: Lake) -> None:
    lake = audit_lake
    lake.restore()
    previous = invocation_of(lake, "run_results.json")
    killed = lake.dbt(*COMMAND, "--vars", VARIABLES, fault=ON_RUN_END)
    assert killed.killed_at
    # the killed command's manifest (written before its hooks) names it; so does the row it was writing
    dead = invocation_of(lake, "manifest.json")
    assert re.search(rf'"invocation_id": "{dead}"', killed.killed_at), killed.killed_at[:500]
    assert invocation_of(lake, "run_results.json") == previous, "the killed command wrote run_results.json"

    again = lake.dbt(*COMMAND, "--vars", VARIABLES)
    assert again.ok, again.output[-4000:]
    assert "WARNING audit" not in again.output, again.output[-4000:]
    following = invocation_of(lake, "run_results.json")
    seen = lake.inspect(SCHEMA)

    # every audit table reads, and no row of any is there twice
    for table, key in KEYS.items():
        found = seen.get(f"{SCHEMA}.{table}")
        assert found is not None, f"{table} is gone"
        assert "read_error" not in found and "describe_error" not in found, found
        assert found["count"] == len(found["rows"]), table
        twice = [k for k, n in Counter(r[key] for r in found["rows"]).items() if n > 1]
        assert not twice, f"{table}: rows written twice: {twice[:5]}"

    # the killed command: once, with the status its on-run-end decided (its run record's), and
    # the rows it wrote itself before it died (the next command writes none of them: its row
    # from the run record has no node results)
    invocations = Counter(r["invocation_id"] for r in seen[f"{SCHEMA}.dbt_invocations"]["rows"])
    assert invocations[dead] == 1, invocations
    (row,) = rows_of(seen, "dbt_invocations", dead)
    assert (row["status"], row["loaded_from"]) == ("success", "run record"), row
    assert [r["unique_id"] for r in rows_of(seen, "dbt_node_results", dead)] == [
        "model.compliance.dbt_invocations"
    ]
    edges = len(rows_of(seen, "dbt_lineage_edges", dead))
    assert edges, "the killed command's lineage edges were written before its invocation row"
    # the command before it: once, its node results once each (its hook results included, which
    # the killed command held and wrote beside its own)
    assert invocations[previous] == 1, invocations
    results = Counter(r["unique_id"] for r in rows_of(seen, "dbt_node_results", previous))
    assert results["model.compliance.dbt_invocations"] == 1, results
    assert any(node.startswith("operation.compliance.") for node in results), results
    # the next command's own rows
    (row,) = rows_of(seen, "dbt_invocations", following)
    assert (row["status"], row["loaded_from"]) == ("success", "on-run-end"), row
    assert [r["unique_id"] for r in rows_of(seen, "dbt_node_results", following)] == [
        "model.compliance.dbt_invocations"
    ]
    assert len(rows_of(seen, "dbt_lineage_edges", following)) == edges
