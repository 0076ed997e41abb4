"""A dbt run's events as OpenLineage JSON (file transport), with the column lineage facet.

One job for the dbt command (`dbt-<command>`, START then COMPLETE or FAIL) and one job per model,
seed and snapshot that ran (START then COMPLETE, FAIL or ABORT for skipped), each with its
parents as inputs and its relation as output; outputs carry the `schema` facet (from the
catalog) and the `columnLineage` facet (from dbt_column_lineage).  Events go, one JSON per
line, to `target/openlineage/<invocation_id>.jsonl`, so the run can be replayed into Marquez
or any OpenLineage consumer (`curl -X POST .../api/v1/lineage -d @line`).

The events are built with openlineage-python's typed classes; the tests read every line back
through them (tests/python_hooks/openlineage_events.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    error_message_run,
    job_type_job,
    parent_run,
    schema_dataset,
    sql_job,
)
from openlineage.client.transport.file import FileConfig, FileTransport

from python_hooks.audit.values import timing

PRODUCER = "https://github.com/compliance-lakehouse/dbt-lakehouse/python_hooks/openlineage_export"
JOB_NAMESPACE = "dbt-lakehouse"
RUN_RESOURCE_TYPES = ("model", "seed", "snapshot")
END_STATE = {"success": RunState.COMPLETE, "skipped": RunState.ABORT}


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return moment.isoformat()
    if value:
        return str(value) if "+" in str(value) or str(value).endswith("Z") else f"{value}+00:00"
    return datetime.now(timezone.utc).isoformat()


def _node_run_id(invocation_id: str, unique_id: str) -> str:
    return str(
        uuid.uuid5(uuid.UUID(invocation_id) if _is_uuid(invocation_id) else uuid.NAMESPACE_URL, unique_id)
    )


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError):
        return False
    return True


def dataset_namespace(warehouse: str | None) -> str:
    return f"hive://{warehouse}" if warehouse else "hive://local"


def _relation(nodes: Mapping[str, Mapping[str, Any]], unique_id: str) -> str | None:
    """`schema.identifier` of a model, seed, snapshot or source; None for any other node."""
    node = nodes.get(unique_id) or {}
    if node.get("resource_type") not in ("model", "seed", "snapshot", "source"):
        return None
    return f"{node.get('schema')}.{node.get('identifier') or node.get('alias') or node.get('name')}"


def _output_facets(
    output_name: str | None,
    lineage_rows: Sequence[Mapping[str, Any]],
    namespace: str,
    columns_of: Callable[[str], dict[str, str] | None] | None,
) -> dict[str, Any]:
    """The facets of a node's output: `schema` from the catalog, `columnLineage` from its rows of
    dbt_column_lineage (each left out when there is nothing to say)."""
    facets: dict[str, Any] = {}
    columns = columns_of(output_name) if (columns_of and output_name) else None
    if columns:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=c, type=t) for c, t in columns.items()]
        )
    fields: dict[str, column_lineage_dataset.Fields] = {}
    for row in lineage_rows:
        if not row.get("column_name") or not row.get("source_column") or not row.get("source_relation"):
            continue
        fields.setdefault(
            str(row["column_name"]), column_lineage_dataset.Fields(inputFields=[])
        ).inputFields.append(
            column_lineage_dataset.InputField(
                namespace=namespace, name=str(row["source_relation"]), field=str(row["source_column"])
            )
        )
    if fields:
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(fields=fields)
    return facets


def _node_job(node: Mapping[str, Any], unique_id: str, result: Mapping[str, Any]) -> Job:
    """The job of one node: its type and, for SQL, the compiled query."""
    job_facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="DBT", jobType=str(node["resource_type"]).upper()
        )
    }
    if result.get("compiled_code") and (node.get("language") or "sql") == "sql":
        job_facets["sql"] = sql_job.SQLJobFacet(query=str(result["compiled_code"]))
    return Job(namespace=JOB_NAMESPACE, name=unique_id, facets=job_facets)


def _node_events(
    result: Mapping[str, Any],
    node: Mapping[str, Any],
    nodes: Mapping[str, Mapping[str, Any]],
    invocation: Mapping[str, Any],
    run_id: str,
    parent: parent_run.ParentRunFacet,
    namespace: str,
    lineage_rows: Sequence[Mapping[str, Any]],
    columns_of: Callable[[str], dict[str, str] | None] | None,
) -> list[RunEvent]:
    """The START event of one node that ran and its end (COMPLETE, FAIL or ABORT), with its
    parents as inputs and its relation as output."""
    unique_id = str(result.get("unique_id") or "")
    output_name = _relation(nodes, unique_id)
    inputs = [
        InputDataset(namespace=namespace, name=name)
        for name in sorted(
            {_relation(nodes, p) for p in (node.get("depends_on") or {}).get("nodes") or []} - {None}
        )
        if name
    ]
    facets = _output_facets(output_name, lineage_rows, namespace, columns_of)
    outputs = [OutputDataset(namespace=namespace, name=output_name, facets=facets)] if output_name else []
    job = _node_job(node, unique_id, result)
    node_run = _node_run_id(run_id, unique_id)
    start = RunEvent(
        eventType=RunState.START,
        eventTime=_iso(timing(result, "compile", "started_at") or invocation.get("started_at")),
        run=Run(runId=node_run, facets={"parent": parent}),
        job=job,
        inputs=inputs,
        outputs=outputs,
        producer=PRODUCER,
    )
    status = str(result.get("status"))
    run_facets: dict[str, Any] = {"parent": parent}
    if status not in END_STATE and result.get("message"):
        run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=str(result["message"]), programmingLanguage=str(node.get("language") or "sql").upper()
        )
    end = RunEvent(
        eventType=END_STATE.get(status, RunState.FAIL),
        eventTime=_iso(timing(result, "execute", "completed_at") or invocation.get("ended_at")),
        run=Run(runId=node_run, facets=run_facets),
        job=job,
        inputs=inputs,
        outputs=outputs,
        producer=PRODUCER,
    )
    return [start, end]


def build_events(
    manifest: Mapping[str, Any],
    invocation: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    column_lineage: Sequence[Mapping[str, Any]] = (),
    columns_of: Callable[[str], dict[str, str] | None] | None = None,
    warehouse: str | None = None,
) -> list[RunEvent]:
    """The OpenLineage events of one dbt invocation."""
    invocation_id = str(invocation["invocation_id"])
    run_id = invocation_id if _is_uuid(invocation_id) else str(uuid.uuid5(uuid.NAMESPACE_URL, invocation_id))
    namespace = dataset_namespace(warehouse)
    command = invocation.get("command") or "dbt"
    parent_job = Job(
        namespace=JOB_NAMESPACE,
        name=f"dbt-{command}",
        facets={
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="DBT", jobType="JOB")
        },
    )
    parent = parent_run.ParentRunFacet(
        run=parent_run.Run(runId=run_id), job=parent_run.Job(namespace=JOB_NAMESPACE, name=parent_job.name)
    )
    nodes: dict[str, Mapping[str, Any]] = {**manifest.get("nodes", {}), **manifest.get("sources", {})}
    lineage_by_model: dict[str, list[Mapping[str, Any]]] = {}
    for row in column_lineage:
        lineage_by_model.setdefault(str(row["model_unique_id"]), []).append(row)

    events = [
        RunEvent(
            eventType=RunState.START,
            eventTime=_iso(invocation.get("started_at")),
            run=Run(runId=run_id),
            job=parent_job,
            producer=PRODUCER,
        )
    ]
    for result in results:
        unique_id = str(result.get("unique_id") or "")
        node = nodes.get(unique_id) or {}
        if node.get("resource_type") not in RUN_RESOURCE_TYPES:
            continue
        events.extend(
            _node_events(
                result,
                node,
                nodes,
                invocation,
                run_id,
                parent,
                namespace,
                lineage_by_model.get(unique_id, []),
                columns_of,
            )  # fmt: skip
        )
    events.append(
        RunEvent(
            eventType=RunState.COMPLETE if invocation.get("status") == "success" else RunState.FAIL,
            eventTime=_iso(invocation.get("ended_at")),
            run=Run(runId=run_id),
            job=parent_job,
            producer=PRODUCER,
        )
    )
    return events


def export_run(
    manifest: Mapping[str, Any],
    invocation: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    target_path: Path,
    column_lineage: Sequence[Mapping[str, Any]] = (),
    columns_of: Callable[[str], dict[str, str] | None] | None = None,
    warehouse: str | None = None,
) -> Path:
    """Write the run's events through the OpenLineage file transport; return the file."""
    path = Path(target_path) / "openlineage" / f"{invocation['invocation_id']}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    client = OpenLineageClient(transport=FileTransport(FileConfig(log_file_path=str(path), append=True)))
    for event in build_events(manifest, invocation, results, column_lineage, columns_of, warehouse):
        client.emit(event)
    return path
