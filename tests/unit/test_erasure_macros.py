"""Rendering tests for the SQL-building macros of the verification of bytes (no warehouse)."""

from __future__ import annotations

from types import SimpleNamespace

from tests.unit.macro_harness import MacroRenderer, squash

render = MacroRenderer()
IDS = SimpleNamespace(database="u_purger", table="guestids", column="guestid")


def test_ids_of_a_request_when_the_id_table_has_a_request_id_column():
    sql = squash(render("erasure_verify_ids_sql", "req 'o1", IDS, "request_id"))
    assert sql == (
        "select distinct `guestid` from `u_purger`.`guestids` where `guestid` is not null"
        " and `request_id` = 'req \\'o1'"
    )


def test_ids_of_a_purge_run_are_every_id_of_the_id_table():
    sql = squash(render("erasure_verify_ids_sql", "3f2a", IDS, None))
    assert sql == "select distinct `guestid` from `u_purger`.`guestids` where `guestid` is not null"


def test_targets_are_the_committed_partitions_of_the_request_runs():
    sql = squash(
        render("erasure_verify_targets_sql", "r1", "lakehouse.purge_log", "lakehouse.erasure_request_log")
    )
    assert "from lakehouse.purge_log where state = 'COMMITTED' and not coalesce(dry_run, false)" in sql
    assert (
        "and invocation_id in ( select served.invocation_id from lakehouse.erasure_request_log as served"
        " where served.request_id = 'r1' )"
    ) in sql


def test_without_a_request_log_every_purge_run_that_was_not_dry_serves_the_request():
    sql = squash(render("erasure_verify_targets_sql", "r1", "lakehouse.purge_log", None))
    assert "invocation_id in" not in sql
    assert "not coalesce(dry_run, false)" in sql
