"""OpenLineage events from a fake run, read back through openlineage-python's typed classes."""

import json
import uuid

import pytest

from python_hooks.audit import openlineage_export
from tests.python_hooks.openlineage_events import InvalidEvent, parse_events

MANIFEST = {
    "nodes": {
        "model.p.m": {
            "resource_type": "model",
            "name": "m",
            "schema": "db",
            "alias": "m",
            "language": "sql",
            "depends_on": {"nodes": ["seed.p.s"]},
        },
        "seed.p.s": {
            "resource_type": "seed",
            "name": "s",
            "schema": "db",
            "alias": "s",
            "depends_on": {"nodes": []},
        },
        "test.p.t": {"resource_type": "test", "name": "t", "depends_on": {"nodes": ["model.p.m"]}},
    }
}
INVOCATION = {
    "invocation_id": str(uuid.uuid4()),
    "command": "build",
    "status": "error",
    "started_at": "2024-01-01T00:00:00",
    "ended_at": "2024-01-01T00:01:00",
}
RESULTS = [
    {"unique_id": "seed.p.s", "status": "success", "timing": []},
    {
        "unique_id": "model.p.m",
        "status": "error",
        "message": "boom",
        "compiled_code": "select k from db.s",
        "timing": [],
    },
    {"unique_id": "test.p.t", "status": "skipped", "timing": []},
]
LINEAGE = [
    {"model_unique_id": "model.p.m", "column_name": "k", "source_relation": "db.s", "source_column": "k"},
    {"model_unique_id": "model.p.m", "column_name": "lit", "source_relation": None, "source_column": None},
]


def test_events_validate_and_carry_column_lineage(tmp_path):
    path = openlineage_export.export_run(
        MANIFEST, INVOCATION, RESULTS, tmp_path, column_lineage=LINEAGE, columns_of=lambda r: {"k": "int"}
    )
    typed = parse_events(path)
    assert len(typed) == 6  # dbt job start/end + 2 per seed and model
    assert all(str(e.run.runId) and e.eventTime.endswith("+00:00") for e in typed)
    assert typed[4].outputs[0].facets["columnLineage"].fields["k"].inputFields[0].field == "k"
    assert [f.name for f in typed[4].outputs[0].facets["schema"].fields] == ["k"]
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("dbt-build", "START"),
        ("seed.p.s", "START"),
        ("seed.p.s", "COMPLETE"),
        ("model.p.m", "START"),
        ("model.p.m", "FAIL"),
        ("dbt-build", "FAIL"),
    ]
    failed = events[4]
    assert failed["run"]["facets"]["errorMessage"]["message"] == "boom"
    assert failed["run"]["facets"]["parent"]["run"]["runId"] == INVOCATION["invocation_id"]
    assert failed["inputs"] == [
        {"namespace": "hive://local", "name": "db.s", "facets": {}, "inputFacets": {}}
    ]
    fields = failed["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert fields == {
        "k": {
            "inputFields": [
                {"namespace": "hive://local", "name": "db.s", "field": "k", "transformations": []}
            ]
        }
    }
    assert failed["job"]["facets"]["sql"]["query"] == "select k from db.s"


def test_a_facet_that_breaks_its_schema_is_named(tmp_path):
    path = openlineage_export.export_run(MANIFEST, INVOCATION, RESULTS, tmp_path, column_lineage=LINEAGE)
    lines = path.read_text().splitlines()
    event = json.loads(lines[4])
    del event["outputs"][0]["facets"]["columnLineage"]["fields"]["k"]["inputFields"][0]["field"]
    path.write_text(json.dumps(event) + "\n")
    with pytest.raises(InvalidEvent, match="line 1: .*columnLineage.k: 'field' is a required"):
        parse_events(path)
