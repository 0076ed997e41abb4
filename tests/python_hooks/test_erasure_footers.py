"""The pure part of the footer rule (python_hooks/erasure/footers.py): when a [min, max] can prune."""

from __future__ import annotations

import pytest

from python_hooks.erasure import footers


@pytest.mark.parametrize(
    ("low", "high", "ids", "may_hold"),
    [
        (0, 99, [150, 250], False),
        (100, 199, [150, 250], True),
        (150, 150, [150], True),  # the id is the min and the max
        (140, 160, [150], True),  # straddles: may hold it
        (151, 249, [150, 250], False),  # between two ids
        (None, 10, [5], True),  # an unknown bound reads the file
        (0, 10, [], False),
        (b"g100", b"g109", [b"g100x"], True),
        (b"g100", b"g109", [b"a", b"h"], False),
    ],
)
def test_range_may_hold(low, high, ids, may_hold):
    assert footers.range_may_hold(low, high, ids) is may_hold


def test_only_integral_or_string_pairs_prune():
    assert footers.id_kind("bigint", "int") == "int"
    assert footers.id_kind("string", "string") == "string"
    for pair in [
        ("double", "bigint"),
        ("decimal(10,0)", "bigint"),
        ("varchar(10)", "string"),
        ("string", "bigint"),
    ]:
        assert footers.id_kind(*pair) is None


def test_ids_that_do_not_fit_the_kind_turn_pruning_off():
    assert footers.sortable_ids([3, 1, 2, 2], "int") == [1, 2, 3]
    assert footers.sortable_ids([1, 2.5], "int") is None
    assert footers.sortable_ids([True], "int") is None
    assert footers.sortable_ids(["b", "a"], "string") == [b"a", b"b"]
    assert footers.sortable_ids([1], None) is None
