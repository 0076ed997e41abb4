"""Retention policies are checked before anything is deleted (python_hooks.retention.policy)."""

import pytest

from python_hooks.catalog.clock import Clock, retention_clock
from python_hooks.errors import LakehouseError
from python_hooks.retention.policy import check_policies, validate_policies

DEFAULTS = {
    "backup_retention_days": 7,
    "backup_retention_versions": 3,
    "trash_retention_days": 7,
    "staging_retention_hours": 24,
    "backup_reap_days": None,
    "backup_dir": "",
    "partition_column": "",
    "partition_date_format": "yyyy-MM-dd",
    "partition_age": "value",
    "partition_retention_days": None,
    "snapshot_column": "",
    "snapshot_retention_count": None,
    "stale_retention_days": 7,
}


def row(pattern: str, **cells: object) -> dict:
    return {"table_pattern": pattern, **{name: None for name in DEFAULTS}, **cells}


def test_the_defaults_and_good_rows_pass():
    rows = [
        row(
            "tracking.hourly*",
            partition_column="dp",
            partition_date_format="yyyy-MM-dd-HH",
            partition_retention_days="2",
        )
    ]
    assert check_policies(rows, DEFAULTS) == []


def test_a_bad_cell_names_the_row_the_column_the_value_and_what_is_accepted():
    [problem] = check_policies([row("tracking", backup_retention_days="seven")], DEFAULTS)
    assert problem == (
        "retention_policies row 1 (table_pattern 'tracking'): backup_retention_days is 'seven': "
        "expected a number >= 0 (days)"
    )
    [problem] = check_policies([row("a"), row("b", backup_retention_versions="1.5")], DEFAULTS)
    assert problem.startswith(
        "retention_policies row 2 (table_pattern 'b'): backup_retention_versions is '1.5'"
    )
    assert "a whole number >= 0" in problem


def test_negative_and_non_numeric_vars_are_refused():
    problems = check_policies([], {**DEFAULTS, "trash_retention_days": "-1", "stale_retention_days": "soon"})
    assert "Var trash_retention_days: trash_retention_days is '-1': expected a number >= 0 (days)" in problems
    assert (
        "Var stale_retention_days: stale_retention_days is 'soon': expected a number >= 0 (days)" in problems
    )
    assert check_policies([], {**DEFAULTS, "backup_retention_days": ""}) == [
        "Var backup_retention_days: it is blank; it must be set (number >= 0)"
    ]


@pytest.mark.parametrize(
    ("fmt", "words"),
    [
        ("yyyy-mm-dd", "has no a month (MM) (mm is minutes, not months)"),
        ("MM-dd", "has no a year (yyyy)"),
        ("yyyy-MM", "has no a day (dd)"),
        ("yyyy-MM-dd'T'HH", "only yyyy, MM, dd, HH, mm and ss are understood"),
    ],
)
def test_date_formats_need_a_year_a_month_and_a_day(fmt, words):
    [problem] = check_policies([row("t", partition_column="dp", partition_date_format=fmt)], DEFAULTS)
    assert words in problem and repr(fmt) in problem


def test_a_retention_under_the_minimum_is_refused_unless_allowed():
    rows = [row("tracking.event", partition_column="dp", partition_retention_days="0")]
    short = {**DEFAULTS, "staging_retention_hours": 2}
    problems = check_policies(rows, short)
    assert len(problems) == 2
    assert problems[0].startswith(
        "Var staging_retention_hours: staging_retention_hours is 2 (2 h), under retention_min_hours (24 h)"
    )
    assert "retention_allow_short: true" in problems[0]
    assert "partition_retention_days is 0 (0 h)" in problems[1]
    assert check_policies(rows, short, allow_short=True) == []
    assert check_policies(rows, short, min_hours=0) == []
    assert check_policies([], DEFAULTS, min_hours="a day") == [
        "Var retention_min_hours is 'a day': expected a number of hours >= 0 (default 24)"
    ]


def test_other_settings_are_checked_too():
    problems = check_policies(
        [row("t", partition_age="mtime", snapshot_column="dp; drop", backup_dir="/backups/../etc")], DEFAULTS
    )
    assert any("partition_age is 'mtime': expected value" in p for p in problems)
    assert any("snapshot_column is 'dp; drop': expected a column name" in p for p in problems)
    assert any("backup_dir is '/backups/../etc': a path with '..' is refused" in p for p in problems)


def test_validation_raises_one_error_listing_every_problem():
    with pytest.raises(LakehouseError) as raised:
        validate_policies(
            None, [row("x", trash_retention_days="seven")], {**DEFAULTS, "backup_retention_days": "0"}
        )
    message = raised.value.msg
    assert message.startswith("Retention policies refused; nothing was deleted:")
    assert "trash_retention_days is 'seven'" in message and "backup_retention_days is 0 (0 h)" in message


def test_a_pattern_that_matches_no_table_is_a_warning_with_the_nearest_names():
    from python_hooks.retention.policy import unmatched_patterns

    tables = [("sales", "orders"), ("sales", "returns"), ("crm", "contacts")]
    rows = [row("sales.order"), row("sales.ret*, crm"), row("nowhere*")]
    assert unmatched_patterns(tables, rows, scope="sales, salse") == [
        "retention_policies row 1 (table_pattern): 'sales.order' matches no table (did you mean sales.orders, sales.returns, sales?)",
        "retention_policies row 3 (table_pattern): 'nowhere*' matches no table",
        "Var retention_scope: 'salse' matches no table (did you mean sales?)",
    ]


def test_a_clock_in_the_future_is_refused_unless_allowed():
    """`retention_now` beyond a few minutes ahead of the driver's clock would make every copy due
    at once: refused, saying what to do; allowed only with retention_allow_future_now (a test or a
    demo that simulates a later day), and then marked as overridden, for retention_log."""
    driver = 1_800_000_000_000  # 2027-01-15T08:00:00Z
    later = "2027-01-25T08:00:00"  # ten days ahead
    with pytest.raises(LakehouseError) as refused:
        retention_clock(later, driver_ms=driver)
    message = str(refused.value)
    assert "Var retention_now is 2027-01-25T08:00:00Z, 10.0 day(s) ahead of this driver's clock" in message
    assert "Nothing was deleted" in message and "retention_allow_future_now: true" in message
    assert "backup_retention_days: 0 with retention_allow_short: true" in message
    # the same clock, allowed: taken, and said to be an override
    allowed = retention_clock(later, allow_future=True, driver_ms=driver)
    assert (allowed.ms, allowed.overridden) == (driver + 10 * 86_400_000, True)
    assert allowed.describe() == (
        "retention_now 2027-01-25T08:00:00Z, in place of the driver's clock 2027-01-15T08:00:00Z"
    )
    # a clock skew of a minute, and any time in the past, are taken without being allowed
    assert retention_clock(driver + 60_000, driver_ms=driver).ms == driver + 60_000
    assert retention_clock(str(driver - 86_400_000), driver_ms=driver).overridden
    # no retention_now: the driver's clock, not an override
    assert retention_clock("", driver_ms=driver) == Clock(driver, driver, overridden=False)
    with pytest.raises(LakehouseError, match="Var retention_now is 'next week': expected epoch milliseconds"):
        retention_clock("next week", driver_ms=driver)
