"""Rendering of the coverage macros (macros/erasure/coverage.sql) without a warehouse."""

from tests.unit.macro_harness import MacroRenderer, squash

render = MacroRenderer()

COLUMNS = (
    "finding_id, table_id, database_name, table_name, finding, matched_columns, upstream_tables, "
    "exception_pattern, exception_reason, action"
)


def exception_rows(*rows):
    return [
        {
            "table_pattern": p,
            "reason": r,
            "patterns": render("parse_table_patterns", p, "pii_coverage_exceptions"),
        }
        for p, r in rows
    ]


def test_rows_render_as_escaped_values_cast_to_string():
    row = render(
        "pii_coverage_finding", "cov", "visits", "pii_column_without_descriptor", ["o'k", "a.b"], None, []
    )
    sql = squash(render("pii_coverage_rows_sql", [row]))
    assert sql.startswith("select cast(finding_id as string) as finding_id,")
    assert "('cov.visits:pii_column_without_descriptor', 'cov.visits', 'cov', 'visits'" in sql
    assert "'o\\'k, a.b', null, null, null, 'Onboard it: dbt run-operation onboard" in sql
    assert sql.endswith(f"as findings ({COLUMNS})")


def test_no_rows_render_a_typed_empty_select():
    sql = squash(render("pii_coverage_rows_sql", []))
    assert sql.startswith("select cast(null as string) as finding_id,")
    assert sql.endswith("cast(null as string) as action where 1 = 0")


def test_the_most_specific_exception_with_a_reason_wins():
    rows = exception_rows(
        ("cov*", "all of cov"), ("cov.visits", "this one"), ("cov.vis*", ""), ("crm", "crm")
    )
    rows[2]["reason"] = None
    assert render("pii_coverage_exception_for", "cov", "visits", rows) == {
        "pattern": "cov.visits",
        "reason": "this one",
    }
    assert render("pii_coverage_exception_for", "cov", "visitors", rows) == {
        "pattern": "cov*",
        "reason": "all of cov",
    }
    assert render("pii_coverage_exception_for", "kafka", "visits", rows) is None


def test_an_excepted_finding_has_no_action_and_an_open_one_suggests_a_plain_field():
    excepted = render(
        "pii_coverage_finding",
        "cov",
        "t",
        "downstream_of_onboarded",
        None,
        ["cov.src"],
        exception_rows(("cov.t", "why")),
    )
    assert (excepted["exception_reason"], excepted["action"], excepted["upstream_tables"]) == (
        "why",
        None,
        "cov.src",
    )
    open_one = render(
        "pii_coverage_finding",
        "cov",
        "t",
        "pii_column_without_descriptor",
        ["items[].id", "meta.id"],
        None,
        [],
    )
    assert "identifier: meta.id}" in open_one["action"] and "pii_coverage_exceptions" in open_one["action"]


def test_identifier_names_are_the_leaves_of_the_descriptors_and_the_id_column():
    tables = [{"identifier": "metadata.GuestId"}, {"identifier": "member_id"}, {"identifier": None}]
    assert render("pii_coverage_identifier_names", tables, "guestid") == ["guestid", "member_id"]
