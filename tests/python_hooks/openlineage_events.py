"""Read an OpenLineage export back through openlineage-python's typed classes.

The project keeps no copy of the OpenLineage schemas: each line is rebuilt as the client's own
`RunEvent` (and the dataset, run and job facets this project writes), whose constructors check
what the spec requires (a UUID runId, an ISO eventTime with a time zone, a URI producer, every
required field present).  A line that does not fit raises `InvalidEvent` naming the line and
the field.  The tests then assert on the fields that matter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    error_message_run,
    job_type_job,
    parent_run,
    schema_dataset,
    sql_job,
)


class InvalidEvent(ValueError):
    """A line of the export that openlineage-python's classes refuse."""


def _required(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise KeyError(f"{where}: '{key}' is a required property")
    return data[key]


def _dataset_facets(facets: dict[str, Any], where: str) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for name, facet in facets.items():
        if name == "schema":
            typed[name] = schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(
                        name=_required(f, "name", f"{where}.schema"), type=f.get("type")
                    )
                    for f in _required(facet, "fields", f"{where}.schema")
                ]
            )
        elif name == "columnLineage":
            typed[name] = column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    column: column_lineage_dataset.Fields(
                        inputFields=[
                            column_lineage_dataset.InputField(
                                namespace=_required(i, "namespace", f"{where}.columnLineage.{column}"),
                                name=_required(i, "name", f"{where}.columnLineage.{column}"),
                                field=_required(i, "field", f"{where}.columnLineage.{column}"),
                            )
                            for i in _required(spec, "inputFields", f"{where}.columnLineage.{column}")
                        ]
                    )
                    for column, spec in _required(facet, "fields", f"{where}.columnLineage").items()
                }
            )
    return typed


def _run(data: dict[str, Any]) -> Run:
    facets: dict[str, Any] = {}
    for name, facet in (data.get("facets") or {}).items():
        if name == "parent":
            facets[name] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=_required(facet["run"], "runId", "run.facets.parent.run")),
                job=parent_run.Job(namespace=facet["job"]["namespace"], name=facet["job"]["name"]),
            )
        elif name == "errorMessage":
            facets[name] = error_message_run.ErrorMessageRunFacet(
                message=facet["message"], programmingLanguage=facet["programmingLanguage"]
            )
    return Run(runId=_required(data, "runId", "run"), facets=facets)


def _job(data: dict[str, Any]) -> Job:
    facets: dict[str, Any] = {}
    for name, facet in (data.get("facets") or {}).items():
        if name == "jobType":
            facets[name] = job_type_job.JobTypeJobFacet(
                processingType=facet["processingType"],
                integration=facet["integration"],
                jobType=facet["jobType"],
            )
        elif name == "sql":
            facets[name] = sql_job.SQLJobFacet(query=facet["query"])
    return Job(
        namespace=_required(data, "namespace", "job"), name=_required(data, "name", "job"), facets=facets
    )


def parse_event(data: dict[str, Any]) -> RunEvent:
    schema_url = _required(data, "schemaURL", "event")
    if not str(schema_url).startswith("https://openlineage.io/spec/"):
        raise ValueError(f"event: schemaURL {schema_url!r} is not an OpenLineage spec URL")
    return RunEvent(
        eventType=RunState(_required(data, "eventType", "event")),
        eventTime=_required(data, "eventTime", "event"),
        run=_run(_required(data, "run", "event")),
        job=_job(_required(data, "job", "event")),
        producer=_required(data, "producer", "event"),
        inputs=[
            InputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=_dataset_facets(d.get("facets") or {}, "inputs"),
            )
            for d in data.get("inputs") or []
        ],
        outputs=[
            OutputDataset(
                namespace=d["namespace"],
                name=d["name"],
                facets=_dataset_facets(d.get("facets") or {}, "outputs"),
            )
            for d in data.get("outputs") or []
        ],
    )


def parse_events(path: Path) -> list[RunEvent]:
    """Every event of a .jsonl export as a RunEvent; InvalidEvent names the first line that is not one."""
    events = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(parse_event(json.loads(line)))
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidEvent(f"{path} line {number}: {exc}") from exc
    return events
