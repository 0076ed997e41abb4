"""python_hooks.erasure.coverage: field paths, name matching and lineage, in pure Python."""

import pytest

from python_hooks.erasure import coverage
from python_hooks.errors import LakehouseError

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "GuestId", "type": "long"},
        {
            "name": "device",
            "type": {
                "type": "struct",
                "fields": [
                    {
                        "name": "owner",
                        "type": {"type": "struct", "fields": [{"name": "guestid", "type": "long"}]},
                    }
                ],
            },
        },
        {
            "name": "items",
            "type": {
                "type": "array",
                "elementType": {"type": "struct", "fields": [{"name": "guestid", "type": "long"}]},
                "containsNull": True,
            },
        },
        {"name": "tags", "type": {"type": "map", "keyType": "string", "valueType": "string"}},
        {"name": "contact_email", "type": "string"},
    ],
}


def test_field_paths_reach_every_depth_through_structs_arrays_and_maps():
    assert coverage.field_paths(SCHEMA) == [
        "GuestId",
        "device",
        "device.owner",
        "device.owner.guestid",
        "items",
        "items[].guestid",
        "tags",
        "contact_email",
    ]


def test_names_match_leaves_case_insensitively_and_patterns_match_names_or_paths():
    paths = coverage.field_paths(SCHEMA)
    assert coverage.matching_fields(paths, ["guestid"], []) == [
        "GuestId",
        "device.owner.guestid",
        "items[].guestid",
    ]
    globs = coverage.compile_patterns(["*EMAIL*", "device.owner"])
    assert coverage.matching_fields(paths, [], globs) == ["device.owner", "contact_email"]
    regex = coverage.compile_patterns(["re:^(e_?mail|contact_.*)$"])
    assert coverage.matching_fields(paths, [], regex) == ["contact_email"]
    assert coverage.compile_patterns([]) == [] and coverage.compile_patterns(None) == []


def test_a_bad_pattern_names_itself():
    with pytest.raises(LakehouseError, match=r"entry 're:\(' that is not a valid regex"):
        coverage.compile_patterns(["re:("])


@pytest.mark.parametrize(
    ("descriptor", "identifier"),
    [
        ('{"complianceSpec": {"identifierField": " metadata.guestid "}}', "metadata.guestid"),
        ('{"complianceSpec": {}}', None),
        ("not json", None),
        (None, None),
    ],
)
def test_descriptor_identifier(descriptor, identifier):
    assert coverage.descriptor_identifier(descriptor) == identifier


def test_downstream_walks_every_node_and_lists_only_tables_not_onboarded_or_exempt():
    nodes = {
        "source.p.cov.events": {"relation": "cov.events", "resource_type": "source", "tags": []},
        "model.p.eph": {"relation": "lake.eph", "resource_type": "model", "tags": []},
        "model.p.rollup": {"relation": "lake.rollup", "resource_type": "model", "tags": []},
        "model.p.top": {"relation": "lake.top", "resource_type": "model", "tags": []},
        "model.p.purged_copy": {"relation": "cov.copy", "resource_type": "model", "tags": []},
        "model.p.purge_log": {"relation": "lake.purge_log", "resource_type": "model", "tags": ["purge"]},
        "test.p.not_null": {"relation": None, "resource_type": "test", "tags": []},
        "model.p.elsewhere": {"relation": "lake.elsewhere", "resource_type": "model", "tags": []},
    }
    edges = [
        ["source.p.cov.events", "model.p.eph"],
        ["model.p.eph", "model.p.rollup"],
        ["model.p.rollup", "model.p.top"],
        ["source.p.cov.events", "model.p.purged_copy"],
        ["model.p.purged_copy", "model.p.top"],
        ["source.p.cov.events", "model.p.purge_log"],
        ["model.p.rollup", "test.p.not_null"],
    ]
    found = coverage.downstream(edges, nodes, ["cov.events", "COV.COPY"], ["purge"])
    assert found == [
        {"table_id": "lake.eph", "unique_id": "model.p.eph", "upstream": ["cov.events"]},
        {"table_id": "lake.rollup", "unique_id": "model.p.rollup", "upstream": ["cov.events"]},
        {"table_id": "lake.top", "unique_id": "model.p.top", "upstream": ["cov.copy", "cov.events"]},
    ]
