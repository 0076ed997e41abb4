"""Row building of the audit loader (pure functions, no Spark)."""

from datetime import datetime

from python_hooks.audit import artifacts, pending
from python_hooks.audit import rows as audit_rows


def manifest(checksum="abc"):
    return {
        "nodes": {
            "model.p.m": {
                "resource_type": "model",
                "name": "m",
                "schema": "db",
                "alias": "m",
                "package_name": "p",
                "original_file_path": "models/m.sql",
                "checksum": {"name": "sha256", "checksum": checksum},
                "config": {"materialized": "table", "tags": ["purge"]},
                "tags": ["purge"],
                "description": "a model",
            }
        },
        "macros": {
            "macro.p.x": {"resource_type": "macro", "name": "x", "macro_sql": "{% macro x() %}{% endmacro %}"}
        },
    }


def test_registry_records_added_changed_and_removed_only():
    first = audit_rows.node_registry_rows("i1", manifest(), {})
    assert {(r["unique_id"], r["change"]) for r in first} == {("model.p.m", "added"), ("macro.p.x", "added")}
    known = {r["unique_id"]: r["checksum"] for r in first}
    assert audit_rows.node_registry_rows("i2", manifest(), known) == []
    changed = audit_rows.node_registry_rows("i3", manifest("def"), known)
    assert [(r["unique_id"], r["change"], r["relation_name"], r["tags"]) for r in changed] == [
        ("model.p.m", "changed", "db.m", ["purge"])
    ]
    gone = {"nodes": {}, "macros": manifest()["macros"]}
    assert [(r["unique_id"], r["change"]) for r in audit_rows.node_registry_rows("i4", gone, known)] == [
        ("model.p.m", "removed")
    ]


def test_refusal_record_becomes_a_refused_invocation():
    row = pending.refusal_row(
        {
            "invocation_id": "abc",
            "command": "dbt run --select purge+",
            "holder": "pid 42 on h, running `dbt build` since t",
            "warehouse": "/wh",
            "refused_at": "2024-05-01T10:00:00+00:00",
            "user": "ana",
            "host": "h2",
        }
    )
    assert (row["invocation_id"], row["command"], row["status"], row["run_by"], row["host"]) == (
        "abc",
        "run",
        "refused",
        "ana",
        "h2",
    )
    assert row["ended_at"] == datetime(2024, 5, 1, 10, 0) and "pid 42" in row["message"]


def test_previous_run_results_become_an_invocation_with_its_status():
    run_results = {
        "metadata": {"invocation_id": "op1", "generated_at": "2024-05-01T10:00:10Z", "dbt_version": "1.11"},
        "elapsed_time": 10.0,
        "args": {"which": "run-operation", "macro": "restore", "vars": {"x": 1}},
        "results": [{"unique_id": "operation.p.restore", "status": "error"}],
    }
    row = pending.previous_invocation(run_results, "lakehouse")
    assert (row["command"], row["status"], row["nodes_failed"], row["loaded_from"]) == (
        "run-operation",
        "error",
        1,
        "run_results.json",
    )
    assert row["started_at"] == datetime(2024, 5, 1, 10, 0) and row["vars"] == '{"x": 1}'


def test_node_results_carry_timings_failures_and_rows_affected():
    results = [
        {
            "unique_id": "model.p.m",
            "status": "success",
            "execution_time": 1.5,
            "timing": [
                {
                    "name": "compile",
                    "started_at": "2024-05-01T10:00:00Z",
                    "completed_at": "2024-05-01T10:00:01Z",
                },
                {
                    "name": "execute",
                    "started_at": "2024-05-01T10:00:01Z",
                    "completed_at": "2024-05-01T10:00:02Z",
                },
            ],
            "adapter_response": {"rows_affected": 7},
            "message": "OK",
        },
        {"unique_id": "test.p.t", "status": "fail", "failures": 3, "adapter_response": {"rows_affected": -1}},
    ]
    rows = audit_rows.node_result_rows("i", results, manifest(), {"model.p.m": (["a/x=1"], ["b/x=1"])})
    m, t = rows
    assert (m["result_id"], m["materialization"], m["rows_affected"], m["partitions_written"]) == (
        "i:model.p.m",
        "table",
        7,
        ["b/x=1"],
    )
    assert m["execute_started_at"] == datetime(2024, 5, 1, 10, 0, 1) and m["completed_at"] == datetime(
        2024, 5, 1, 10, 0, 2
    )
    assert (t["status"], t["failures"], t["rows_affected"], t["resource_type"]) == ("fail", 3, None, "test")


def test_a_load_without_a_manifest_is_reported_not_raised(tmp_path):
    report = artifacts.load_run(None, results=[], invocation_id="x", target_path=str(tmp_path))
    assert report["ok"] is False
    assert "manifest.json does not exist" in report["error"] and str(tmp_path) in report["error"]
