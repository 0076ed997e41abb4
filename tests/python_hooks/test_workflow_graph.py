"""Workflow graph selection and drawing from a manifest, without dbt."""

import shutil

import pytest

from python_hooks.audit import workflow_graph
from python_hooks.errors import LakehouseError

MANIFEST = {
    "nodes": {
        "seed.p.ids": {"resource_type": "seed", "name": "ids", "original_file_path": "seeds/ids.csv"},
        "model.p.a": {
            "resource_type": "model",
            "name": "a",
            "tags": ["purge"],
            "original_file_path": "models/purge/a.sql",
        },
        "model.p.b": {"resource_type": "model", "name": "b", "original_file_path": "models/audit/b.sql"},
        "model.p.c": {"resource_type": "model", "name": "c", "original_file_path": "models/audit/c.sql"},
        "test.p.t": {"resource_type": "test", "name": "t"},
    },
    "sources": {"source.p.raw.e": {"resource_type": "source", "name": "e", "source_name": "raw"}},
    "parent_map": {
        "seed.p.ids": [],
        "source.p.raw.e": [],
        "model.p.a": ["seed.p.ids", "source.p.raw.e"],
        "model.p.b": ["model.p.a"],
        "model.p.c": [],
        "test.p.t": ["model.p.b"],
    },
    "child_map": {
        "seed.p.ids": ["model.p.a"],
        "source.p.raw.e": ["model.p.a"],
        "model.p.a": ["model.p.b"],
        "model.p.b": ["test.p.t"],
        "model.p.c": [],
        "test.p.t": [],
    },
}


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (["a"], {"model.p.a"}),
        (["+a"], {"model.p.a", "seed.p.ids", "source.p.raw.e"}),
        (["a+"], {"model.p.a", "model.p.b", "test.p.t"}),
        (["tag:purge", "c"], {"model.p.a", "model.p.c"}),
        (["path:models/audit"], {"model.p.b", "model.p.c"}),
        (["resource_type:seed"], {"seed.p.ids"}),
        (["source:raw.e"], {"source.p.raw.e"}),
    ],
)
def test_selection(specs, expected):
    assert workflow_graph.select(MANIFEST, specs) == expected


def test_exclude_and_unknown_names():
    assert workflow_graph.select(MANIFEST, ["a+"], ["test.p.t"]) == {"model.p.a", "model.p.b"}
    with pytest.raises(LakehouseError, match="'nope' matches no node"):
        workflow_graph.select(MANIFEST, ["nope"])


def test_dot_has_every_node_and_edge_and_statuses(tmp_path):
    dot = workflow_graph.build_dot(MANIFEST, statuses={"model.p.a": "error"}).source
    for unique_id in MANIFEST["parent_map"]:
        assert f'"{unique_id}"' in dot
    assert '"seed.p.ids" -> "model.p.a"' in dot and '"model.p.b" -> "test.p.t"' in dot
    assert "a\\n(model, error)" in dot and "#e06666" in dot
    paths = workflow_graph.write(workflow_graph.build_dot(MANIFEST, selected={"model.p.a"}), tmp_path / "g")
    assert paths[0].name == "g.dot" and "->" not in paths[0].read_text()


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_svg_is_drawn_when_dot_is_installed(tmp_path):
    paths = workflow_graph.write(workflow_graph.build_dot(MANIFEST), tmp_path / "g")
    assert [p.name for p in paths] == ["g.dot", "g.svg"]
    assert "<svg" in paths[1].read_text() and "model.p.a" in paths[1].read_text()
