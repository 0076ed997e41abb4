"""Rendering tests for the purge's SQL-building and input-checking macros (no warehouse)."""

from __future__ import annotations

import json

import pytest

from tests.unit.macro_harness import CompilerError, MacroRenderer, squash

render = MacroRenderer()


def _fromjson(text, default=None):
    """dbt's fromjson: the default instead of an error for text that is not JSON."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return default


render.globals["fromjson"] = _fromjson


def patterns(text):
    return render("parse_table_patterns", text, "purge_whitelist")


@pytest.mark.parametrize(
    ("whitelist", "blacklist", "table", "selected"),
    [
        ("tracking", "", ("tracking", "event"), True),
        ("TRACKING", "", ("tracking", "event"), True),
        ("tracking", "", ("tracking_v2", "event"), False),
        ("track*", "", ("tracking_v2", "event"), True),
        ("tracking.event", "", ("tracking", "event"), True),
        ("tracking.event", "", ("tracking", "event_v2"), False),
        ("tracking.event*", "", ("tracking", "event_v2"), True),
        ("crm, tracking.page*", "", ("tracking", "page_view"), True),
        (" crm , tracking.page* ", "", ("tracking", "event"), False),
        ("tracking", "tracking.event", ("tracking", "event"), False),
        ("tracking", "tracking.ev*", ("tracking", "event"), False),
        ("tracking.event", "track*", ("tracking", "event"), False),
        ("tracking", "other", ("tracking", "event"), True),
        ("", "", ("tracking", "event"), False),
    ],
)
def test_gobblin_pattern_grammar_and_blacklist_wins(whitelist, blacklist, table, selected):
    white = patterns(whitelist)
    black = render("parse_table_patterns", blacklist, "purge_blacklist")
    assert render("table_selected", table[0], table[1], white, black) is selected


def test_only_databases_that_can_match_are_listed():
    white = patterns("tracking.event, crm*")
    assert render("database_selected", "tracking", white) is True
    assert render("database_selected", "crm_eu", white) is True
    assert render("database_selected", "finance", white) is False


@pytest.mark.parametrize("bad", ["db.t.x", "*", "db-1", "*db", "db.*t"])
def test_a_bad_pattern_names_the_entry_and_the_accepted_forms(bad):
    with pytest.raises(CompilerError) as error:
        patterns(f"ok, {bad}")
    assert f'has an entry "{bad}" that is not a table pattern' in str(error.value)
    assert "db, db.table, db*, db.table*" in str(error.value)


def test_working_tables_are_never_candidates():
    assert render("purge_is_working_table", "event_backup_1487154972824") is True
    assert render("purge_is_working_table", "event_staging_1487154972824") is True
    assert render("purge_is_working_table", "event_trash_1487154972824") is True
    assert render("purge_is_working_table", "event_backup") is False
    assert render("purge_is_working_table", "event") is False


def test_descriptor_parsing():
    ok = render(
        "purge_identifier_from_descriptor",
        "db.t",
        '{"complianceSpec": {"identifierField": " metadata.guestid "}}',
    )
    assert ok == {"field": "metadata.guestid"}
    broken = render("purge_identifier_from_descriptor", "db.t", "{nope")
    assert broken["error"].startswith("Table db.t: its dataset.descriptor is not valid JSON")
    missing = render("purge_identifier_from_descriptor", "db.t", '{"complianceSpec": {"x": 1}}')
    assert "has no complianceSpec.identifierField" in missing["error"]


@pytest.mark.parametrize(
    ("left", "right", "ok"),
    [
        ("bigint", "int", True),
        ("decimal(20,0)", "bigint", True),
        ("string", "varchar(10)", True),
        ("string", "bigint", False),
        ("struct<a:int>", "bigint", False),
        ("date", "date", True),
        (None, "bigint", False),
    ],
)
def test_identifier_and_id_types_must_be_comparable(left, right, ok):
    assert render("purge_types_comparable", left, right) is ok


ID_ARGS = ("u_purger", "guestids", "guestid")


def test_scan_is_one_query_per_table_with_a_broadcast_id_table():
    sql = squash(
        render(
            "purge_scan_sql",
            "tracking",
            "event",
            ["datepartition", "is_guest"],
            ["metadata", "guestid"],
            *ID_ARGS,
        )
    )
    assert sql.startswith("select /*+ BROADCAST(b) */ cast(a.`datepartition` as string) as `datepartition`,")
    # a semi-join: only rows with a listed id reach the aggregate
    assert "`is_guest`, count(*) as rows_purged from `tracking`.`event` as a" in sql
    assert (
        "left semi join ( select `guestid` from `u_purger`.`guestids` where `guestid` is not null ) as b"
        in sql
    )
    assert "on a.`metadata`.`guestid` = b.`guestid`" in sql
    assert sql.endswith("group by a.`datepartition`, a.`is_guest`")
    flat = squash(render("purge_scan_sql", "db", "flat", [], ["guestid"], *ID_ARGS))
    assert "group by" not in flat


def test_rewrite_is_an_anti_join_into_the_staging_partition():
    pairs = [["ds", "2024-01-01 10:00"], ["who", "o'b"]]
    sql = squash(
        render(
            "purge_rewrite_sql",
            "tracking",
            "event_staging_1",
            "event",
            ["metadata", "event_type"],
            pairs,
            ["metadata", "guestid"],
            *ID_ARGS,
        )
    )
    assert sql == squash(
        """insert overwrite table `tracking`.`event_staging_1`
        partition (`ds` = '2024-01-01 10:00', `who` = 'o\\'b')
        select /*+ BROADCAST(b) */ a.`metadata`, a.`event_type`
        from `tracking`.`event` as a
        left anti join ( select `guestid` from `u_purger`.`guestids` where `guestid` is not null ) as b
            on a.`metadata`.`guestid` = b.`guestid`
        where a.`ds` = '2024-01-01 10:00' and a.`who` = 'o\\'b'"""
    )


def test_staging_backup_swap_and_drop_ddl():
    pairs = [["ds", "a'b"]]
    assert squash(render("purge_staging_table_sql", "db", "t_staging_1", "t", "file:/w/t/1")) == (
        "create table `db`.`t_staging_1` like `db`.`t` location 'file:/w/t/1'"
    )
    registered = {"lakehouse.side_table": "staging", "lakehouse.side_table.of": "db.t"}
    assert squash(render("purge_staging_table_sql", "db", "t_staging_1", "t", "file:/w/t/1", registered)) == (
        "create table `db`.`t_staging_1` like `db`.`t` location 'file:/w/t/1' tblproperties"
        " ('lakehouse.side_table' = 'staging', 'lakehouse.side_table.of' = 'db.t')"
    )
    assert squash(render("purge_backup_table_sql", "db", "t_backup_1", "t", "file:/w/db/t_backup_1")) == (
        "create table if not exists `db`.`t_backup_1` like `db`.`t` location 'file:/w/db/t_backup_1'"
    )
    assert squash(render("purge_backup_partition_sql", "db", "t_backup_1", pairs, "file:/w/t/ds=a%27b")) == (
        "alter table `db`.`t_backup_1` add if not exists partition (`ds` = 'a\\'b') location 'file:/w/t/ds=a%27b'"
    )
    assert squash(render("purge_swap_location_sql", "db", "t", pairs, "file:/w/t/1/ds=a%27b")) == (
        "alter table `db`.`t` partition (`ds` = 'a\\'b') set location 'file:/w/t/1/ds=a%27b'"
    )
    assert squash(render("purge_swap_location_sql", "db", "t", [], "file:/w/t/1")) == (
        "alter table `db`.`t` set location 'file:/w/t/1'"
    )
    assert (
        squash(render("purge_drop_table_sql", "db", "t_staging_1"))
        == "drop table if exists `db`.`t_staging_1`"
    )


def test_partitions_with_ids_are_rewritten_by_one_dynamic_insert():
    partitions = [[["ds", "a"], ["hr", "01"]], [["ds", "b'c"], ["hr", "02"]]]
    sql = squash(
        render(
            "purge_rewrite_many_sql",
            "db",
            "t_staging_1",
            "t",
            ["metadata", "payload"],
            ["ds", "hr"],
            partitions,
            ["metadata", "guestid"],
            *ID_ARGS,
        )
    )
    assert sql.startswith(
        "insert into table `db`.`t_staging_1` partition (`ds`, `hr`) select /*+ BROADCAST(b) */"
    )
    assert "a.`metadata`, a.`payload`, a.`ds`, a.`hr` from `db`.`t` as a left anti join" in sql
    assert sql.endswith("where (a.`ds` = 'a' and a.`hr` = '01') or (a.`ds` = 'b\\'c' and a.`hr` = '02')")
    counts = squash(render("purge_count_by_partition_sql", "db", "t_staging_1", ["ds", "hr"]))
    assert counts == (
        "select cast(`ds` as string) as `ds`, cast(`hr` as string) as `hr`, count(*) as row_count "
        "from `db`.`t_staging_1` group by `ds`, `hr`"
    )


def test_backup_partitions_are_added_by_one_statement():
    sql = squash(
        render(
            "purge_backup_partitions_sql",
            "db",
            "t_backup_1",
            [[[["ds", "a"]], "file:/w/t/ds=a"], [[["ds", "b:c"]], "file:/w/t/ds=b%3Ac"]],
        )
    )
    assert sql == (
        "alter table `db`.`t_backup_1` add if not exists "
        "partition (`ds` = 'a') location 'file:/w/t/ds=a' partition (`ds` = 'b:c') location 'file:/w/t/ds=b%3Ac'"
    )
