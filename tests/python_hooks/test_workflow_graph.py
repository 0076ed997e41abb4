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
    # by default the tests are counted on the node they test, not drawn
    for unique_id in MANIFEST["parent_map"]:
        assert (f'"{unique_id}"' in dot) is (unique_id != "test.p.t"), unique_id
    assert '"seed.p.ids" -> "model.p.a"' in dot and "test.p.t" not in dot
    assert "a\\n(model, error)" in dot and "#e06666" in dot
    assert "b\\n(model)\\n1 test" in dot
    # on request, the tests are nodes with their edges
    with_tests = workflow_graph.build_dot(MANIFEST, tests=True).source
    assert '"model.p.b" -> "test.p.t"' in with_tests
    paths = workflow_graph.write(workflow_graph.build_dot(MANIFEST, selected={"model.p.a"}), tmp_path / "g")
    assert paths[0].name == "g.dot" and "->" not in paths[0].read_text()


PRODUCT_MANIFEST = {
    "nodes": {
        "model.compliance.purge": {
            "resource_type": "model",
            "name": "purge",
            "package_name": "compliance",
            "tags": ["purge"],
        },
        "snapshot.compliance.member_history": {
            "resource_type": "snapshot",
            "name": "member_history",
            "package_name": "compliance",
            "original_file_path": "snapshots/member_history.yml",
            "tags": ["compaction"],  # dbt_project.yml tags the product's snapshots
        },
        "model.shop.orders_mart": {"resource_type": "model", "name": "orders_mart", "package_name": "shop"},
        "test.shop.not_null_x": {"resource_type": "test", "name": "not_null_x", "package_name": "shop"},
        "test.shop.unique_x": {"resource_type": "test", "name": "unique_x", "package_name": "shop"},
        "operation.compliance.compliance-on-run-end-0": {"resource_type": "operation", "name": "on-run-end"},
    },
    "sources": {
        "source.shop.sales.orders": {
            "resource_type": "source",
            "name": "orders",
            "source_name": "sales",
            "package_name": "shop",
        }
    },
    "parent_map": {
        "source.shop.sales.orders": [],
        "model.shop.orders_mart": ["source.shop.sales.orders"],
        "model.compliance.purge": ["source.shop.sales.orders"],
        "snapshot.compliance.member_history": [],
        "test.shop.not_null_x": ["model.shop.orders_mart"],
        "test.shop.unique_x": ["model.shop.orders_mart"],
        "operation.compliance.compliance-on-run-end-0": [],
    },
    "child_map": {},
}


def test_nodes_are_boxed_by_capability_and_package():
    dot = workflow_graph.build_dot(PRODUCT_MANIFEST).source
    assert "subgraph cluster_purge" in dot and "subgraph cluster_compaction" in dot
    assert "subgraph cluster_shop" in dot
    # the host's source of an onboarded table, drawn as the purge's input
    assert '"source.shop.sales.orders" -> "model.compliance.purge"' in dot
    assert "sales.orders\\n(source)" in dot
    # the hooks are not workflow steps
    assert "on-run-end" not in dot


def test_a_test_run_draws_the_tested_models_with_their_results(tmp_path):
    results = [
        {"unique_id": "test.shop.not_null_x", "status": "pass"},
        {"unique_id": "test.shop.unique_x", "status": "fail"},
        {"unique_id": "operation.compliance.compliance-on-run-end-0", "status": "success"},
    ]
    paths = workflow_graph.write_run_graphs(PRODUCT_MANIFEST, tmp_path, results)
    run = (tmp_path / "workflow_graph_run.dot").read_text()
    assert str(tmp_path / "workflow_graph_run.dot") in paths
    # no column of test boxes: the model they tested, with their results, coloured by the worst
    assert "test.shop" not in run
    assert "orders_mart\\n(model)\\n2 tests: 1 fail, 1 pass" in run and "#e06666" in run
    assert "dashed" in run  # it did not run itself
    assert '"model.compliance.purge"' not in run


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_svg_is_drawn_when_dot_is_installed(tmp_path):
    paths = workflow_graph.write(workflow_graph.build_dot(MANIFEST), tmp_path / "g")
    assert [p.name for p in paths] == ["g.dot", "g.svg"]
    assert "<svg" in paths[1].read_text() and "model.p.a" in paths[1].read_text()
