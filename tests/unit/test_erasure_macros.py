"""Rendering tests for the SQL-building macros of the erasure evidence (no warehouse): the ledger
(erasure_ledger_sql), the copies and their deletions, the warehouse's changes, and the
verification tables' definitions.  The same macros run on Spark in tests/functional/erasure/."""

from __future__ import annotations

from types import SimpleNamespace

from tests.unit.macro_harness import MacroRenderer, squash


def renderer(execute: bool = False, changes: list | None = None, request_ids: bool = True) -> MacroRenderer:
    render = MacroRenderer({"compliance_id_column": "guestid", "erasure_deadline_days": 30})
    render.globals["execute"] = execute
    render.globals["load_relation"] = lambda relation: relation
    render.globals["source"] = lambda *a: "ids.requests"
    render.globals["run_query"] = lambda sql: SimpleNamespace(rows=[])
    render.adapter.erasure_warehouse_changes = lambda scope: list(changes or [])
    render.adapter.get_relation = lambda **k: "ids.requests"
    columns = ["guestid"] + (["request_id", "requested_at"] if request_ids else [])
    render.adapter.get_columns_in_relation = lambda relation: [SimpleNamespace(name=c) for c in columns]
    return render


RELATIONS = {
    "request_log": "lh.erasure_request_log",
    "purge_log": "lh.purge_log",
    "retention_log": "lh.retention_log",
    "events": "lh.erasure_events",
    "verification": "lh.erasure_verification",
    "findings": "lh.erasure_verification_findings",
    "copies_sql": "select * from lh.erasure_copies",
}


def test_the_ledger_rests_on_the_latest_verification_and_the_warehouse_changes():
    changes = [
        {"source": "side_table", "kind": "backup", "invocation_id": "run-9", "database_name": "db",
         "table_name": "t", "happened_us": 1700000000000000},
    ]  # fmt: skip
    sql = squash(renderer(True, changes)("erasure_ledger_sql", RELATIONS))
    # the runs no log attributes to a request count as purges of every listed request
    assert (
        "timestamp_micros(happened_us) as happened_at from values ('side_table', 'backup', 'run-9', 'db', 't', 1700000000000000L)"
        in sql
    )
    assert (
        "left anti join attributed on coalesce(warehouse_changes.invocation_id, '') = attributed.invocation_id"
        in sql
    )
    assert "from lh.purge_log where state = 'COMMITTED' and not coalesce(dry_run, false)" in sql
    # only the latest verification of each request decides
    assert "row_number() over (partition by request_id order by started_at desc, verification_id desc)" in sql
    # the order of the rule: not served, not verified since, live rows, then copies and deletions
    order = [
        "when facts.purge_runs = 0 then 'pending'",
        "when facts.verification_id is null then 'unverified'",
        "when facts.verified_at <= greatest(facts.last_purge_at, facts.last_restore_at, facts.last_write_at) then 'unverified'",
        "when facts.unread_live > 0 then 'unverified'",
        "when facts.live_rows > 0 then case when facts.last_clean_at > facts.first_purged_at then 'reintroduced' else 'pending' end",
        "facts.copy_rows = 0 and facts.unread_copies = 0 and (facts.last_deletion_at is null or facts.verified_at > facts.last_deletion_at)"
        " then case when facts.exempt_rows > 0 then 'retained_exempt' else 'erased' end",
        "then 'copies_remaining' else 'live_clean' end as progress",
    ]
    positions = [sql.index(clause) for clause in order]
    assert positions == sorted(positions)
    assert (
        "when judged.progress in ('erased', 'reintroduced', 'retained_exempt') then judged.progress"
        " when current_timestamp() > judged.deadline_at then 'overdue'" in sql
    )
    # a request no longer listed: only its own purges count
    assert (
        "when requests.still_listed then greatest(requests.last_served_at, unattributed_purges.happened_at) else requests.last_served_at end as last_purge_at"
        in sql
    )
    assert "listed_requests.request_id is not null as still_listed" in sql


def test_exemptions_match_most_specific_first_and_need_a_basis_an_owner_and_a_review_date():
    """The exemptions seed's rows become one CASE per column over the verification's live tables:
    `db.table` before `db.table*` before `db` before `db*`; a row without a legal basis, an owner
    or a review date, or whose review date has passed (the run's date, here 2026-01-01), exempts
    nothing, and says why; the rows an exemption keeps leave `live_rows` and give `retained_exempt`."""
    render = renderer(True)
    seed = [
        {"table_pattern": "fin*", "legal_basis": "HGB 257", "owner": "finance", "review_date": "2099-01-31"},
        {"table_pattern": "fin.ledger", "legal_basis": "GDPR Art. 17(3)(b): tax law", "owner": "tax", "review_date": "2099-06-30"},
        {"table_pattern": "fin.l*", "legal_basis": "AO 147", "owner": "audit", "review_date": "2099-03-31"},
        {"table_pattern": "fin.notes", "legal_basis": " ", "owner": "nobody", "review_date": None},
        {"table_pattern": "fin.old", "legal_basis": "HGB 257", "owner": "finance", "review_date": "2025-12-31"},
        {"table_pattern": "fin.today", "legal_basis": "HGB 257", "owner": "finance", "review_date": "2026-01-01"},
    ]  # fmt: skip
    render.globals["run_query"] = lambda sql: SimpleNamespace(rows=seed if "legal_basis" in sql else [])
    sql = squash(render("erasure_ledger_sql", RELATIONS))
    order = [
        "when lower(database_name) = 'fin' and lower(table_name) = 'ledger' then 'GDPR Art. 17(3)(b): tax law'",
        "when lower(database_name) = 'fin' and startswith(lower(table_name), 'l') then 'AO 147'",
        "when startswith(lower(database_name), 'fin') then 'HGB 257'",
    ]
    positions = [sql.index(clause) for clause in order]
    assert positions == sorted(positions)
    # the rows that exempt nothing still decide for their tables: no basis, and the reason
    assert (
        "when lower(database_name) = 'fin' and lower(table_name) = 'notes' then cast(null as string)" in sql
    )
    assert "then 'its row has no legal_basis, no review_date, so it exempts nothing until completed'" in sql
    assert "when lower(database_name) = 'fin' and lower(table_name) = 'old' then cast(null as string)" in sql
    assert "then 'its review date 2025-12-31 has passed, so it exempts nothing until it is reviewed" in sql
    assert (
        "when lower(database_name) = 'fin' and lower(table_name) = 'today' then 'HGB 257'" in sql
    )  # its last day
    assert "from lh.erasure_verification_findings where location_kind = 'live'" in sql
    assert "latest.live_rows - coalesce(exempt.exempt_rows, 0) as live_rows" in sql
    assert (
        "add a row (table_pattern, legal_basis, owner, review_date) to the seed ', 'erasure_exemptions'"
        in sql
    )
    assert "'. Exemptions that exempt nothing: ', judged.exemption_problems" in sql


def test_without_request_ids_every_request_is_a_run_and_stays_listed():
    sql = squash(renderer(True, request_ids=False)("erasure_ledger_sql", RELATIONS))
    assert "true as still_listed" in sql
    assert "cast(null as string) as request_id" in sql


def test_before_anything_exists_the_ledger_reads_empty_selects():
    sql = squash(renderer(False)("erasure_ledger_sql", RELATIONS))
    assert "lh.purge_log" not in sql and "lh.erasure_verification" not in sql
    assert "cast(null as string) as verification_id" in sql
    assert "select cast(null as timestamp) as happened_at" in sql


def test_copies_and_their_deletions_use_names_no_outer_query_uses():
    render = renderer(True)
    sql = squash(
        render("erasure_copies_sql", "lh.erasure_request_log", "lh.purge_log", "lh.retention_log", None)
    )
    for name in (
        "copy_serving_runs",
        "copy_swaps",
        "copy_deletion_attempts",
        "copy_policies",
        "copy_rows",
        "copy_final",
    ):
        assert f"{name} as (" in sql
    assert "where action = 'delete' and succeeded and not coalesce(dry_run, false)" in sql
    assert "min(attempted_at) as deleted_at from copies_with_deletions" in sql


def test_the_verification_tables_are_defined_by_their_yml():
    render = renderer(False)
    model = SimpleNamespace(name="erasure_verification", columns={
        "verification_request_id": SimpleNamespace(data_type="string"),
        "live_rows": SimpleNamespace(data_type="bigint"),
    })  # fmt: skip
    render.globals["model"] = model
    assert squash(render("erasure_table_sql")) == (
        "select cast(null as string) as `verification_request_id`, cast(null as bigint) as `live_rows` where false"
    )
    assert squash(render("erasure_table_sql", "erasure_verification_rows")) == (
        "select cast(verified.`verification_request_id` as string) as `verification_request_id`,"
        " cast(verified.`live_rows` as bigint) as `live_rows` from erasure_verification_rows as verified"
    )
