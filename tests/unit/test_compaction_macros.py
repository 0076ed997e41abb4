"""Rendering tests of the compaction's SQL-building macros (no warehouse)."""

import pytest

from tests.unit.macro_harness import CompilerError, MacroRenderer, squash

render = MacroRenderer(variables={"compaction_now": "2024-01-10 12:00:00"})

SETTINGS = {
    "dataset": "page_view",
    "dedup": "key",
    "key": ["event_id"],
    "order_by": "event_ts",
    "tie_breakers": ["ingested_at desc"],
}


def test_key_dedup_keeps_latest_per_hour_with_deterministic_ties():
    sql = squash(
        render(
            "dedup_sql",
            "select * from src",
            ["event_id", "page", "event_ts", "ingested_at", "ds", "hr"],
            SETTINGS,
            ["ds", "hr"],
        )
    )
    assert "partition by `ds`, `hr`, `event_id`" in sql
    # latest event_ts, then latest ingested_at, then every other column: never file order
    assert "order by `event_ts` desc, `ingested_at` desc, `page` ) as dbt_compaction_rank" in sql
    assert sql.endswith("where dbt_compaction_rank = 1")


def test_all_fields_dedup_is_distinct():
    sql = squash(render("dedup_sql", "select * from src", ["a", "b"], {"dedup": "all"}))
    assert sql == "select distinct `a`, `b` from (select * from src) as dedup_input"


def test_durations_and_their_errors():
    assert render("compaction_duration_seconds", "1h", "x") == 3600
    assert render("compaction_duration_seconds", "3d", "x") == 259200
    with pytest.raises(CompilerError, match="Invalid compaction_max_time_ago '3 days'"):
        render("compaction_duration_seconds", "3 days", "compaction_max_time_ago")


def test_window_is_relative_to_compaction_now():
    sql = squash(render("hour_window_predicate", "2024-01-10 12:00:00", 3600, 259200, "s"))
    assert "<= unix_timestamp(to_timestamp('2024-01-10 12:00:00')) - 3600" in sql
    assert "> unix_timestamp(to_timestamp('2024-01-10 12:00:00')) - 259200" in sql
    assert "lpad(cast(s.`hr` as string), 2, '0')" in sql


def test_settings_are_checked():
    with pytest.raises(CompilerError, match="accepted values: 'all', 'key'"):
        render("hourly_settings", {"compaction": {"dataset": "d", "dedup": "fuzzy"}}, "m")
    with pytest.raises(CompilerError, match="needs compaction.key"):
        render("hourly_settings", {"compaction": {"dataset": "d", "dedup": "key"}}, "m")
    with pytest.raises(CompilerError, match="has no meta.compaction.dataset"):
        render("hourly_settings", {}, "m")


def test_verification_whitelist_and_blacklist():
    assert render("compaction_name_matches", "page_view", "page*") is True
    assert render("compaction_name_matches", "page_view", "click, search") is False
    verified = MacroRenderer(variables={"compaction_verify_blacklist": "page_*"})
    settings = verified("hourly_settings", {"compaction": {"dataset": "page_view"}}, "m")
    assert settings["verify"] is False
