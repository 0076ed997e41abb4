"""Row building of the audit loader (pure functions, no Spark)."""

from datetime import datetime

import pytest

from python_hooks.audit import artifacts, pending
from python_hooks.audit import rows as audit_rows
from tests.conftest import REPO


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


def test_refusal_records_are_read_from_the_directories_given(tmp_path):
    refusals = tmp_path / ".dbt-refusals"
    refusals.mkdir()
    (refusals / "2-b.json").write_text('{"invocation_id": "b"}')
    (refusals / "1-a.json").write_text('{"invocation_id": "a"}')
    (refusals / "3-torn.json").write_text('{"invocation_id": ')
    (refusals / "notes.txt").write_text("not a record")
    # a local directory needs no session; a missing one holds nothing
    found = pending.refusal_records(None, [str(refusals), str(tmp_path / "missing")])
    assert [record["invocation_id"] for record, _ in found] == ["a", "b"]
    found[0][1]()
    assert sorted(p.name for p in refusals.iterdir()) == ["2-b.json", "3-torn.json", "notes.txt"]
    assert [r["invocation_id"] for r, _ in pending.refusal_records(None, [f"file:{refusals}"])] == ["b"]
    assert pending.refusal_records(None, []) == []


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


def test_a_run_record_gives_the_status_of_a_command_adopted_from_its_run_results():
    # every node that ran succeeded: the status comes from the record, never from the results
    run_results = {
        "metadata": {"invocation_id": "p1", "generated_at": "2024-05-01T10:00:10Z"},
        "args": {"which": "run"},
        "results": [{"unique_id": "model.p.m", "status": "success"}],
    }
    # its on-run-start ran, its on-run-end never did: only dbt's interrupt (Ctrl-C) writes
    # run_results.json then
    interrupted = pending.previous_invocation(run_results, "lakehouse", {"phase": "running"})
    assert (interrupted["status"], interrupted["loaded_from"]) == ("cancelled", "run_results.json")
    # its on-run-end decided `cancelled` and its load failed
    ended = pending.previous_invocation(run_results, "lakehouse", {"phase": "ended", "status": "cancelled"})
    assert ended["status"] == "cancelled" and "SIGINT" in ended["message"]
    # a command without hooks (run-operation): from its results
    connected = pending.previous_invocation(run_results, "lakehouse", {"phase": "connected"})
    assert connected["status"] == "success"


def test_a_warehouse_is_named_alike_by_its_profile_and_by_its_session(tmp_path, monkeypatch):
    # the adapter records a command from the profile's settings before its session starts; the
    # hooks name the warehouse from the session's, which Spark has qualified
    monkeypatch.chdir(tmp_path)
    derby = "jdbc:derby:;databaseName=.warehouse/metastore_db;create=true"
    url = "spark.hadoop.javax.jdo.option.ConnectionURL"
    profile = {"spark.sql.warehouse.dir": ".warehouse/warehouse", url: derby}
    session = {"spark.sql.warehouse.dir": f"file:{tmp_path}/.warehouse/warehouse", url: derby}
    expected = {
        "warehouse": f"file:{tmp_path}/.warehouse/warehouse",
        "metastore": f"derby {tmp_path}/.warehouse/metastore_db",
    }
    assert pending.warehouse_identity(profile) == pending.warehouse_identity(session) == expected
    assert (
        pending.warehouse_identity(
            {**session, "spark.sql.warehouse.dir": f"file://{tmp_path}/.warehouse/warehouse/"}
        )
        == expected
    )
    # another warehouse, or the same warehouse directory with another metastore, is another one
    assert pending.warehouse_identity({**profile, "spark.sql.warehouse.dir": "wh-prod"}) != expected
    assert pending.warehouse_identity({**profile, url: derby.replace("metastore_db", "ms2")}) != expected
    thrift = {
        "spark.sql.warehouse.dir": "hdfs://nn:8020/wh/",
        "spark.hadoop.hive.metastore.uris": "thrift://ms:9083",
    }
    assert pending.warehouse_identity(thrift) == {
        "warehouse": "hdfs://nn:8020/wh",
        "metastore": "thrift thrift://ms:9083",
    }


def _accepted_invocation_statuses() -> list[str]:
    import yaml

    models = yaml.safe_load((REPO / "models" / "audit" / "_audit__models.yml").read_text())["models"]
    columns = next(m for m in models if m["name"] == "dbt_invocations")["columns"]
    tests = next(c for c in columns if c["name"] == "status")["data_tests"]
    accepted = next(t["accepted_values"] for t in tests if isinstance(t, dict) and "accepted_values" in t)
    return list(accepted["arguments"]["values"])


def test_the_schema_test_accepts_exactly_the_statuses_the_product_writes():
    assert sorted(_accepted_invocation_statuses()) == sorted(audit_rows.INVOCATION_STATUSES)
    # and the product can write no other: a row with a status the yml does not list is refused
    with pytest.raises(ValueError, match="not one of"):
        audit_rows.invocation_row(
            "x",
            {},
            [],
            target_name=None,
            target_schema=None,
            dbt_version=None,
            project_name=None,
            started_at=None,
            ended_at=None,
            loaded_from="on-run-end",
            status="aborted",
        )


def test_every_status_the_code_writes_to_dbt_invocations_is_a_known_one():
    # status="..." literals given to invocation rows, and row.update(status=...) in the loaders
    import re

    written = set()
    adapter = REPO / "adapter" / "src" / "dbt" / "adapters" / "lakehouse" / "compliance.py"
    for path in [*(REPO / "python_hooks" / "audit").glob("*.py"), adapter]:
        text = path.read_text()
        written |= set(re.findall(r'status="([a-z_]+)"', text))
        written |= set(re.findall(r'status = "([a-z_]+)"', text))
    written |= {"success", "error"}  # derived from the results
    assert written <= set(audit_rows.INVOCATION_STATUSES), written - set(audit_rows.INVOCATION_STATUSES)
    assert {"cancelled", "interrupted", "refused"} <= written


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


def test_a_load_without_a_manifest_is_reported_not_raised(tmp_path, spark):
    report = artifacts.load_run(spark, results=[], invocation_id="x", target_path=str(tmp_path))
    assert report["ok"] is False
    assert "manifest.json does not exist" in report["error"] and str(tmp_path) in report["error"]
    # the command ended all the same: the next one records it with this status, not `interrupted`
    record = pending.run_record(tmp_path, "x")
    assert (record["phase"], record["status"], record.get("loaded")) == ("ended", "success", None)
