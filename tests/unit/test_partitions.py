"""Partition specs as `show partitions` prints them (path-escaped) and as SQL needs them."""

from hypothesis import given
from hypothesis import strategies as st

from python_hooks.catalog.partitions import escape_path_name, parse_spec, spec_path, unescape_path_name


def test_show_partitions_output_is_unescaped():
    assert parse_spec("datepartition=2017-02-16%3A00/who=o%27brien/city=new york") == [
        ("datepartition", "2017-02-16:00"),
        ("who", "o'brien"),
        ("city", "new york"),
    ]


def test_spec_path_escapes_like_hive():
    assert (
        spec_path([("ts", "2024-01-01 10:00:00"), ("q", 'a"b/c')]) == "ts=2024-01-01 10%3A00%3A00/q=a%22b%2Fc"
    )


def test_a_malformed_spec_is_named():
    import pytest

    with pytest.raises(ValueError, match="'justavalue' is not of the form key=value"):
        parse_spec("justavalue")


@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), max_size=20))
def test_escape_round_trips(value):
    assert unescape_path_name(escape_path_name(value)) == value
    assert "/" not in escape_path_name(value) and "=" not in escape_path_name(value)
