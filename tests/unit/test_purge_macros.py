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


def _plan(scanned=True):
    """A plan of two tables (scanned: with their partitions to rewrite), built with the engine's
    own types (no warehouse)."""
    from python_hooks.purge.plan import Identifier, IdSource, PurgeConfig, PurgePlan, ScannedPlan, TablePlan
    from python_hooks.purge.units import partition_of, whole_table

    config = PurgeConfig("inv-1", 1700000000000, "audit", [], [], "u_purger.guestids", "guestid")
    ids = IdSource("u_purger", "guestids", "guestid", "bigint", (1001, 1003))
    events = TablePlan(
        "db",
        "events",
        "file:/w/db.db/events",
        "file:/w/db.db",
        ["ds"],
        ["string"],
        ["metadata", "payload"],
        "parquet",
        False,
        identifier=Identifier("metadata.guestid", ["metadata", "guestid"], "bigint"),
        staging="events_staging_1700000000000",
        staging_location="file:/w/db.db/events/1700000000000",
        backup="events_backup_1700000000000",
        backup_location="file:/w/db.db/events_backup_1700000000000",
        candidate_view="__purge_candidates_db__events",
        scan_view="__purge_scan_db__events",
        scan="files",
    )
    hit = partition_of(events, [["ds", "a'b"]], "file:/w/db.db/events/ds=a%27b")
    hit.rows_purged = 3
    events.todo = [hit]
    flat = TablePlan(
        "db",
        "flat",
        "file:/w/db.db/flat",
        "file:/w/db.db",
        [],
        [],
        ["guestid"],
        "orc",
        False,
        identifier=Identifier("guestid", ["guestid"], "bigint"),
        staging="flat_staging_1700000000000",
        staging_location="file:/w/db.db/flat/_purge_1700000000000",
        backup="flat_backup_1700000000000",
        backup_location="file:/w/db.db/flat",
        scan_view="__purge_scan_db__flat",
    )
    flat.todo = [whole_table(flat)]
    plan = PurgePlan(config, ids, [events, flat])
    return ScannedPlan.of(plan, plan.tables) if scanned else plan


def test_a_plan_renders_its_scans_over_the_table_or_the_files_the_footers_left():
    scans = render("purge_render_scans", _plan(scanned=False))
    assert set(scans) == {"db.events", "db.flat"}
    assert "from `db`.`events` as a" in squash(scans["db.events"]["table"])
    assert "from `__purge_scan_db__events` as a" in squash(scans["db.events"]["files"])
    assert "between 1001 and 1003" in squash(scans["db.events"]["table"])
    assert scans["db.flat"]["files"] == ""


def test_a_plan_renders_every_statement_the_engine_runs():
    statements = render("purge_render_statements", _plan())
    events = statements["db.events"]
    assert squash(events["create_staging"]).startswith(
        "create table `db`.`events_staging_1700000000000` like `db`.`events` location 'file:/w/db.db/events/1700000000000'"
    )
    assert "'lakehouse.side_table' = 'staging'" in events["create_staging"]
    assert "'lakehouse.side_table' = 'backup'" in events["create_backup"]
    assert squash(events["add_backup_partitions"]) == (
        "alter table `db`.`events_backup_1700000000000` add if not exists partition (`ds` = 'a\\'b')"
        " location 'file:/w/db.db/events/ds=a%27b'"
    )
    assert "from `__purge_candidates_db__events` as a" in squash(events["rewrite_files"])
    part = events["partitions"]["ds=a%27b"]
    assert squash(part["swap"]) == (
        "alter table `db`.`events` partition (`ds` = 'a\\'b')"
        " set location 'file:/w/db.db/events/1700000000000/ds=a%27b'"
    )
    assert part["before_swap"] == []
    flat = statements["db.flat"]
    assert flat["rewrite_files"] == "" and flat["add_backup_partitions"] == ""
    assert squash(flat["partitions"][""]["swap"]) == (
        "alter table `db`.`flat` set location 'file:/w/db.db/flat/_purge_1700000000000'"
    )
    assert squash(flat["rewrite"]).startswith(
        "insert overwrite table `db`.`flat_staging_1700000000000` select"
    )


def test_the_script_lists_the_statements_in_the_order_they_run():
    plan = _plan()
    script = render("purge_script", plan, render("purge_render_statements", plan))
    order = [
        script.index(f)
        for f in (
            "create table `db`.`events_staging",
            "add if not exists",
            "insert into table",
            "set location",
        )
    ]
    assert order == sorted(order)


def test_the_default_swaps_of_several_partitions_are_made_in_one_call():
    """The engine makes the swaps in one metastore call only where each is the package's own
    ALTER: an override of purge_swap_location_sql is run as it renders, one per partition."""
    from python_hooks.purge.units import partition_of

    plan = _plan()
    events = plan.rewriting[0]
    second = partition_of(events, [["ds", "b"]], "file:/w/db.db/events/ds=b")
    second.rows_purged = 1
    events.todo = [*events.todo, second]
    rendered = render("purge_render_statements", plan)
    assert rendered["db.events"]["swap_in_one_call"] is True
    assert rendered["db.flat"]["swap_in_one_call"] is False  # unpartitioned: one ALTER TABLE
    script = squash(render("purge_script", plan, rendered))
    assert "-- the swaps below, as one metastore call (one transaction):" in script
    assert script.index("one metastore call") < script.index("partition (`ds` = 'b') set location")

    render.registry["lakehouse__purge_swap_location_sql"] = lambda db, t, pairs, loc: f"alter table x {loc}"
    try:
        overridden = render("purge_render_statements", plan)
    finally:
        del render.registry["lakehouse__purge_swap_location_sql"]
    assert overridden["db.events"]["swap_in_one_call"] is False
    assert (
        overridden["db.events"]["partitions"]["ds=b"]["swap"]
        == "alter table x file:/w/db.db/events/1700000000000/ds=b"
    )

    one = _plan()
    assert render("purge_render_statements", one)["db.events"]["swap_in_one_call"] is False  # one partition


def test_the_default_backup_partitions_are_added_in_one_call():
    """The engine adds a table's backup partitions in one metastore call only while each is the
    package's own ALTER: with purge_backup_partition_sql overridden, nothing is rendered for all of
    them at once, and each partition's own statement runs as rendered."""
    from python_hooks.purge.statements import TableStatements

    plan = _plan()
    rendered = render("purge_render_statements", plan)
    assert rendered["db.events"]["add_backup_partitions"].startswith("alter table `db`.`events_backup_")
    assert TableStatements.of(rendered["db.events"], "db.events").add_backup_partitions
    assert rendered["db.flat"]["add_backup_partitions"] == ""  # unpartitioned: no partition

    render.registry["lakehouse__purge_backup_partition_sql"] = lambda db, t, pairs, loc: (
        f"alter table y {loc}"
    )
    try:
        overridden = render("purge_render_statements", plan)
    finally:
        del render.registry["lakehouse__purge_backup_partition_sql"]
    assert overridden["db.events"]["add_backup_partitions"] == ""
    assert (
        overridden["db.events"]["partitions"]["ds=a%27b"]["add_backup"]
        == "alter table y file:/w/db.db/events/ds=a%27b"
    )


def test_the_default_side_tables_are_made_as_catalog_calls_with_their_properties():
    """The engine makes the staging table and the backup as one catalog call each only while its
    `create table ... like` is the package's own, with the properties the statement gives: an
    override of purge_staging_table_sql runs as it renders, and the backup's call is kept."""
    from python_hooks.purge.statements import TableStatements

    plan = _plan()
    events = TableStatements.of(render("purge_render_statements", plan)["db.events"], "db.events")
    assert events.create_staging_properties["lakehouse.side_table"] == "staging"
    assert events.create_backup_properties["lakehouse.side_table"] == "backup"
    for key, value in events.create_staging_properties.items():
        assert f"'{key}' = '{value}'" in events.create_staging  # the statement's own properties

    render.registry["lakehouse__purge_staging_table_sql"] = lambda db, staging, t, loc, props: (
        f"create table z like {t} location '{loc}'"
    )
    try:
        overridden = render("purge_render_statements", plan)
    finally:
        del render.registry["lakehouse__purge_staging_table_sql"]
    made = TableStatements.of(overridden["db.events"], "db.events")
    assert made.create_staging_properties is None
    assert made.create_staging == "create table z like events location 'file:/w/db.db/events/1700000000000'"
    assert made.create_backup_properties == events.create_backup_properties


def _formats_plan():
    """A plan of one Delta Lake and one Iceberg table, each with one partition holding ids."""
    from dataclasses import replace

    from python_hooks.purge.plan import Identifier, PartitionRewrite, TablePlan

    plan = _plan()
    tables = []
    for table_format, catalog in (("delta", None), ("iceberg", "iceberg")):
        table = TablePlan(
            "db", table_format, f"file:/w/db.db/{table_format}", "", ["ds"], ["string"], ["guestid"], None, False,
            identifier=Identifier("guestid", ["guestid"], "bigint"), table_format=table_format, scan="table",
            catalog=catalog,
        )  # fmt: skip
        table.todo = [PartitionRewrite([("ds", "a")], "file:/w/x/ds=a", rows_purged=2)]
        tables.append(table)
    return replace(plan, delta=tables)


def test_the_iceberg_delete_carries_the_id_range_and_the_delta_one_does_not():
    """Iceberg's file statistics skip files by the listed ids' range; Delta's log would keep it as
    the MERGE's predicate, so its MERGE has none.  The node's script shows the range masked."""
    plan = _formats_plan()
    rendered = render("purge_render_delta", plan)
    iceberg, delta = squash(rendered["db.iceberg"]["delete"]), squash(rendered["db.delta"]["delete"])
    assert iceberg.startswith("merge into `iceberg`.`db`.`iceberg` as a")
    assert (
        "on a.`guestid` = b.`guestid` and a.`guestid` between 1001 and 1003 and ((a.`ds` = 'a'))" in iceberg
    )
    assert "between" not in delta and "1001" not in delta
    script = render("purge_script", plan, render("purge_render_statements", plan), rendered)
    assert "merge into `iceberg`.`db`.`iceberg`" in script
    assert "between <smallest listed id> and <largest listed id>" in script
    assert "1001" not in script and "1003" not in script


def test_the_engine_takes_exactly_the_keys_the_render_macro_returns():
    from python_hooks.purge.statements import TableStatements

    rendered = render("purge_render_statements", _plan())
    events = TableStatements.of(rendered["db.events"], "db.events")
    assert events.partitions["ds=a%27b"].swap.startswith("alter table `db`.`events`")
    assert events.swap_in_one_call is False
    assert TableStatements.of(rendered["db.flat"], "db.flat").rewrite_files == ""


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t: t.pop("drop_backup"), "missing: drop_backup"),
        (lambda t: t.update(drop_staging_too="x"), "not expected: drop_staging_too"),
        (lambda t: t["partitions"]["ds=a%27b"].pop("swap"), "partition ds=a%27b do not match"),
        (lambda t: t["partitions"]["ds=a%27b"].update(unswap="x"), "not expected: unswap"),
    ],
    ids=["missing", "extra", "missing-in-a-partition", "extra-in-a-partition"],
)
def test_a_missing_or_extra_statement_key_is_refused_naming_the_macro(change, words):
    from python_hooks.errors import LakehouseError
    from python_hooks.purge.statements import TableStatements

    table = render("purge_render_statements", _plan())["db.events"]
    change(table)
    with pytest.raises(LakehouseError) as caught:
        TableStatements.of(table, "db.events")
    message = str(caught.value)
    assert "purge_render_table (macros/purge/purge_render.sql)" in message
    assert "table db.events" in message
    assert words in message
