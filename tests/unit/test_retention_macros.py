"""Rendering tests of the retention and restore macros (policies, restore DDL)."""

import pytest

from tests.unit.macro_harness import CompilerError, MacroRenderer, squash

DEFAULTS = {
    "backup_retention_days": 7,
    "backup_retention_versions": 3,
    "trash_retention_days": 7,
    "staging_retention_hours": 24,
    "stale_retention_days": 7,
}
render = MacroRenderer(variables=DEFAULTS)


def row(pattern, **settings):
    return {"table_pattern": pattern, **settings}


def test_the_most_specific_policy_row_wins_and_blanks_keep_the_defaults():
    rows = [
        row("tracking*", backup_retention_days="30"),
        row("tracking", backup_retention_days="14", trash_retention_days="2"),
        row("tracking.event*", backup_retention_versions="5"),
        row("tracking.event", backup_retention_days="1", backup_retention_versions=None, partition_column=""),
    ]
    defaults = render("retention_defaults")
    policy = render("retention_policy", "tracking", "event", rows, defaults)
    assert policy["backup_retention_days"] == "1"
    assert policy["backup_retention_versions"] == 3  # blank in the winning row: the default
    assert policy["matched_pattern"] == "tracking.event"
    assert (
        render("retention_policy", "tracking", "event_hourly", rows, defaults)["backup_retention_versions"]
        == "5"
    )
    assert render("retention_policy", "tracking", "visit", rows, defaults)["trash_retention_days"] == "2"
    assert render("retention_policy", "tracking_raw", "x", rows, defaults)["backup_retention_days"] == "30"
    assert render("retention_policy", "crm", "member", rows, defaults) == defaults


def test_copy_days_is_the_larger_setting_and_none_without_backup_days():
    assert render("retention_copy_days", {"backup_retention_days": "3", "stale_retention_days": 7}) == 7.0
    assert render("retention_copy_days", {"backup_retention_days": 10, "stale_retention_days": None}) == 10.0
    assert render("retention_copy_days", {"backup_retention_days": " ", "stale_retention_days": 7}) is None
    assert render("retention_copy_days", {"backup_retention_days": None, "stale_retention_days": 7}) is None


def test_a_bad_pattern_or_var_is_named():
    with pytest.raises(CompilerError, match="retention_policies.table_pattern.*db.table"):
        render("retention_policy", "a", "b", [row("not a pattern!")], render("retention_defaults"))


def test_restore_ddl_escapes_quotes_and_colons_once():
    pairs = [["dp", "2024-01-01 10:00"], ["who", "o'brien"]]
    assert squash(render("add_partition_sql", "db", "t_trash_1", pairs, "file:/w/t/p=o%27brien")) == (
        "alter table `db`.`t_trash_1` add if not exists partition (`dp` = '2024-01-01 10:00', `who` = 'o\\'brien') "
        "location 'file:/w/t/p=o%27brien'"
    )
    assert squash(render("set_location_sql", "db", "t", pairs, "file:/w/t/1/x")) == (
        "alter table `db`.`t` partition (`dp` = '2024-01-01 10:00', `who` = 'o\\'brien') set location 'file:/w/t/1/x'"
    )
    assert squash(render("restore_trash_table_sql", "db", "t", "t_trash_9")) == (
        "create table `db`.`t_trash_9` like `db`.`t`"
    )
    assert "unset tblproperties if exists ('dataset.descriptor')" in render(
        "restore_untag_sql", "db", "t_trash_9"
    )
