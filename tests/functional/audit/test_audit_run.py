"""After dbt commands, the audit tables hold the run metadata and lineage of exactly those commands.

One class-scoped project (see conftest.py), driven in order (each command also checks what the
previous one left): build, then lineage, graph and OpenLineage checks on that build, registry
history, a command without on-run-end and a load failure, docs, and dbt retry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from python_hooks.audit import workflow_graph
from python_hooks.audit.audit_tables import SCHEMAS
from tests.python_hooks.openlineage_events import InvalidEvent, parse_events


def read_json(project: Any, name: str) -> dict[str, Any]:
    return json.loads((Path(project.project_root) / "target" / name).read_text())


def table(project: Any, name: str) -> str:
    return f"{project.test_schema}.{name}"


class TestAuditAfterCommands:
    build_results: dict[str, Any] = {}
    failed_load_id = ""

    def test_build_loads_invocation_and_exactly_its_results(self, project, spark):
        run_dbt(["build"])
        run_results = read_json(project, "run_results.json")
        TestAuditAfterCommands.build_results = run_results
        invocation_id = run_results["metadata"]["invocation_id"]

        invocation = spark.sql(
            f"select * from {table(project, 'dbt_invocations')} where invocation_id = '{invocation_id}'"
        ).collect()
        assert len(invocation) == 1
        inv = invocation[0]
        assert (inv.command, inv.status, inv.loaded_from) == ("build", "success", "on-run-end")
        assert inv.run_by and inv.host and inv.dbt_version and inv.target_schema == project.test_schema
        assert inv.started_at <= inv.ended_at
        assert json.loads(inv.args)["which"] == "build"

        loaded = {
            r.unique_id: r
            for r in spark.sql(
                f"select * from {table(project, 'dbt_node_results')} where invocation_id = '{invocation_id}'"
            ).collect()
        }
        # on-run-end sees every node result; the hooks' own results follow with the next command
        expected = {
            r["unique_id"]: r for r in run_results["results"] if not r["unique_id"].startswith("operation.")
        }
        assert set(loaded) == set(expected)
        for unique_id, result in expected.items():
            row = loaded[unique_id]
            assert row.status == result["status"], unique_id
            assert row.failures == result["failures"], unique_id
            assert row.execution_time == pytest.approx(result["execution_time"], abs=0.01), unique_id
            assert row.message == result["message"], unique_id
        assert inv.nodes_total == len(expected)
        # the warn-severity test found one bad country, and says so
        warn = [r for u, r in loaded.items() if u.startswith("test.compliance.accepted_values_customers")]
        assert [(r.status, r.failures) for r in warn] == [("warn", 1)]
        # the audit models' tables have exactly the loader's columns
        for name, schema in SCHEMAS.items():
            assert spark.table(table(project, name)).columns == schema.fieldNames()

    def test_lineage_edges_equal_the_manifest_parent_map(self, project, spark):
        invocation_id = self.build_results["metadata"]["invocation_id"]
        manifest = read_json(project, "manifest.json")
        expected = {(p, c) for c, parents in manifest["parent_map"].items() for p in parents}
        loaded = {
            (r.parent_unique_id, r.child_unique_id)
            for r in spark.sql(
                f"select * from {table(project, 'dbt_lineage_edges')} where invocation_id = '{invocation_id}'"
            ).collect()
        }
        assert loaded == expected
        assert ("seed.compliance.customers", "model.compliance.customer_revenue") in loaded

    def test_column_lineage_of_a_known_model_column_by_column(self, project, spark):
        invocation_id = self.build_results["metadata"]["invocation_id"]
        rows = spark.sql(
            f"select * from {table(project, 'dbt_column_lineage')} where invocation_id = '{invocation_id}' "
            "and model_unique_id = 'model.compliance.customer_revenue'"
        ).collect()
        got: dict[str, set[Any]] = {}
        for r in rows:
            got.setdefault(r.column_name, set()).add((r.source_unique_id, r.source_column))
        assert got == {
            "customer_id": {("seed.compliance.customers", "id")},
            "customer_name": {("seed.compliance.customers", "name")},
            "revenue": {("model.compliance.stg_orders", "amount")},
            "n_orders": {(None, None)},
            "currency": {(None, None)},
        }
        assert {r.lineage_level for r in rows} == {"column"}
        python = spark.sql(
            f"select * from {table(project, 'dbt_column_lineage')} where invocation_id = '{invocation_id}' "
            "and model_unique_id = 'model.compliance.py_scores'"
        ).collect()
        assert [(r.source_unique_id, r.lineage_level, r.is_python_model, r.column_name) for r in python] == [
            ("model.compliance.customer_revenue", "model", True, None)
        ]

    def test_workflow_graph_has_every_node(self, project):
        target = Path(project.project_root) / "target"
        manifest = read_json(project, "manifest.json")
        dot = (target / "workflow_graph.dot").read_text()
        every = set(manifest["parent_map"]) | {p for ps in manifest["parent_map"].values() for p in ps}
        # every node but the tests (counted on the nodes they test) and the hooks
        drawn = {u for u in every if u.split(".")[0] not in ("test", "unit_test", "operation")}
        missing = [u for u in drawn if f'"{u}"' not in dot]
        assert not missing
        assert not any(f'"{u}"' in dot for u in every - drawn)
        assert '"seed.compliance.customers" -> "model.compliance.customer_revenue"' in dot
        run_dot = (target / "workflow_graph_run.dot").read_text()
        assert "customer_revenue\\n(model, success)" in run_dot
        # the make target's module, with a selection: the model and its ancestors only
        out = target / "selected"
        assert (
            workflow_graph.main(
                ["--manifest", str(target / "manifest.json"), "-s", "+customer_revenue", "-o", str(out)]
            )
            == 0
        )
        selected = out.with_suffix(".dot").read_text()
        for unique_id in (
            "model.compliance.customer_revenue",
            "model.compliance.stg_orders",
            "seed.compliance.customers",
        ):
            assert f'"{unique_id}"' in selected
        assert "py_scores" not in selected and "flaky" not in selected

    def test_openlineage_file_validates_and_has_column_lineage(self, project):
        invocation_id = self.build_results["metadata"]["invocation_id"]
        path = Path(project.project_root) / "target" / "openlineage" / f"{invocation_id}.jsonl"
        assert len(parse_events(path)) >= 2
        events = [json.loads(line) for line in path.read_text().splitlines()]
        complete = [
            e
            for e in events
            if e["job"]["name"] == "model.compliance.customer_revenue" and e["eventType"] == "COMPLETE"
        ]
        assert len(complete) == 1
        output = complete[0]["outputs"][0]
        assert output["name"] == f"{project.test_schema}.customer_revenue"
        revenue = output["facets"]["columnLineage"]["fields"]["revenue"]["inputFields"]
        assert [(f["name"], f["field"]) for f in revenue] == [(f"{project.test_schema}.stg_orders", "amount")]
        assert {f["name"] for f in output["facets"]["schema"]["fields"]} >= {"customer_id", "revenue"}
        # the validation can fail: an event without a run id does not pass
        broken = path.with_name("broken.jsonl")
        event = dict(events[0])
        event["run"] = {}
        broken.write_text(json.dumps(event) + "\n")
        with pytest.raises(InvalidEvent, match="runId"):
            parse_events(broken)

    def test_registry_keeps_history_and_hook_results_complete_the_previous_command(self, project, spark):
        build_id = self.build_results["metadata"]["invocation_id"]
        model = Path(project.project_root) / "models" / "stg_orders.sql"
        model.write_text(
            model.read_text().replace("id * 1.5 as amount", "id * 1.5 as amount,\n    'x' as note")
        )
        run_dbt(["run", "--select", "stg_orders"])
        history = spark.sql(
            f"select change from {table(project, 'dbt_nodes')} "
            "where unique_id = 'model.compliance.stg_orders' order by recorded_at"
        ).collect()
        assert [r.change for r in history] == ["added", "changed"]
        unchanged = spark.sql(
            f"select count(*) as n from {table(project, 'dbt_nodes')} where unique_id = 'model.compliance.py_scores'"
        ).collect()[0]
        assert unchanged.n == 1
        # now the build's rows are exactly its run_results.json, hook results included
        loaded = {
            (r.unique_id, r.status)
            for r in spark.sql(
                f"select * from {table(project, 'dbt_node_results')} where invocation_id = '{build_id}'"
            ).collect()
        }
        assert loaded == {(r["unique_id"], r["status"]) for r in self.build_results["results"]}
        assert any(u.startswith("operation.") for u, _ in loaded)

    def test_a_failed_load_warns_and_a_command_without_hooks_is_loaded_next(self, project, spark):
        run_dbt(["run-operation", "audit_table_definition"], expect_pass=False)
        operation_id = read_json(project, "run_results.json")["metadata"]["invocation_id"]
        lineage = table(project, "dbt_column_lineage")
        spark.sql(f"alter table {lineage} rename to {lineage}_aside")
        spark.sql(f"create view {lineage} as select * from {lineage}_aside")
        try:
            results, log = run_dbt_and_capture(["run", "--select", "stg_orders"])
        finally:
            spark.sql(f"drop view {lineage}")
            spark.sql(f"alter table {lineage}_aside rename to {lineage}")
        # the run succeeded, the audit said why it could not load it
        assert [(r.node.name, r.status) for r in results if r.node.resource_type == "model"] == [
            ("stg_orders", "success")
        ]
        assert "WARNING audit: could not load this run into the audit tables" in log
        failed_id = read_json(project, "run_results.json")["metadata"]["invocation_id"]
        TestAuditAfterCommands.failed_load_id = failed_id
        invocations = table(project, "dbt_invocations")
        assert spark.sql(f"select * from {invocations} where invocation_id = '{failed_id}'").count() == 0
        # ... while its on-run-start loaded the run-operation, which has no on-run-end
        row = spark.sql(f"select * from {invocations} where invocation_id = '{operation_id}'").collect()
        assert [(r.command, r.loaded_from, r.status) for r in row] == [
            ("run-operation", "run_results.json", "error")
        ]

    def test_docs_generate_builds_the_catalog(self, project):
        run_dbt(["docs", "generate"])
        catalog = read_json(project, "catalog.json")
        revenue = catalog["nodes"]["model.compliance.customer_revenue"]
        assert set(revenue["columns"]) == {"customer_id", "customer_name", "revenue", "n_orders", "currency"}
        assert "model.compliance.dbt_invocations" in catalog["nodes"]
        assert (Path(project.project_root) / "target" / "index.html").is_file()

    def test_retry_resumes_from_the_failed_node(self, project, spark, monkeypatch):
        docs_id = read_json(project, "run_results.json")["metadata"]["invocation_id"]
        monkeypatch.setenv("AUDIT_TEST_FAIL", "1")
        results = run_dbt(["run", "--exclude", "audit"], expect_pass=False)
        statuses = {r.node.name: str(r.status) for r in results}
        assert statuses["flaky"] == "error" and statuses["after_flaky"] == "skipped"
        assert statuses["customer_revenue"] == "success"
        failed_id = read_json(project, "run_results.json")["metadata"]["invocation_id"]

        # that run's on-run-start finished the load that failed earlier, without duplicates;
        # `docs generate` is there too
        invocations = table(project, "dbt_invocations")
        earlier = spark.sql(
            f"select * from {invocations} where invocation_id in ('{self.failed_load_id}', '{docs_id}')"
        ).collect()
        assert sorted((r.command, r.status, r.loaded_from) for r in earlier) == [
            ("generate", "success", "on-run-end"),
            ("run", "success", "run_results.json"),
        ]
        per_node = spark.sql(
            f"select unique_id, count(*) as n from {table(project, 'dbt_node_results')} "
            f"where invocation_id = '{self.failed_load_id}' group by unique_id"
        ).collect()
        assert {r.unique_id for r in per_node} >= {"model.compliance.stg_orders"}
        assert all(r.n == 1 for r in per_node)

        monkeypatch.setenv("AUDIT_TEST_FAIL", "0")
        retried = run_dbt(["retry"])
        models = [r for r in retried if r.node.resource_type == "model"]
        assert sorted(r.node.name for r in models) == ["after_flaky", "flaky"]
        assert all(str(r.status) == "success" for r in models)
        assert spark.sql(f"select y from {project.test_schema}.after_flaky").collect()[0].y == 2

        retry_id = read_json(project, "run_results.json")["metadata"]["invocation_id"]
        invocations = {
            r.invocation_id: r
            for r in spark.sql(f"select * from {table(project, 'dbt_invocations')}").collect()
        }
        assert invocations[failed_id].status == "error" and invocations[failed_id].nodes_failed == 1
        assert invocations[retry_id].command == "retry" and invocations[retry_id].status == "success"
