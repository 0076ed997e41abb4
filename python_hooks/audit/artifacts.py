"""dbt run metadata into the audit tables: called by the project's on-run-start/on-run-end hooks.

`load_run` (on-run-end) loads the invocation, its node results, the node registry, the lineage
edges and the column lineage from the in-memory results and `target/manifest.json`, and writes
the workflow graph and the OpenLineage events into `target/`.  `load_pending` (on-run-start)
loads what no on-run-end could: the previous command's `target/run_results.json` when that
command had no hooks (run-operation, compile, docs generate) or died before them, and the
refusal records of runs the warehouse lock turned away.

Every table gets one write (a parquet file, no Spark job: audit_tables.write_rows).  A failure is returned as a message (the hook logs it as a
warning): auditing never turns a successful run into a failed one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit import audit_tables, partition_trace, pending, values
from python_hooks.audit.columns import catalog_columns
from python_hooks.audit.manifest import audit_relation, read_manifest
from python_hooks.audit.rows import (
    column_lineage_rows,
    edge_rows,
    invocation_row,
    node_registry_rows,
    node_result_rows,
    result_dict,
)


class Steps:
    """Seconds per step of one load (`report["steps"]`, in dbt's log file): where the audit's time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - started, 3)


REGISTRY_STATE = "_audit_registry_state.json"
LAST_LOAD = "_audit_last_load.json"


def _known_registry(spark: SparkSession, table: str) -> dict[str, str | None]:
    """unique_id -> the latest recorded checksum (None when removed), read from the table (a load
    uses the copy saved beside it, REGISTRY_STATE, while the table's files are unchanged)."""
    if not audit_tables.relation_exists(spark, table):
        return {}
    rows = spark.sql(
        f"select unique_id, checksum, change from (select unique_id, checksum, change, row_number() over "
        f"(partition by unique_id order by recorded_at desc, node_version_id desc) as rn from {table}) where rn = 1"
    ).collect()
    return {r.unique_id: (None if r.change == "removed" else r.checksum) for r in rows}


def write_audit(
    spark: SparkSession,
    manifest: Mapping[str, Any],
    default_schema: str,
    invocation: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    *,
    with_registry: bool = True,
    skip_existing: bool = False,
    lineage_out: list[dict[str, Any]] | None = None,
    steps: Steps | None = None,
    columns_of: Any = None,
    held_results: Sequence[Mapping[str, Any]] = (),
    state_dir: Path | None = None,
) -> dict[str, int]:
    """Write one invocation's rows into the audit tables (one write per table).

    The column lineage rows are also appended to `lineage_out` (for the OpenLineage export).
    `columns_of` is the catalog lookup (`catalog_columns`), made here when not given.
    `held_results` are dbt_node_results rows of an earlier command (its hook results, held by
    on-run-start), written in the same file as this invocation's.  `state_dir` (the target
    directory) gets LAST_LOAD, what this load wrote, for the next on-run-start.
    """
    step = steps or Steps()
    invocation_id = invocation["invocation_id"]
    table = {kind: audit_relation(manifest, kind, default_schema) for kind in audit_tables.SCHEMAS}
    counts: dict[str, int] = {}
    if skip_existing:
        # a load that died halfway left some rows: write only the missing ones (no duplicates)
        def missing(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            key = audit_tables.KEYS[kind]
            have = audit_tables.existing_values(spark, table[kind], key, [r[key] for r in rows])
            return [r for r in rows if r[key] not in have]
    else:

        def missing(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return rows

    with step("partition trace"):
        partitions = partition_trace.partitions_by_node(
            spark, manifest, invocation_id, results, default_schema
        )
    with step("dbt_node_results"):
        result_rows = node_result_rows(invocation_id, results, manifest, partitions)
        counts["dbt_node_results"] = audit_tables.write_rows(
            spark,
            table["dbt_node_results"],
            "dbt_node_results",
            [*missing("dbt_node_results", result_rows), *held_results],
        )
    with step("column lineage"):
        lineage_rows, unparsed = column_lineage_rows(
            invocation_id, results, manifest, columns_of or catalog_columns(spark, manifest, results)
        )
    with step("dbt_column_lineage"):
        counts["dbt_column_lineage"] = audit_tables.write_rows(
            spark,
            table["dbt_column_lineage"],
            "dbt_column_lineage",
            missing("dbt_column_lineage", lineage_rows),
        )
    if lineage_out is not None:
        lineage_out.extend(lineage_rows)
    if with_registry:
        with step("dbt_nodes"):
            saved = audit_tables.read_side_state(spark, table["dbt_nodes"], REGISTRY_STATE)
            known = saved if isinstance(saved, dict) else _known_registry(spark, table["dbt_nodes"])
            versions = node_registry_rows(invocation_id, manifest, known)
            counts["dbt_nodes"] = audit_tables.write_rows(spark, table["dbt_nodes"], "dbt_nodes", versions)
            if versions or not isinstance(saved, dict):
                for row in versions:
                    known[row["unique_id"]] = None if row["change"] == "removed" else row["checksum"]
                audit_tables.write_side_state(spark, table["dbt_nodes"], REGISTRY_STATE, known)
        with step("dbt_lineage_edges"):
            counts["dbt_lineage_edges"] = audit_tables.write_rows(
                spark, table["dbt_lineage_edges"], "dbt_lineage_edges", edge_rows(invocation_id, manifest)
            )
    # the invocation last: its row says the rest is loaded
    with step("dbt_invocations"):
        counts["dbt_invocations"] = audit_tables.write_rows(
            spark, table["dbt_invocations"], "dbt_invocations", missing("dbt_invocations", [dict(invocation)])
        )
        if with_registry:  # on-run-end: the next on-run-start knows what is loaded without a scan
            loaded = {"invocation_id": invocation_id, "result_ids": [r["result_id"] for r in result_rows]}
            if state_dir is not None:  # valid while neither table gets a file from anything else
                written = [table["dbt_invocations"], table["dbt_node_results"]]
                audit_tables.write_local_state(spark, written, state_dir / LAST_LOAD, loaded)
    if unparsed:
        counts["unparsed_models"] = len(unparsed)
    return counts


def _cli_command() -> str | None:
    """The dbt subcommand being run (click's context), e.g. `retry` when args say `run`."""
    try:
        import click

        context = click.get_current_context(silent=True)
    except Exception:
        return None
    name = getattr(getattr(context, "command", None), "name", None)
    return str(name) if name else None


def _target_path(target_path: str | None, project_dir: str | None) -> Path:
    root = Path(project_dir or os.getcwd())
    path = Path(target_path or "target")
    return path if path.is_absolute() else root / path


def load_run(
    spark: SparkSession,
    results: Iterable[Any] = (),
    invocation_id: str = "",
    invocation_args: Mapping[str, Any] | None = None,
    target_name: str | None = None,
    target_schema: str = "lakehouse",
    dbt_version: str | None = None,
    project_name: str | None = None,
    run_started_at: Any = None,
    target_path: str | None = None,
    project_dir: str | None = None,
    write_graph: bool = True,
    write_openlineage: bool = True,
    status: str | None = None,
    graph_tests: bool = False,
) -> dict[str, Any]:
    """on-run-end: load this invocation into the audit tables; never raises.  `status` overrides
    the one the results give (`cancelled`, when the command was cancelled); `graph_tests`: the
    workflow graphs draw the tests as nodes (var audit_workflow_graph_tests)."""
    started = time.time()
    report: dict[str, Any] = {"ok": True, "warnings": []}
    step = Steps()
    try:
        args = dict(values.plain(invocation_args or {}))
        cli_command = _cli_command()
        if cli_command and cli_command != args.get("which"):
            # `dbt retry` re-runs with the failed command's args: keep both names
            args["cli_command"] = cli_command
        path = _target_path(target_path or args.get("target_path"), project_dir or args.get("project_dir"))
        pending.clear_running(path, invocation_id)  # it reached its on-run-end: not interrupted
        with step("manifest"):
            manifest = read_manifest(path)
        result_dicts = [result_dict(r) for r in results]
        invocation = invocation_row(
            invocation_id,
            args,
            result_dicts,
            target_name=target_name,
            target_schema=target_schema,
            dbt_version=dbt_version,
            project_name=project_name,
            started_at=run_started_at,
            ended_at=datetime.now(timezone.utc),
            loaded_from="on-run-end",
            status=status,
            message="cancelled (SIGINT/SIGTERM): stopped at a safe point" if status == "cancelled" else None,
        )
        lineage_rows: list[dict[str, Any]] = []
        columns_of = catalog_columns(spark, manifest, result_dicts)
        held = pending.take(path, invocation_id)
        held_rows = node_result_rows(held["invocation_id"], held["results"], manifest) if held else []
        relations = [audit_relation(manifest, kind, target_schema) for kind in audit_tables.SCHEMAS]
        with audit_tables.metadata_cache(spark, relations):
            report["counts"] = write_audit(
                spark,
                manifest,
                target_schema,
                invocation,
                result_dicts,
                lineage_out=lineage_rows,
                steps=step,
                columns_of=columns_of,
                held_results=held_rows,
                state_dir=path,
            )
        if held:
            pending.release(path, invocation_id)
            report["loaded"] = [f"{held['invocation_id']} (+{len(held_rows)} hook results)"]
        report["invocation_status"] = invocation["status"]
        if write_graph:
            try:
                from python_hooks.audit import workflow_graph

                with step("workflow graph"):
                    report["graph"] = workflow_graph.write_run_graphs(
                        manifest, path, result_dicts, tests=graph_tests is True
                    )
            except Exception as exc:
                report["warnings"].append(f"workflow graph not written: {exc}")
        if write_openlineage:
            try:
                from python_hooks.audit import openlineage_export

                with step("openlineage"):
                    report["openlineage"] = str(
                        openlineage_export.export_run(
                            manifest,
                            invocation,
                            result_dicts,
                            path,
                            column_lineage=lineage_rows,
                            columns_of=columns_of,
                            warehouse=spark.conf.get("spark.sql.warehouse.dir", None),
                        )
                    )
            except Exception as exc:
                report["warnings"].append(f"OpenLineage events not written: {exc}")
    except Exception as exc:
        report = {"ok": False, "error": values.describe_error(exc), "warnings": []}
    report["seconds"] = round(time.time() - started, 2)
    report["steps"] = step.seconds
    return report


def load_pending(
    spark: SparkSession,
    invocation_id: str = "",
    target_schema: str = "lakehouse",
    target_path: str | None = None,
    project_dir: str | None = None,
    invocation_args: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """on-run-start: load refused runs and the previous command's run_results.json; never raises.

    The previous command's hook results, when its on-run-end loaded the rest (the common case),
    are not written here: they are held (`pending.hold`) for this command's on-run-end, which
    writes them in the same file as its own node results.
    """
    started = time.time()
    report: dict[str, Any] = {"ok": True, "loaded": []}
    step = Steps()
    this_command = invocation_id
    try:
        path = _target_path(target_path, project_dir)
        with step("manifest"):
            manifest = read_manifest(path)
        table = audit_relation(manifest, "dbt_invocations", target_schema)
        results_table = audit_relation(manifest, "dbt_node_results", target_schema)
        with audit_tables.metadata_cache(spark, [table, results_table]):
            todo: list[tuple[dict[str, Any], list[dict[str, Any]], Callable[[], Any] | None]] = []
            for record, remove in pending.refusal_records(spark):
                todo.append((pending.refusal_row(record), [], remove))
            previous = path / "run_results.json"
            # what the last on-run-end loaded (saved in the target directory with the names of
            # dbt_invocations' and dbt_node_results' data files, valid while they are unchanged):
            # the previous command's rows need no scan, and no catalog call, to be found
            state = [table, results_table]
            with step("last load"):
                last = audit_tables.read_local_state(spark, state, path / LAST_LOAD) or {}
            # a warehouse without audit history (fresh, or rebuilt by `make demo`) does not adopt
            # whatever command last wrote this target directory
            with step("audit table"):
                audited = previous.is_file() and (bool(last) or audit_tables.relation_exists(spark, table))
            data: dict[str, Any] = json.loads(previous.read_text()) if audited else {}
            prev_id = (data.get("metadata") or {}).get("invocation_id")
            # a command that never reached its on-run-end (killed, or dbt's own abrupt interrupt)
            mark = pending.running(path)
            cut = (
                mark["invocation_id"] if mark is not None and mark["invocation_id"] != this_command else None
            )
            if prev_id and prev_id != this_command:
                row = pending.previous_invocation(data, target_schema)
                if prev_id == cut:
                    row.update(status="interrupted", message="ended without its on-run-end (interrupted)")
                todo.append((row, list(data.get("results") or []), None))
            if cut is not None and cut != prev_id:
                todo.append((pending.interrupted_row(mark, target_schema), [], None))
            if this_command:
                args = dict(values.plain(invocation_args or {}))
                pending.mark_running(path, this_command, args, datetime.now(timezone.utc).isoformat())
            left = pending.leftover(path)
            if left is not None:
                if audited and left["invocation_id"] != prev_id:
                    # held by a command whose on-run-end did not write them, and no longer in
                    # run_results.json: written now, skipping any that did land
                    rows = node_result_rows(left["invocation_id"], left["results"], manifest)
                    have = audit_tables.existing_values(
                        spark, results_table, "result_id", [r["result_id"] for r in rows]
                    )
                    rows = [r for r in rows if r["result_id"] not in have]
                    with step("held hook results"):
                        audit_tables.write_rows(spark, results_table, "dbt_node_results", rows)
                    report["loaded"].append(f"{left['invocation_id']} (+{len(rows)} held hook results)")
                pending.discard_leftover(path)  # (the same command: found again below)
            if not todo:
                return report
            saved_id = last.get("invocation_id") if isinstance(last.get("result_ids"), list) else None
            ids = [p[0]["invocation_id"] for p in todo]
            unknown = [i for i in ids if i != saved_id]  # refusals, or a command no on-run-end loaded
            loaded = set(ids) - set(unknown) | audit_tables.existing_values(
                spark, table, "invocation_id", unknown
            )
            for invocation, results, remove in todo:
                invocation_id = invocation["invocation_id"]
                if invocation_id not in loaded:
                    write_audit(
                        spark,
                        manifest,
                        target_schema,
                        invocation,
                        results,
                        with_registry=False,
                        skip_existing=True,
                    )
                    report["loaded"].append(f"{invocation_id} ({invocation['status']})")
                elif results:
                    # on-run-end cannot see the results of the hooks themselves: add them from run_results.json
                    keys = [f"{invocation_id}:{r.get('unique_id')}" for r in results]
                    from_state = invocation_id == saved_id
                    if from_state:
                        have = set(last["result_ids"])
                    else:
                        have = audit_tables.existing_values(spark, results_table, "result_id", keys)
                    extra = [r for r, k in zip(results, keys, strict=True) if k not in have]
                    if extra and from_state and this_command:
                        # no write now: this command's on-run-end writes them with its own results
                        pending.hold(path, this_command, invocation_id, extra)
                        report["held"] = f"{invocation_id} (+{len(extra)} hook results)"
                    elif extra:
                        rows = node_result_rows(invocation_id, extra, manifest)
                        with step("hook results"):
                            audit_tables.write_rows(spark, results_table, "dbt_node_results", rows)
                        if from_state:  # a second look at this run_results.json finds them loaded
                            loaded_ids = [*last["result_ids"], *(r["result_id"] for r in rows)]
                            last = {"invocation_id": invocation_id, "result_ids": loaded_ids}
                            audit_tables.write_local_state(spark, state, path / LAST_LOAD, last)
                        report["loaded"].append(f"{invocation_id} (+{len(rows)} hook results)")
                if remove is not None:
                    remove()
    except Exception as exc:
        report = {"ok": False, "error": values.describe_error(exc)}
    report["seconds"] = round(time.time() - started, 2)
    report["steps"] = step.seconds
    return report
