"""python_hooks/purge/command_selection.py: which commands name the compliance job (docs/adopt.md)."""

from __future__ import annotations

import pytest

from python_hooks.purge.command_selection import JobNode, criteria, decide


def graph_node(name: str, folder: str, tags: list[str], package: str = "compliance") -> dict:
    return {
        "unique_id": f"model.{package}.{name}",
        "name": name,
        "fqn": [package, folder, name],
        "tags": tags,
        "original_file_path": f"models/{folder}/{name}.sql",
        "package_name": package,
    }


PURGE = graph_node("purge", "purge", ["purge"])
RETENTION = graph_node("retention", "retention", ["retention"])
PURGE_LOG = graph_node("purge_log", "purge", ["purge"])
REQUESTS = graph_node("erasure_requests", "erasure", ["erasure"])


def job(root: str = "shop") -> list[JobNode]:
    return [JobNode.from_graph(n, root) for n in (PURGE, RETENTION, PURGE_LOG, REQUESTS)]


EVERYTHING = [n["unique_id"] for n in (PURGE, RETENTION, PURGE_LOG, REQUESTS)] + [
    "model.shop.customer_revenue"
]


@pytest.mark.parametrize(
    "select",
    [
        ["purge+"],
        ["purge"],
        ["+purge+"],
        ["@purge"],
        ["2+purge+1"],
        ["compliance.purge"],
        ["compliance.purge.purge"],
        ["tag:purge"],
        ["tag:retention"],
        ["path:dbt_packages/compliance/models/purge"],
        ["dbt_packages/compliance/models/purge/purge.sql"],
        ["customer_revenue purge+"],
        ["customer_revenue", "purge_log+"],
        ["tag:purge,config.materialized:purge"],
        ["file:purge"],
    ],
)
def test_a_selection_that_names_the_job_acts(select):
    decision = decide(
        "model.compliance.purge", {"select": select}, EVERYTHING, job(), "dbt run --select purge+"
    )
    assert decision.named, decision.reason


@pytest.mark.parametrize(
    "args",
    [
        {},  # a plain dbt build / dbt run
        {"select": []},
        {"select": ["fqn:*"]},
        {"select": ["fqn:*", "source:*"]},
        {"select": ["*"]},
        {"select": ["purge*"]},
        {"select": ["tag:pur*"]},
        {"select": ["compliance"]},
        {"select": ["package:compliance"]},
        {"select": ["customer_revenue+"]},
        {"select": ["path:models"]},
        {"select": ["resource_type:model"]},
        {"exclude": ["tag:demo"]},
    ],
)
def test_a_selection_that_does_not_name_the_job_is_a_dry_run(args):
    decision = decide("model.compliance.purge", args, EVERYTHING, job(), "dbt run --select purge+")
    assert not decision.named
    assert decision.command == "dbt run --select purge+"
    assert decision.reason


def test_downstream_of_a_named_node_is_named_and_unselected_is_not():
    # `dbt run --select purge+` names retention too (dbt selected it, downstream of purge)
    assert decide("model.compliance.retention", {"select": ["purge+"]}, EVERYTHING, job(), "x").named
    # `dbt run --select purge` does not select retention
    selected = ["model.compliance.purge"]
    assert not decide("model.compliance.retention", {"select": ["purge"]}, selected, job(), "x").named


def test_the_documented_commands_at_the_repo_root():
    root = job("compliance")
    assert decide("model.compliance.retention", {"select": ["retention"]}, EVERYTHING, root, "x").named
    assert decide(
        "model.compliance.purge", {"select": ["path:models/purge/purge.sql"]}, EVERYTHING, root, "x"
    ).named
    assert decide("model.compliance.purge", {"select": ["purge", "purge_log"]}, EVERYTHING, root, "x").named
    # the legacy --models flag
    assert decide("model.compliance.purge", {"models": ["purge+"]}, EVERYTHING, root, "x").named


def test_an_explicit_selector_counts_and_the_default_one_does_not():
    # --selector: the user's own named choice, for every node it selects
    assert decide("model.compliance.purge", {"selector": "nightly"}, EVERYTHING, job(), "x").named
    # a default selector leaves `selector` unset in the invocation's args: not named
    assert not decide("model.compliance.purge", {"selector": None}, EVERYTHING, job(), "x").named


def test_criteria_split_space_separated_values():
    assert criteria(["fqn:* source:*", "purge+"]) == ["fqn:*", "source:*", "purge+"]
    assert criteria("purge+") == ["purge+"]
    assert criteria(None) == []
