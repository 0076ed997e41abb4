"""Rendering tests for the SQL-building macros of the verification of bytes (no warehouse)."""

from __future__ import annotations

from tests.unit.macro_harness import MacroRenderer, squash

render = MacroRenderer()


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
