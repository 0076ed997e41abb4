"""How the audit hooks write: one parquet file per table and command, no Spark job, no table scan.

The rows must read back typed as the tables declare them (timestamps as the same instants, arrays
as arrays), a table the file writer does not handle must still get its rows (Spark's writer),
and what the hooks remember between commands (the node registry's latest versions, what the last
on-run-end loaded) must be dropped as soon as anything else changed the table.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbt.tests.util import run_dbt

from python_hooks.audit import artifacts, audit_tables, pending
from python_hooks.catalog import metastore, parquet_append
from tests import warehouse_fs


def table(project: Any, name: str) -> str:
    return f"{project.test_schema}.{name}"


def spark_jobs(spark: Any) -> set[int]:
    return set(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


def data_files(spark: Any, relation: str) -> list[str]:
    """The names of the data files directly in the table's directory, on the warehouse's filesystem."""
    location = spark.sql(f"describe formatted {relation}").where("col_name = 'Location'").first().data_type
    return [name for name in warehouse_fs.listdir(spark, location) if not name.startswith(("_", "."))]


def scope_key(project: Any, spark: Any) -> str:
    return pending.scope_key(pending.warehouse_of(spark), project.test_schema)


def held_file(project: Any, spark: Any) -> Path:
    """This warehouse's held file in the project's target directory."""
    return pending.held_path(Path(project.project_root) / "target", scope_key(project, spark))


def statuses(project: Any, spark: Any, invocation_id: str) -> list[str]:
    """The statuses dbt_invocations holds for one command (one, when it is recorded once)."""
    rows = spark.sql(
        f"select status from {table(project, 'dbt_invocations')} where invocation_id = '{invocation_id}'"
    ).collect()
    return [r.status for r in rows]


def tidy(project: Any, spark: Any, command: str) -> None:
    """What a test's pretend `command` left in target/: its held file and its running mark."""
    held = held_file(project, spark)
    if held.exists():
        held.unlink()
    pending.clear_running(Path(project.project_root) / "target", command)


def invocation(invocation_id: str, started: datetime) -> dict[str, Any]:
    return {
        "invocation_id": invocation_id,
        "command": "run",
        "started_at": started,
        "nodes_total": 3,
        "full_refresh": False,
        "status": "success",
    }


class TestAuditWrites:
    def test_rows_land_as_one_parquet_file_without_a_spark_job(self, project, spark):
        run_dbt(["run", "--select", "stg_orders"])
        invocations = table(project, "dbt_invocations")
        before_files, before_jobs = data_files(spark, invocations), spark_jobs(spark)
        started = datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=timezone.utc)  # a DST night in Europe
        assert (
            audit_tables.write_rows(spark, invocations, "dbt_invocations", [invocation("w-1", started)]) == 1
        )
        assert spark_jobs(spark) == before_jobs
        new = sorted(set(data_files(spark, invocations)) - set(before_files))
        assert len(new) == 1 and new[0].startswith("part-") and new[0].endswith(".snappy.parquet")
        row = spark.sql(
            f"select unix_micros(started_at) as at, nodes_total, full_refresh, status from {invocations} "
            "where invocation_id = 'w-1'"
        ).first()
        micros = int(started.timestamp()) * 1_000_000 + started.microsecond
        assert (row.at, row.nodes_total, row.full_refresh, row.status) == (micros, 3, False, "success")
        results = table(project, "dbt_node_results")
        audit_tables.write_rows(
            spark,
            results,
            "dbt_node_results",
            [
                {
                    "result_id": "w-1:x",
                    "invocation_id": "w-1",
                    "partitions_written": ["db.t/ds=a", "db.t/ds=b"],
                }
            ],
        )
        written = spark.sql(f"select partitions_written from {results} where result_id = 'w-1:x'").first()[0]
        assert written == ["db.t/ds=a", "db.t/ds=b"]

    def test_a_table_the_file_writer_does_not_handle_gets_its_rows_from_spark(self, project, spark):
        orc = table(project, "invocations_orc")
        spark.sql(f"create table {orc} like {table(project, 'dbt_invocations')} using orc")
        meta = audit_tables.table_metadata(spark, orc)
        assert not parquet_append.append_rows(
            spark, meta, metastore.schema_fields(meta), [tuple([None] * 20)]
        )
        started = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
        audit_tables.write_rows(spark, orc, "dbt_invocations", [invocation("w-orc", started)])
        row = spark.sql(f"select unix_seconds(started_at) as at, status from {orc}").collect()
        assert [(r.at, r.status) for r in row] == [(int(started.timestamp()), "success")]

    def test_saved_state_is_dropped_when_anything_else_changes_the_table(self, project, spark):
        nodes = table(project, "dbt_nodes")
        audit_tables.write_side_state(spark, nodes, "_probe_state.json", {"model.x": "abc"})
        assert audit_tables.read_side_state(spark, nodes, "_probe_state.json") == {"model.x": "abc"}
        local = Path(project.project_root) / "target" / "_probe_local_state.json"
        audit_tables.write_local_state(spark, [nodes], local, {"invocation_id": "x"})
        assert audit_tables.read_local_state(spark, [nodes], local) == {"invocation_id": "x"}
        assert audit_tables.read_local_state(spark, [table(project, "dbt_invocations")], local) is None
        # the state file is hidden from readers: the table's rows are unchanged by it
        assert spark.sql(f"select count(*) from {nodes} where unique_id = 'model.x'").first()[0] == 0
        spark.sql(
            f"insert into {nodes} (node_version_id, unique_id, change) values ('other:model.x', 'model.x', 'added')"
        )
        assert audit_tables.read_side_state(spark, nodes, "_probe_state.json") is None
        assert audit_tables.read_local_state(spark, [nodes], local) is None
        # the registry then reads the table, and finds what the other writer added
        known = artifacts._known_registry(audit_tables.Lookups(spark), nodes)
        assert "model.x" in known

    def test_the_next_command_holds_the_last_ones_hook_results_and_writes_them_with_its_own(
        self, project, spark
    ):
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        previous = json.loads((target / "run_results.json").read_text())
        previous_id = previous["metadata"]["invocation_id"]
        hooks = [r["unique_id"] for r in previous["results"] if r["unique_id"].startswith("operation.")]
        assert hooks, "run_results.json lists the on-run-end hook"
        results = table(project, "dbt_node_results")

        def loaded_ids() -> list[str]:
            rows = spark.sql(
                f"select unique_id from {results} where invocation_id = '{previous_id}'"
            ).collect()
            return sorted(r.unique_id for r in rows)

        assert loaded_ids() == sorted(
            r["unique_id"] for r in previous["results"] if r["unique_id"] not in hooks
        )
        jobs = spark_jobs(spark)
        start = artifacts.load_pending(
            spark, "next-command", project.test_schema, str(target), str(project.project_root)
        )
        assert start["ok"] and start["loaded"] == [], start
        assert start["held"] == f"{previous_id} (+{len(hooks)} hook results)"
        assert spark_jobs(spark) == jobs  # no scan of dbt_invocations or dbt_node_results
        held = json.loads(held_file(project, spark).read_text())  # kept on disk until written
        assert (held["held_by"], held["invocation_id"]) == ("next-command", previous_id)
        assert sorted(r["unique_id"] for r in held["results"]) == sorted(hooks)
        assert len(loaded_ids()) == len(previous["results"]) - len(hooks)  # not written yet
        # this command's on-run-end writes them in the same file as its own node results
        files = data_files(spark, results)
        end = artifacts.load_run(
            spark,
            [],
            "next-command",
            {"which": "run"},
            target_schema=project.test_schema,
            target_path=str(target),
            project_dir=str(project.project_root),
            write_graph=False,
            write_openlineage=False,
        )
        assert end["ok"] and end["loaded"] == [f"{previous_id} (+{len(hooks)} hook results)"], end
        assert len(set(data_files(spark, results)) - set(files)) == 1
        assert loaded_ids() == sorted(r["unique_id"] for r in previous["results"])
        assert not held_file(project, spark).exists()
        # a second look (a command died before its own load) adds nothing twice
        again = artifacts.load_pending(
            spark, "next-command-2", project.test_schema, str(target), str(project.project_root)
        )
        assert again["ok"] and again["loaded"] == [] and "held" not in again, again
        assert loaded_ids() == sorted(r["unique_id"] for r in previous["results"])
        pending.clear_running(target, "next-command-2")

    def test_hook_results_held_by_a_command_that_was_killed_are_held_again(self, project, spark):
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        previous_id = json.loads((target / "run_results.json").read_text())["metadata"]["invocation_id"]
        root = str(project.project_root)
        first = artifacts.load_pending(spark, "killed-command", project.test_schema, str(target), root)
        assert first["held"].startswith(f"{previous_id} (+"), first
        # killed before its on-run-end: no run_results.json of its own, the held file stays, and the
        # command is recorded `interrupted` (its run record is still `running`)
        second = artifacts.load_pending(spark, "next-command", project.test_schema, str(target), root)
        assert second["ok"] and second["loaded"] == ["killed-command (interrupted)"], second
        assert second["held"] == first["held"], second
        assert json.loads(held_file(project, spark).read_text())["held_by"] == "next-command"
        status = spark.sql(
            f"select status from {table(project, 'dbt_invocations')} where invocation_id = 'killed-command'"
        ).collect()
        assert [r.status for r in status] == ["interrupted"]
        held_file(project, spark).unlink()
        pending.clear_running(target, "next-command")

    def test_hook_results_a_killed_command_wrote_before_its_invocation_are_not_written_twice(
        self, project, spark
    ):
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        previous = json.loads((target / "run_results.json").read_text())
        previous_id = previous["metadata"]["invocation_id"]
        root = str(project.project_root)
        held = artifacts.load_pending(spark, "killed-late", project.test_schema, str(target), root)
        assert held["held"].startswith(f"{previous_id} (+"), held
        # its on-run-end wrote the node results file (with what it held), then the process died
        # before the invocation row and the last-load state: run_results.json is still previous
        record = pending.take(target, scope_key(project, spark), "killed-late")
        rows = artifacts.node_result_rows(record["invocation_id"], record["results"], {"nodes": {}})
        results = table(project, "dbt_node_results")
        audit_tables.write_rows(spark, results, "dbt_node_results", rows)
        again = artifacts.load_pending(spark, "next-command", project.test_schema, str(target), root)
        assert again["ok"] and again["loaded"] == ["killed-late (interrupted)"] and "held" not in again, again
        total = spark.sql(f"select count(*) from {results} where invocation_id = '{previous_id}'").first()[0]
        assert total == len(previous["results"])
        pending.clear_running(target, "next-command")

    def test_a_command_is_marked_running_even_when_the_manifest_is_being_rewritten(self, project, spark):
        """A command of another target of the project directory rewrites target/manifest.json while
        this one's on-run-start reads it (dbt writes it in place): the load fails and is retried by
        the next command, but this command is marked running first, so that when it is killed the
        next command still records it `interrupted`."""
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        manifest = (target / "manifest.json").read_text()
        root = str(project.project_root)
        try:
            (target / "manifest.json").write_text(manifest + manifest[: len(manifest) // 2])  # torn
            torn = artifacts.load_pending(spark, "torn-read", project.test_schema, str(target), root)
            assert not torn["ok"] and "Extra data" in torn["error"], torn
            assert pending.run_record(target, "torn-read")["phase"] == "running"
        finally:
            (target / "manifest.json").write_text(manifest)
        # killed before its on-run-end
        report = artifacts.load_pending(spark, "next-command", project.test_schema, str(target), root)
        assert report["ok"] and "torn-read (interrupted)" in report["loaded"], report
        assert statuses(project, spark, "torn-read") == ["interrupted"]
        tidy(project, spark, "next-command")

    def test_a_command_whose_manifest_another_rewrote_is_recorded_with_its_own_status(self, project, spark):
        """A command of another target rewrites target/manifest.json before this one's on-run-end
        reads it: the audit must not take the other's nodes for this command's, and the command,
        which ended, is recorded with its own status by the next command, not `interrupted`."""
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        manifest = (target / "manifest.json").read_text()
        root = str(project.project_root)
        args = {"which": "run", "write_json": True}
        mine = json.loads(manifest)
        mine["metadata"]["invocation_id"] = "ended-early"
        (target / "manifest.json").write_text(json.dumps(mine))
        start = artifacts.load_pending(spark, "ended-early", project.test_schema, str(target), root, args)
        assert start["ok"], start
        other = json.loads(manifest)["metadata"]["invocation_id"]
        (target / "manifest.json").write_text(manifest)  # the other target's command parsed meanwhile
        end = artifacts.load_run(
            spark, [], "ended-early", args, target_schema=project.test_schema, target_path=str(target),
            project_dir=root, write_graph=False, write_openlineage=False,
        )  # fmt: skip
        assert not end["ok"], end
        assert f"is another dbt command's (invocation {other})" in end["error"], end
        assert "(ended-early)" in end["error"] and "--target-path" in end["error"], end
        assert pending.run_record(target, "ended-early")["phase"] == "ended"
        mine["metadata"]["invocation_id"] = "next-command"
        (target / "manifest.json").write_text(json.dumps(mine))
        report = artifacts.load_pending(spark, "next-command", project.test_schema, str(target), root, args)
        (target / "manifest.json").write_text(manifest)
        assert report["ok"] and "ended-early (success)" in report["loaded"], report
        assert statuses(project, spark, "ended-early") == ["success"]
        tidy(project, spark, "next-command")

    def test_hook_results_held_by_a_command_whose_load_failed_are_written_by_the_next(self, project, spark):
        run_dbt(["run", "--select", "stg_orders"])
        target = Path(project.project_root) / "target"
        previous = json.loads((target / "run_results.json").read_text())
        previous_id = previous["metadata"]["invocation_id"]
        root = str(project.project_root)
        held = artifacts.load_pending(spark, "failed-load", project.test_schema, str(target), root)
        assert held["held"].startswith(f"{previous_id} (+"), held
        pending.clear_running(target, "failed-load")  # its on-run-end started (and failed to load)
        # its on-run-end failed to load, and dbt then wrote its run_results.json over the previous one
        own = {
            **previous,
            "metadata": {**previous["metadata"], "invocation_id": "failed-load"},
            "results": [],
        }
        (target / "run_results.json").write_text(json.dumps(own))
        report = artifacts.load_pending(spark, "next-command", project.test_schema, str(target), root)
        assert report["ok"], report
        hooks = sum(1 for r in previous["results"] if r["unique_id"].startswith("operation."))
        assert report["loaded"] == [f"{previous_id} (+{hooks} held hook results)", "failed-load (success)"]
        assert not held_file(project, spark).exists()
        loaded = spark.sql(
            f"select unique_id from {table(project, 'dbt_node_results')} where invocation_id = '{previous_id}'"
        ).collect()
        assert sorted(r.unique_id for r in loaded) == sorted(r["unique_id"] for r in previous["results"])
