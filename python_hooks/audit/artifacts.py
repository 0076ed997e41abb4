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
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
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
LAST_LOAD = "_audit_last_load"


def last_load_path(target: Path, key: str) -> Path:
    """What the last on-run-end of one warehouse and schema (`pending.scope_key`) loaded."""
    return target / f"{LAST_LOAD}.{key}.json"


def _known_registry(lookups: audit_tables.Lookups, table: str) -> dict[str, str | None]:
    """unique_id -> the latest recorded checksum (None when removed), read from the table (a load
    uses the copy saved beside it, REGISTRY_STATE, while the table's files are unchanged)."""
    spark = lookups.spark
    if not lookups.exists(table):
        return {}
    rows = spark.sql(
        f"select unique_id, checksum, change from (select unique_id, checksum, change, row_number() over "
        f"(partition by unique_id order by recorded_at desc, node_version_id desc) as rn from {table}) where rn = 1"
    ).collect()
    return {r.unique_id: (None if r.change == "removed" else r.checksum) for r in rows}


def _missing_rows(
    lookups: audit_tables.Lookups, table: Mapping[str, str], skip_existing: bool
) -> Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """missing(kind, rows): the rows of one audit table still to write; all of them unless
    `skip_existing` (a load that died halfway left some rows: write only the missing ones, no
    duplicates)."""
    if skip_existing:

        def missing(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            key = audit_tables.KEYS[kind]
            wanted = [r[key] for r in rows]
            have = audit_tables.existing_values(lookups.spark, table[kind], key, wanted, lookups)
            return [r for r in rows if r[key] not in have]
    else:

        def missing(kind: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return rows

    return missing


def _write_registry(
    lookups: audit_tables.Lookups,
    manifest: Mapping[str, Any],
    table: Mapping[str, str],
    invocation_id: str,
    step: Steps,
    counts: dict[str, int],
) -> None:
    """Write dbt_nodes (the versions of the nodes that changed since the registry's saved state,
    which is then saved again) and dbt_lineage_edges, their counts into `counts`."""
    spark, nodes = lookups.spark, table["dbt_nodes"]
    with step("dbt_nodes"):
        saved = audit_tables.read_side_state(spark, nodes, REGISTRY_STATE, lookups)
        known = saved if isinstance(saved, dict) else _known_registry(lookups, nodes)
        versions = node_registry_rows(invocation_id, manifest, known)
        counts["dbt_nodes"] = audit_tables.write_rows(spark, nodes, "dbt_nodes", versions, lookups)
        if versions or not isinstance(saved, dict):
            for row in versions:
                known[row["unique_id"]] = None if row["change"] == "removed" else row["checksum"]
            audit_tables.write_side_state(spark, nodes, REGISTRY_STATE, known, lookups)
    with step("dbt_lineage_edges"):
        edges = edge_rows(invocation_id, manifest)
        counts["dbt_lineage_edges"] = audit_tables.write_rows(
            spark, table["dbt_lineage_edges"], "dbt_lineage_edges", edges, lookups
        )


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
    state_file: Path | None = None,
    lookups: audit_tables.Lookups | None = None,
) -> dict[str, int]:
    """Write one invocation's rows into the audit tables (one write per table).

    The column lineage rows are also appended to `lineage_out` (for the OpenLineage export).
    `columns_of` is the catalog lookup (`catalog_columns`), made here when not given.
    `held_results` are dbt_node_results rows of an earlier command (its hook results, held by
    on-run-start), written in the same file as this invocation's.  `state_file` (in the target
    directory, `last_load_path`) gets what this load wrote, for the next on-run-start.
    `lookups` are the load's (`audit_tables.Lookups`), made here when not given.
    """
    step = steps or Steps()
    invocation_id = invocation["invocation_id"]
    table = {kind: audit_relation(manifest, kind, default_schema) for kind in audit_tables.SCHEMAS}
    counts: dict[str, int] = {}
    lookups = lookups or audit_tables.Lookups(spark, table.values())
    missing = _missing_rows(lookups, table, skip_existing)
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
            lookups,
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
            lookups,
        )
    if lineage_out is not None:
        lineage_out.extend(lineage_rows)
    if with_registry:
        _write_registry(lookups, manifest, table, invocation_id, step, counts)
    # the invocation last: its row says the rest is loaded
    with step("dbt_invocations"):
        rows = missing("dbt_invocations", [dict(invocation)])
        counts["dbt_invocations"] = audit_tables.write_rows(
            spark, table["dbt_invocations"], "dbt_invocations", rows, lookups
        )
        if with_registry:  # on-run-end: the next on-run-start knows what is loaded without a scan
            loaded = {"invocation_id": invocation_id, "result_ids": [r["result_id"] for r in result_rows]}
            if state_file is not None:  # valid while neither table gets a file from anything else
                written = [table["dbt_invocations"], table["dbt_node_results"]]
                audit_tables.write_local_state(spark, written, state_file, loaded, lookups)
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


def _command_args(invocation_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The invocation's args as plain values, with `cli_command` when the command being run is
    not the one the args name."""
    args = dict(values.plain(invocation_args or {}))
    cli_command = _cli_command()
    if cli_command and cli_command != args.get("which"):
        # `dbt retry` re-runs with the failed command's args: keep both names
        args["cli_command"] = cli_command
    return args


# dbt commands that write their manifest.json only after their hooks (`docs generate`: dbt's
# `requires.manifest(write=False)`, then written with the catalog): their hooks read the one an
# earlier command left, as they always did
MANIFEST_AFTER_HOOKS = frozenset({"generate"})


def _manifest_of(invocation_id: str | None, args: Mapping[str, Any]) -> str | None:
    """The invocation whose manifest.json the hooks must read: this one's when dbt's args say it
    has written one before its hooks (with `--no-write-json`, or for `docs generate`, whatever an
    earlier command left is all there is)."""
    if str(args.get("write_json")).lower() != "true" or args.get("which") in MANIFEST_AFTER_HOOKS:
        return None
    return invocation_id or None


def _ended_invocation(
    invocation_id: str,
    args: Mapping[str, Any],
    result_dicts: list[dict[str, Any]],
    target_name: str | None,
    target_schema: str,
    dbt_version: str | None,
    project_name: str | None,
    run_started_at: Any,
    status: str | None,
) -> dict[str, Any]:
    """The dbt_invocations row of a command that reached its on-run-end, ended now."""
    return invocation_row(
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
        args = _command_args(invocation_args)
        path = _target_path(target_path or args.get("target_path"), project_dir or args.get("project_dir"))
        warehouse = pending.warehouse_of(spark)
        key = pending.scope_key(warehouse, target_schema)
        result_dicts = [result_dict(r) for r in results]
        invocation = _ended_invocation(
            invocation_id, args, result_dicts, target_name, target_schema, dbt_version, project_name,
            run_started_at, status,
        )  # fmt: skip
        # it reached its on-run-end, on this warehouse, with this status: not interrupted.  First,
        # from nothing another command writes (the manifest.json below may be the other target's)
        ended = {"target_name": target_name, "target_schema": target_schema, "status": invocation["status"]}
        pending.record_run(
            path, invocation_id, warehouse, "ended", ended_at=invocation["ended_at"].isoformat(), **ended
        )
        with step("manifest"):
            manifest = read_manifest(path, _manifest_of(invocation_id, args))
        lineage_rows: list[dict[str, Any]] = []
        columns_of = catalog_columns(spark, manifest, result_dicts)
        held = pending.take(path, key, invocation_id)
        held_rows = node_result_rows(held["invocation_id"], held["results"], manifest) if held else []
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
            state_file=last_load_path(path, key),
        )
        pending.record_run(path, invocation_id, warehouse, "ended", loaded=True)
        if held:
            pending.release(path, key, invocation_id)
            report["loaded"] = [f"{held['invocation_id']} (+{len(held_rows)} hook results)"]
        report["invocation_status"] = invocation["status"]
        exports = {"graph": write_graph, "openlineage": write_openlineage, "graph_tests": graph_tests is True}
        _write_exports(
            spark, manifest, path, invocation, result_dicts, lineage_rows, columns_of, exports, report, step
        )
    except Exception as exc:
        report = {"ok": False, "error": values.describe_error(exc), "warnings": []}
    report["seconds"] = round(time.time() - started, 2)
    report["steps"] = step.seconds
    return report


def _write_exports(
    spark: SparkSession,
    manifest: Mapping[str, Any],
    path: Path,
    invocation: Mapping[str, Any],
    result_dicts: list[dict[str, Any]],
    lineage_rows: list[dict[str, Any]],
    columns_of: Any,
    exports: Mapping[str, bool],
    report: dict[str, Any],
    step: Steps,
) -> None:
    """The workflow graph and the OpenLineage events of this run, in the target directory (a
    failure is a warning)."""
    if exports["graph"]:
        try:
            from python_hooks.audit import workflow_graph

            with step("workflow graph"):
                report["graph"] = workflow_graph.write_run_graphs(
                    manifest, path, result_dicts, tests=exports["graph_tests"]
                )
        except Exception as exc:
            report["warnings"].append(f"workflow graph not written: {exc}")
    if exports["openlineage"]:
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


@dataclass(frozen=True)
class Scope:
    """One on-run-start's warehouse: what it may adopt from the target directory is what its run
    records name this warehouse and audit schema for (pending.runs_of)."""

    path: Path
    this_command: str
    target_schema: str
    warehouse: dict[str, str | None]
    key: str
    table: str
    results_table: str
    refusal_dirs: tuple[str, ...]
    lookups: audit_tables.Lookups  # this load's (made with the two tables: `state`)

    @property
    def state(self) -> list[str]:
        return [self.table, self.results_table]


Todo = list[tuple[dict[str, Any], list[dict[str, Any]], Callable[[], Any] | None]]


def load_pending(
    spark: SparkSession,
    invocation_id: str = "",
    target_schema: str = "lakehouse",
    target_path: str | None = None,
    project_dir: str | None = None,
    invocation_args: Mapping[str, Any] | None = None,
    target_name: str | None = None,
    refusal_dirs: Sequence[str] = (),
) -> dict[str, Any]:
    """on-run-start: load refused runs and what earlier commands of this warehouse left; never raises.

    `refusal_dirs`: where the adapter's run lock left the records of refused runs
    (`run_lock.refusal_dirs`; the adapter knows its lock, this package does not).

    Only commands whose run record names this warehouse and schema are adopted: the previous
    command's run_results.json, and commands killed before their on-run-end.  The previous
    command's hook results, when its on-run-end loaded the rest (the common case), are not
    written here: they are held (`pending.hold`) for this command's on-run-end, which writes them
    in the same file as its own node results.
    """
    started = time.time()
    report: dict[str, Any] = {"ok": True, "loaded": []}
    step = Steps()
    try:
        path = _target_path(target_path, project_dir)
        warehouse = pending.warehouse_of(spark)
        args = dict(values.plain(invocation_args or {}))
        if invocation_id:
            # first, from nothing another command writes: the manifest.json read below is the
            # target directory's, which a command of another target may be rewriting right now
            started_at = datetime.now(timezone.utc).isoformat()
            pending.mark_running(path, invocation_id, args, started_at, warehouse, target_schema, target_name)
        with step("manifest"):
            manifest = read_manifest(path, _manifest_of(invocation_id, args))
        tables = [
            audit_relation(manifest, kind, target_schema) for kind in ("dbt_invocations", "dbt_node_results")
        ]
        scope = Scope(
            path,
            invocation_id,
            target_schema,
            warehouse,
            pending.scope_key(warehouse, target_schema),
            *tables,
            tuple(refusal_dirs),
            audit_tables.Lookups(spark, tables),
        )
        _load_pending(spark, scope, manifest, report, step)
    except Exception as exc:
        report = {"ok": False, "error": values.describe_error(exc)}
    report["seconds"] = round(time.time() - started, 2)
    report["steps"] = step.seconds
    return report


def _load_pending(
    spark: SparkSession,
    scope: Scope,
    manifest: Mapping[str, Any],
    report: dict[str, Any],
    step: Steps,
) -> None:
    path = scope.path
    refusals = pending.refusal_records(spark, scope.refusal_dirs)
    todo: Todo = [(pending.refusal_row(r), [], remove) for r, remove in refusals]
    # what the last on-run-end of this warehouse loaded (saved in the target directory with the
    # names of dbt_invocations' and dbt_node_results' data files, valid while they are unchanged):
    # the previous command's rows need no scan, and no catalog call, to be found
    with step("last load"):
        last = audit_tables.read_local_state(spark, scope.state, last_load_path(path, scope.key)) or {}
    runs = {i: r for i, r in pending.runs_of(path, scope.warehouse, scope.target_schema).items()}
    runs.pop(scope.this_command, None)
    audited = _audited(spark, scope, last, step)
    prev_id, data = _adoptable(path, runs, audited)
    if prev_id:
        todo.append(
            (pending.previous_invocation(data, scope.target_schema, runs[prev_id]), _results(data), None)
        )
    for other, record in runs.items():
        if other == prev_id:
            continue  # kept while its run_results.json is the target directory's
        if record.get("phase") == "running":  # killed before its on-run-end, and left no results
            row = pending.interrupted_row(record, scope.target_schema)
            todo.append((row, [], partial(pending.forget_run, path, other)))
        elif record.get("phase") == "ended" and record.get("status") and not record.get("loaded"):
            # its on-run-end failed to load it, and another command replaced its run_results.json
            row = pending.unloaded_row(record, scope.target_schema)
            todo.append((row, [], partial(pending.forget_run, path, other)))
        else:  # loaded by its on-run-end, or without hooks, and its run_results.json replaced
            pending.forget_run(path, other)
    _write_leftover(spark, scope, manifest, prev_id, audited, report, step)
    if todo:
        _write_todo(spark, scope, manifest, todo, last, report, step)


def _audited(spark: SparkSession, scope: Scope, last: Mapping[str, Any], step: Steps) -> Callable[[], bool]:
    """Whether the warehouse has audit history (asked once, when needed): a fresh warehouse, or one
    rebuilt by `make demo`, adopts nothing that ran before it."""
    known: list[bool] = []

    def audited() -> bool:
        if not known:
            with step("audit table"):
                known.append(bool(last) or scope.lookups.exists(scope.table))
        return known[0]

    return audited


def _adoptable(
    path: Path, runs: Mapping[str, Mapping[str, Any]], audited: Callable[[], bool]
) -> tuple[str | None, dict[str, Any]]:
    """The previous command's run_results.json, when its run record says it ran against this
    warehouse (run_results.json names no warehouse): else nothing, rather than a row in the
    wrong warehouse."""
    previous = path / "run_results.json"
    if not previous.is_file():
        return None, {}
    try:
        data = json.loads(previous.read_text())
    except ValueError:
        return None, {}
    prev_id = (data.get("metadata") or {}).get("invocation_id")
    if not prev_id or prev_id not in runs or not audited():
        return None, {}
    return str(prev_id), data


def _results(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(data.get("results") or [])


def _write_leftover(
    spark: SparkSession,
    scope: Scope,
    manifest: Mapping[str, Any],
    prev_id: str | None,
    audited: Callable[[], bool],
    report: dict[str, Any],
    step: Steps,
) -> None:
    """Hook results this warehouse's held file still holds (its holder's on-run-end did not write
    them): written now when no longer in run_results.json, skipping any that did land."""
    left = pending.leftover(scope.path, scope.key)
    if left is None:
        return
    if left["invocation_id"] != prev_id and audited():
        rows = node_result_rows(left["invocation_id"], left["results"], manifest)
        ids = [r["result_id"] for r in rows]
        have = audit_tables.existing_values(spark, scope.results_table, "result_id", ids, scope.lookups)
        rows = [r for r in rows if r["result_id"] not in have]
        with step("held hook results"):
            audit_tables.write_rows(spark, scope.results_table, "dbt_node_results", rows, scope.lookups)
        report["loaded"].append(f"{left['invocation_id']} (+{len(rows)} held hook results)")
    pending.discard_leftover(scope.path, scope.key)  # (the same command: found again below)


def _write_todo(
    spark: SparkSession,
    scope: Scope,
    manifest: Mapping[str, Any],
    todo: Todo,
    last: Mapping[str, Any],
    report: dict[str, Any],
    step: Steps,
) -> None:
    saved_id = last.get("invocation_id") if isinstance(last.get("result_ids"), list) else None
    ids = [p[0]["invocation_id"] for p in todo]
    unknown = [i for i in ids if i != saved_id]  # refusals, or a command no on-run-end loaded
    loaded = set(ids) - set(unknown) | audit_tables.existing_values(
        spark, scope.table, "invocation_id", unknown, scope.lookups
    )
    for invocation, results, remove in todo:
        invocation_id = invocation["invocation_id"]
        if invocation_id not in loaded:
            write_audit(
                spark,
                manifest,
                scope.target_schema,
                invocation,
                results,
                with_registry=False,
                skip_existing=True,
                lookups=scope.lookups,
            )
            report["loaded"].append(f"{invocation_id} ({invocation['status']})")
        elif results:
            last = _add_hook_results(spark, scope, manifest, invocation_id, results, last, report, step)
        if remove is not None:
            remove()


def _add_hook_results(
    spark: SparkSession,
    scope: Scope,
    manifest: Mapping[str, Any],
    invocation_id: str,
    results: list[dict[str, Any]],
    last: Mapping[str, Any],
    report: dict[str, Any],
    step: Steps,
) -> Mapping[str, Any]:
    """on-run-end cannot see the results of the hooks themselves: add them from run_results.json
    (held for this command's on-run-end when the last load is known)."""
    keys = [f"{invocation_id}:{r.get('unique_id')}" for r in results]
    from_state = invocation_id == last.get("invocation_id") and isinstance(last.get("result_ids"), list)
    if from_state:
        have = set(last["result_ids"])
    else:
        have = audit_tables.existing_values(spark, scope.results_table, "result_id", keys, scope.lookups)
    extra = [r for r, k in zip(results, keys, strict=True) if k not in have]
    if extra and from_state and scope.this_command:
        # no write now: this command's on-run-end writes them with its own results
        pending.hold(scope.path, scope.key, scope.this_command, invocation_id, extra)
        report["held"] = f"{invocation_id} (+{len(extra)} hook results)"
    elif extra:
        rows = node_result_rows(invocation_id, extra, manifest)
        with step("hook results"):
            audit_tables.write_rows(spark, scope.results_table, "dbt_node_results", rows, scope.lookups)
        if from_state:  # a second look at this run_results.json finds them loaded
            last = {
                "invocation_id": invocation_id,
                "result_ids": [*last["result_ids"], *(r["result_id"] for r in rows)],
            }
            state = last_load_path(scope.path, scope.key)
            audit_tables.write_local_state(spark, scope.state, state, last, scope.lookups)
        report["loaded"].append(f"{invocation_id} (+{len(rows)} hook results)")
    return last
