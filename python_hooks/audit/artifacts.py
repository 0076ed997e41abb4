"""dbt run metadata into the audit tables: called by the project's on-run-start/on-run-end hooks.

`load_run` (on-run-end) loads the invocation, its node results, the node registry, the lineage
edges and the column lineage from the in-memory results and `target/manifest.json`, and writes
the workflow graph and the OpenLineage events into `target/`.  `load_pending` (on-run-start)
loads what no on-run-end could: the previous command's `target/run_results.json` when that
command had no hooks (run-operation, compile, docs generate) or died before them, and the
refusal records of runs the warehouse lock turned away.

Every table gets one bulk insert.  A failure is returned as a message (the hook logs it as a
warning): auditing never turns a successful run into a failed one.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from python_hooks.audit import audit_tables, lineage, partition_trace
from python_hooks.errors import LakehouseError

AUDIT_PACKAGE = "compliance"
FAILED_STATUSES = {"error", "fail", "runtime error"}
# Logs of the lifecycle capabilities: which nodes write them, read when they exist.
LIFECYCLE_LOGS = {"purge": "purge_log", "retention": "retention_log", "compaction": "compaction_watermarks"}


def describe_error(exc: BaseException) -> str:
    """One line naming what went wrong (for a JVM error, the Java exception, not py4j's wrapper)."""
    java = getattr(exc, "java_exception", None)
    text = str(java) if java is not None else str(getattr(exc, "msg", None) or exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}"[:500]


# ---- small conversions ---------------------------------------------------------------------
def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _ts(value: Any) -> datetime | None:
    """A naive UTC datetime from a datetime or an ISO string (dbt's artifacts use both)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    text = str(value).replace("Z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed.astimezone(timezone.utc).replace(tzinfo=None) if parsed.tzinfo else parsed


def _plain(value: Any) -> Any:
    """dbt objects (dataclasses, enums, agate rows) as plain JSON-able Python."""
    if hasattr(value, "to_dict"):
        try:
            return value.to_dict(omit_none=True)
        except TypeError:
            return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _json(value: Any) -> str | None:
    value = _plain(value)
    if value in (None, {}, [], ""):
        return None
    return json.dumps(value, sort_keys=True, default=str)


def _selection(args: Mapping[str, Any]) -> str | None:
    parts = []
    for key in ("select", "exclude", "selector", "resource_types", "models"):
        value = args.get(key)
        if value:
            parts.append(
                f"--{key.replace('_', '-')} {' '.join(value) if isinstance(value, (list, tuple)) else value}"
            )
    return " ".join(parts) or None


def _who() -> tuple[str, str]:
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in some containers
        user = os.environ.get("USER", "unknown")
    return user, socket.gethostname()


# ---- the manifest --------------------------------------------------------------------------
def read_manifest(target_path: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(target_path) / "manifest.json"
    if not path.is_file():
        raise LakehouseError(f"{path} does not exist: run any dbt command (dbt parse) to write it")
    return json.loads(path.read_text())


def audit_relation(manifest: Mapping[str, Any], kind: str, default_schema: str) -> str:
    """`schema.table` of an audit table: where its model builds, else the target schema."""
    for node in manifest.get("nodes", {}).values():
        if node.get("resource_type") == "model" and node.get("name") == kind:
            return f"{node['schema']}.{node.get('alias') or kind}"
    return f"{default_schema}.{kind}"


def _relation_name(node: Mapping[str, Any]) -> str | None:
    if node.get("resource_type") not in ("model", "seed", "snapshot", "source"):
        return None
    identifier = node.get("identifier") or node.get("alias") or node.get("name")
    return f"{node.get('schema')}.{identifier}"


def _all_nodes(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for section in ("nodes", "sources", "macros", "exposures", "metrics", "semantic_models", "unit_tests"):
        found.update(manifest.get(section, {}))
    return found


# ---- rows ----------------------------------------------------------------------------------
def invocation_row(
    invocation_id: str,
    args: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    *,
    target_name: str | None,
    target_schema: str | None,
    dbt_version: str | None,
    project_name: str | None,
    started_at: Any,
    ended_at: Any,
    loaded_from: str,
    status: str | None = None,
    message: str | None = None,
    run_by: str | None = None,
    host: str | None = None,
) -> dict[str, Any]:
    failed = sum(1 for r in results if str(r.get("status")) in FAILED_STATUSES)
    if status is None:
        status = "error" if failed else "success"
    user, hostname = _who()
    command = args.get("cli_command") or args.get("which") or args.get("command")
    vars_value = args.get("vars")
    if isinstance(vars_value, str):
        vars_json = vars_value if vars_value.strip() not in ("", "{}") else None
    else:
        vars_json = _json(vars_value)
    return {
        "invocation_id": invocation_id,
        "command": str(command) if command else None,
        "args": _json(args),
        "selection": _selection(args),
        "target_name": target_name or args.get("target"),
        "target_schema": target_schema,
        "vars": vars_json,
        "dbt_version": dbt_version,
        "project_name": project_name,
        "full_refresh": bool(args.get("full_refresh") or False),
        "started_at": _ts(started_at),
        "ended_at": _ts(ended_at),
        "status": status,
        "nodes_total": len(results),
        "nodes_failed": failed,
        "message": message,
        "run_by": run_by or user,
        "host": host or hostname,
        "loaded_from": loaded_from,
        "loaded_at": _now(),
    }


def result_dict(result: Any) -> dict[str, Any]:
    """An in-memory RunResult as the dict run_results.json holds (plus the node's own fields)."""
    node = getattr(result, "node", None)
    timing = [_plain(t) for t in (getattr(result, "timing", None) or [])]
    status = getattr(result, "status", None)
    return {
        "unique_id": getattr(node, "unique_id", None),
        "status": str(getattr(status, "value", status)) if status is not None else None,
        "thread_id": getattr(result, "thread_id", None),
        "execution_time": getattr(result, "execution_time", None),
        "timing": timing,
        "message": getattr(result, "message", None),
        "failures": getattr(result, "failures", None),
        "adapter_response": _plain(getattr(result, "adapter_response", None) or {}),
        "compiled_code": getattr(node, "compiled_code", None),
        "relation_name": getattr(node, "relation_name", None),
        "language": str(getattr(node, "language", "") or "") or None,
    }


def _timing(result: Mapping[str, Any], name: str, edge: str) -> datetime | None:
    for step in result.get("timing") or []:
        if step.get("name") == name:
            return _ts(step.get(edge))
    return None


def node_result_rows(
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    partitions: Mapping[str, tuple[list[str], list[str]]] | None = None,
) -> list[dict[str, Any]]:
    nodes = _all_nodes(manifest)
    now = _now()
    rows = []
    for result in results:
        unique_id = result.get("unique_id")
        node = nodes.get(unique_id, {})
        response = result.get("adapter_response") or {}
        rows_affected = response.get("rows_affected")
        read, written = (partitions or {}).get(unique_id, (None, None))
        rows.append(
            {
                "result_id": f"{invocation_id}:{unique_id}",
                "invocation_id": invocation_id,
                "unique_id": unique_id,
                "node_name": node.get("name") or (unique_id or "").split(".")[-1],
                "resource_type": node.get("resource_type") or (unique_id or "").split(".")[0],
                "materialization": (node.get("config") or {}).get("materialized"),
                "relation_name": result.get("relation_name") or _relation_name(node),
                "status": result.get("status"),
                "thread_id": result.get("thread_id"),
                "compile_started_at": _timing(result, "compile", "started_at"),
                "execute_started_at": _timing(result, "execute", "started_at"),
                "completed_at": _timing(result, "execute", "completed_at")
                or _timing(result, "compile", "completed_at"),
                "execution_time": float(result.get("execution_time") or 0.0),
                "message": None if result.get("message") is None else str(result.get("message")),
                "failures": result.get("failures"),
                "rows_affected": rows_affected
                if isinstance(rows_affected, int) and rows_affected >= 0
                else None,
                "partitions_read": read,
                "partitions_written": written,
                "loaded_at": now,
            }
        )
    return rows


def _checksum(node: Mapping[str, Any]) -> str | None:
    checksum = node.get("checksum")
    if isinstance(checksum, Mapping):
        return f"{checksum.get('name')}:{checksum.get('checksum')}"
    if node.get("resource_type") == "macro":
        return "sha256:" + _sha(node.get("macro_sql") or "")
    return "sha256:" + _sha(
        json.dumps(
            {k: node.get(k) for k in ("description", "depends_on", "config")}, sort_keys=True, default=str
        )
    )


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def node_registry_rows(
    invocation_id: str, manifest: Mapping[str, Any], known: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """Rows for nodes that are new, changed or removed since the registry's latest version.

    `known` maps unique_id -> latest recorded checksum (None when its latest row is 'removed').
    """
    now = _now()
    rows = []
    current: dict[str, Mapping[str, Any]] = {}
    for section in ("nodes", "sources", "macros", "exposures", "metrics", "semantic_models", "unit_tests"):
        current.update(manifest.get(section, {}))
    for unique_id, node in sorted(current.items()):
        checksum = _checksum(node)
        previous = known.get(unique_id, "__absent__")
        if previous == checksum:
            continue
        config = node.get("config") or {}
        tags = node.get("tags") or config.get("tags") or []
        rows.append(
            {
                "node_version_id": f"{invocation_id}:{unique_id}",
                "invocation_id": invocation_id,
                "unique_id": unique_id,
                "resource_type": node.get("resource_type"),
                "name": node.get("name"),
                "package_name": node.get("package_name"),
                "original_file_path": node.get("original_file_path"),
                "materialization": config.get("materialized"),
                "language": node.get("language"),
                "checksum": checksum,
                "tags": [str(t) for t in (tags if isinstance(tags, list) else [tags])],
                "description": node.get("description") or None,
                "relation_name": _relation_name(node),
                "change": "added" if previous in ("__absent__", None) else "changed",
                "recorded_at": now,
            }
        )
    for unique_id, previous in sorted(known.items()):
        if unique_id not in current and previous is not None:
            rows.append(
                {
                    "node_version_id": f"{invocation_id}:{unique_id}",
                    "invocation_id": invocation_id,
                    "unique_id": unique_id,
                    "resource_type": unique_id.split(".")[0],
                    "name": unique_id.split(".")[-1],
                    "checksum": None,
                    "tags": [],
                    "change": "removed",
                    "recorded_at": now,
                }
            )
    return rows


def edge_rows(invocation_id: str, manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    nodes = _all_nodes(manifest)
    now = _now()
    return [
        {
            "edge_id": f"{invocation_id}:{parent}->{child}",
            "invocation_id": invocation_id,
            "parent_unique_id": parent,
            "child_unique_id": child,
            "parent_resource_type": nodes.get(parent, {}).get("resource_type") or parent.split(".")[0],
            "child_resource_type": nodes.get(child, {}).get("resource_type") or child.split(".")[0],
            "loaded_at": now,
        }
        for parent, child in lineage.lineage_edges(manifest)
    ]


def _schema_columns(spark: SparkSession, schema: str) -> dict[str, dict[str, str]]:
    """{table: {column: type}} of every table in a schema, in one metastore call.

    `show table extended ... like '*'` is what dbt-spark's catalog uses: one round trip per
    schema instead of one per relation (a 500-model project would otherwise make 500).
    """
    tables: dict[str, dict[str, str]] = {}
    try:
        rows = spark.sql(f"show table extended in `{schema}` like '*'").collect()
    except Exception:  # the schema does not exist yet
        return tables
    for row in rows:
        columns: dict[str, str] = {}
        in_schema = False
        for line in str(row.information).splitlines():
            if line.startswith("Schema:"):
                in_schema = True
                continue
            if in_schema and line.startswith(" |-- "):
                name, _, rest = line[5:].partition(": ")
                columns[name] = rest.split(" (nullable", 1)[0]
        tables[str(row.tableName).lower()] = columns
    return tables


def catalog_columns(spark: SparkSession, manifest: Mapping[str, Any]) -> Any:
    """A `columns_of(relation)` for column lineage: the Spark catalog first, then the yml."""
    declared: dict[str, dict[str, str]] = {}
    for section in ("nodes", "sources"):
        for node in manifest.get(section, {}).values():
            relation = _relation_name(node)
            if relation and node.get("columns"):
                declared[relation.lower()] = {
                    c: (v.get("data_type") or "string") for c, v in node["columns"].items()
                }
    schemas: dict[str, dict[str, dict[str, str]]] = {}

    def columns_of(relation: str) -> dict[str, str] | None:
        schema, _, name = relation.lower().rpartition(".")
        if schema not in schemas:
            schemas[schema] = _schema_columns(spark, schema) if schema else {}
        # not built yet: fall back to the columns the yml declares
        return schemas[schema].get(name) or declared.get(relation.lower())

    return columns_of


def column_lineage_rows(
    invocation_id: str,
    results: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any],
    columns_of: Any,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Column lineage of the models compiled in this invocation, and the models it could not parse."""
    nodes = manifest.get("nodes", {})
    relations = lineage.relation_index(manifest)
    now = _now()
    edges: list[lineage.ColumnEdge] = []
    unparsed: list[str] = []
    for result in results:
        unique_id = result.get("unique_id") or ""
        node = nodes.get(unique_id, {})
        if node.get("resource_type") != "model":
            continue
        parents = list((node.get("depends_on") or {}).get("nodes") or [])
        if (result.get("language") or node.get("language")) == "python":
            edges.extend(
                lineage.model_level_lineage(
                    unique_id, parents, lambda p: _relation_name(_all_nodes(manifest).get(p, {}))
                )
            )
            continue
        sql = result.get("compiled_code")
        if not sql:
            continue
        try:
            edges.extend(lineage.column_lineage(unique_id, sql, relations, columns_of))
        except Exception as exc:  # sqlglot cannot read every statement; the model-level edges remain
            unparsed.append(f"{unique_id}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    rows = []
    for edge in edges:
        key = ":".join(
            x or ""
            for x in (edge.column_name, edge.source_unique_id or edge.source_relation, edge.source_column)
        )
        rows.append(
            {
                "lineage_id": f"{invocation_id}:{edge.model_unique_id}:{key}",
                "invocation_id": invocation_id,
                "model_unique_id": edge.model_unique_id,
                "column_name": edge.column_name,
                "source_unique_id": edge.source_unique_id,
                "source_relation": edge.source_relation,
                "source_column": edge.source_column,
                "lineage_level": edge.lineage_level,
                "is_python_model": edge.is_python_model,
                "loaded_at": now,
            }
        )
    return rows, unparsed


# ---- loading -------------------------------------------------------------------------------
def _known_registry(spark: SparkSession, table: str) -> dict[str, str | None]:
    if not audit_tables.table_exists(spark, table):
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
) -> dict[str, int]:
    """Write one invocation's rows into the audit tables (one insert per table).

    The column lineage rows are also appended to `lineage_out` (for the OpenLineage export).
    """
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

    partitions = partition_trace.partitions_by_node(spark, manifest, invocation_id, results, default_schema)
    counts["dbt_node_results"] = audit_tables.write_rows(
        spark,
        table["dbt_node_results"],
        "dbt_node_results",
        missing("dbt_node_results", node_result_rows(invocation_id, results, manifest, partitions)),
    )
    lineage_rows, unparsed = column_lineage_rows(
        invocation_id, results, manifest, catalog_columns(spark, manifest)
    )
    counts["dbt_column_lineage"] = audit_tables.write_rows(
        spark, table["dbt_column_lineage"], "dbt_column_lineage", missing("dbt_column_lineage", lineage_rows)
    )
    if lineage_out is not None:
        lineage_out.extend(lineage_rows)
    if with_registry:
        known = _known_registry(spark, table["dbt_nodes"])
        counts["dbt_nodes"] = audit_tables.write_rows(
            spark, table["dbt_nodes"], "dbt_nodes", node_registry_rows(invocation_id, manifest, known)
        )
        counts["dbt_lineage_edges"] = audit_tables.write_rows(
            spark, table["dbt_lineage_edges"], "dbt_lineage_edges", edge_rows(invocation_id, manifest)
        )
    # the invocation last: its row says the rest is loaded
    counts["dbt_invocations"] = audit_tables.write_rows(
        spark, table["dbt_invocations"], "dbt_invocations", missing("dbt_invocations", [dict(invocation)])
    )
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
) -> dict[str, Any]:
    """on-run-end: load this invocation into the audit tables; never raises."""
    started = time.time()
    report: dict[str, Any] = {"ok": True, "warnings": []}
    try:
        args = dict(_plain(invocation_args or {}))
        cli_command = _cli_command()
        if cli_command and cli_command != args.get("which"):
            # `dbt retry` re-runs with the failed command's args: keep both names
            args["cli_command"] = cli_command
        path = _target_path(target_path or args.get("target_path"), project_dir or args.get("project_dir"))
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
        )
        lineage_rows: list[dict[str, Any]] = []
        report["counts"] = write_audit(
            spark, manifest, target_schema, invocation, result_dicts, lineage_out=lineage_rows
        )
        report["invocation_status"] = invocation["status"]
        if write_graph:
            try:
                from python_hooks.audit import workflow_graph

                report["graph"] = workflow_graph.write_run_graphs(manifest, path, result_dicts)
            except Exception as exc:
                report["warnings"].append(f"workflow graph not written: {exc}")
        if write_openlineage:
            try:
                from python_hooks.audit import openlineage_export

                report["openlineage"] = str(
                    openlineage_export.export_run(
                        manifest,
                        invocation,
                        result_dicts,
                        path,
                        column_lineage=lineage_rows,
                        columns_of=catalog_columns(spark, manifest),
                        warehouse=spark.conf.get("spark.sql.warehouse.dir", None),
                    )
                )
            except Exception as exc:
                report["warnings"].append(f"OpenLineage events not written: {exc}")
    except Exception as exc:
        report = {"ok": False, "error": describe_error(exc), "warnings": []}
    report["seconds"] = round(time.time() - started, 2)
    return report


def refusal_dir(spark: SparkSession) -> Path | None:
    from dbt.adapters.lakehouse import run_lock

    warehouse = spark.conf.get("spark.sql.warehouse.dir", None)
    directory = run_lock.local_dir(warehouse) if warehouse else None
    return Path(directory) / run_lock.REFUSALS_DIR if directory else None


def load_pending(
    spark: SparkSession,
    invocation_id: str = "",
    target_schema: str = "lakehouse",
    target_path: str | None = None,
    project_dir: str | None = None,
) -> dict[str, Any]:
    """on-run-start: load refused runs and the previous command's run_results.json; never raises."""
    report: dict[str, Any] = {"ok": True, "loaded": []}
    try:
        path = _target_path(target_path, project_dir)
        manifest = read_manifest(path)
        table = audit_relation(manifest, "dbt_invocations", target_schema)
        pending: list[tuple[dict[str, Any], list[dict[str, Any]], Path | None]] = []
        directory = refusal_dir(spark)
        if directory and directory.is_dir():
            for record_path in sorted(directory.glob("*.json")):
                try:
                    record = json.loads(record_path.read_text())
                except ValueError:
                    continue
                pending.append((refusal_row(record), [], record_path))
        previous = path / "run_results.json"
        # a warehouse without audit history (fresh, or rebuilt by `make demo`) does not adopt
        # whatever command last wrote this target directory
        if previous.is_file() and audit_tables.table_exists(spark, table):
            data = json.loads(previous.read_text())
            meta = data.get("metadata") or {}
            prev_id = meta.get("invocation_id")
            if prev_id and prev_id != invocation_id:
                pending.append(
                    (previous_invocation(data, target_schema), list(data.get("results") or []), None)
                )
        if not pending:
            return report
        loaded = audit_tables.existing_values(
            spark, table, "invocation_id", [p[0]["invocation_id"] for p in pending]
        )
        results_table = audit_relation(manifest, "dbt_node_results", target_schema)
        for invocation, results, record_path in pending:
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
                have = audit_tables.existing_values(spark, results_table, "result_id", keys)
                extra = [r for r, k in zip(results, keys, strict=True) if k not in have]
                if extra:
                    rows = node_result_rows(invocation_id, extra, manifest)
                    audit_tables.write_rows(spark, results_table, "dbt_node_results", rows)
                    report["loaded"].append(f"{invocation_id} (+{len(rows)} hook results)")
            if record_path is not None:
                record_path.unlink(missing_ok=True)
    except Exception as exc:
        report = {"ok": False, "error": describe_error(exc)}
    return report


def previous_invocation(run_results: Mapping[str, Any], target_schema: str) -> dict[str, Any]:
    """A dbt_invocations row from a run_results.json (a command that had no on-run-end)."""
    meta = run_results.get("metadata") or {}
    args = dict(run_results.get("args") or {})
    results = list(run_results.get("results") or [])
    elapsed = float(run_results.get("elapsed_time") or 0.0)
    ended = _ts(meta.get("generated_at"))
    started = None
    if ended is not None:
        from datetime import timedelta

        started = ended - timedelta(seconds=elapsed)
    return invocation_row(
        meta["invocation_id"],
        args,
        results,
        target_name=args.get("target"),
        target_schema=target_schema,
        dbt_version=meta.get("dbt_version"),
        project_name=None,
        started_at=started,
        ended_at=ended,
        loaded_from="run_results.json",
    )


DBT_COMMANDS = (
    "build run test seed snapshot compile docs run-operation retry show source clone list ls parse debug deps clean"
).split()


def refusal_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A dbt_invocations row (status `refused`) from a run lock refusal record."""
    command = str(record.get("command") or "")
    words = command.split()
    which = next((w for w in words[1:] if w in DBT_COMMANDS), None)
    args = {"which": which, "argv": words}
    return invocation_row(
        str(record.get("invocation_id") or f"refused-{record.get('pid')}-{record.get('refused_at')}"),
        args,
        [],
        target_name=None,
        target_schema=None,
        dbt_version=record.get("dbt_version"),
        project_name=None,
        started_at=record.get("refused_at"),
        ended_at=record.get("refused_at"),
        loaded_from="refusal record",
        status="refused",
        message=f"refused: {record.get('holder')} held the warehouse {record.get('warehouse')}",
        run_by=record.get("user"),
        host=record.get("host"),
    )
