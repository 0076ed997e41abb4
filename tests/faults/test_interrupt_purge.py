"""Ctrl-C, SIGTERM and SIGKILL in the middle of a purge across many tables, as a user and an
orchestrator send them to a real `dbt run --select purge+` (tests/faults/harness.py).

After a SIGINT (to the process group, as a terminal sends it) or a SIGTERM (to the dbt process,
as `kill` or an orchestrator sends it) the purge stops at its next safe point: what it swapped is
in purge_log right away, every table is either purged or as it was, the command ends without a
traceback and with exit code 1, and the audit records the invocation `cancelled`.  After a
SIGKILL nothing of the process runs: the next command records the invocation `interrupted` and
the next purge completes purge_log from the journal before anything else.  In every case each
partition whose location moved has exactly one COMMITTED row that moved it there, and the next
run finishes the work.
"""

from __future__ import annotations

import json
import signal

import pytest

from tests.faults.harness import SCHEMA, Interrupt, Lake
from tests.policies import RETENTION_ZERO

# each case starts dbt and Spark processes of its own (`make test-long`)
pytestmark = pytest.mark.slow

DATABASE = "fi"
TABLES = 8
DESCRIPTOR = '{"complianceSpec": {"identifierField": "guestid"}}'


def setup_sql() -> list[str]:
    statements = [
        "create database fi_ids",
        "create table fi_ids.ids (guestid bigint) using parquet",
        "insert into fi_ids.ids values (1001), (1002), (1003)",
        f"create database {DATABASE}",
    ]
    for n in range(TABLES):
        statements += [
            f"create table {DATABASE}.t{n} (guestid bigint, payload string) partitioned by (ds string)"
            f" stored as parquet tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')",
            f"insert into {DATABASE}.t{n} partition (ds) select case when id % 7 = 0 and id % 3 < 2"
            " then 1001 + id % 3 else 5000 + id end, concat('p', id), concat('d', id % 3) from range(60)",
        ]
    return statements


def run_vars() -> str:
    return json.dumps(
        {
            "purge_whitelist": DATABASE,
            "compliance_id_table": "fi_ids.ids",
            "compliance_id_column": "guestid",
            **RETENTION_ZERO,
        }
    )


@pytest.fixture(scope="session")
def many_lake() -> tuple[Lake, dict]:
    """The prepared warehouse, and what it holds before any purge."""
    lake = Lake("interrupt")
    lake.reset()
    lake.sql(setup_sql())
    seeded = lake.dbt("seed", "--vars", run_vars())
    assert seeded.ok, seeded.output[-3000:]
    lake.save()
    return lake, lake.inspect(DATABASE)


LIVE = {f"{DATABASE}.t{n}" for n in range(TABLES)}


def locations(seen: dict) -> dict[tuple[str, str], str]:
    """{(table, partition): location} of the live tables (side tables left out)."""
    return {
        (name, spec): place
        for name, table in seen.items()
        if name in LIVE
        for spec, place in (table.get("partitions") or {}).items()
    }


def ids_left(seen: dict) -> int:
    return sum(
        1 for name, t in seen.items() if name in LIVE for r in t["rows"] if r["guestid"] in (1001, 1002, 1003)
    )


def committed_rows(seen: dict) -> list[dict]:
    return [
        r
        for r in seen.get(f"{SCHEMA}.purge_log", {}).get("rows") or []
        if r["state"] == "COMMITTED" and r["database_name"] == DATABASE
    ]


def accounted(before: dict, after: dict) -> list[str]:
    """Every partition that moved between two inspections, with exactly one COMMITTED row to there."""
    rows = committed_rows(after)
    problems = []
    for key, place in locations(after).items():
        if locations(before).get(key) == place:
            continue
        found = [r for r in rows if (f"{r['database_name']}.{r['table_name']}", r["partition_spec"]) == key
                 and str(r["new_location"]).rstrip("/") == place.rstrip("/")]  # fmt: skip
        if len(found) != 1:
            problems.append(f"{key} moved to {place}: {len(found)} COMMITTED row(s)")
    return problems


def statuses(seen: dict) -> dict[str, str]:
    return {r["invocation_id"]: r["status"] for r in seen[f"{SCHEMA}.dbt_invocations"]["rows"]}


# SIGINT runs in `make test`; SIGTERM (the same path) in `make test-faults`
@pytest.mark.parametrize(
    "sent",
    [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.faults)],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_stops_the_purge_at_a_safe_point(many_lake: tuple[Lake, dict], sent: int) -> None:
    lake, before = many_lake
    lake.restore()
    stopped = lake.dbt(
        "run", "--select", "purge+", "--vars", run_vars(),
        interrupt=Interrupt(rf"purge: table 3/{TABLES} {DATABASE}\.t", sent),
    )  # fmt: skip
    name = signal.Signals(sent).name
    assert stopped.returncode == 1, stopped.output[-3000:]
    assert "Traceback" not in stopped.output, stopped.output[-3000:]
    assert f"{name}: cancelling." in stopped.output
    assert f"purge: cancelled ({name}) after" in stopped.output
    after = lake.inspect(DATABASE, SCHEMA)
    # what was swapped is in purge_log already; some tables are purged, not all, none half-done
    assert not accounted(before, after), accounted(before, after)
    moved_tables = {key[0] for key, place in locations(after).items() if locations(before)[key] != place}
    assert 2 <= len(moved_tables) < TABLES, moved_tables
    for table in moved_tables:
        assert not [r for r in after[table]["rows"] if r["guestid"] in (1001, 1002, 1003)], table
    invocation = json.loads((lake.root / "target" / "run_results.json").read_text())["metadata"][
        "invocation_id"
    ]
    assert statuses(after)[invocation] == "cancelled"
    print(f"{name}: the process ended {stopped.seconds_to_exit:.1f}s after the signal")

    done = lake.dbt("run", "--select", "purge+", "--vars", run_vars())
    assert done.ok, done.output[-3000:]
    final = lake.inspect(DATABASE, SCHEMA)
    assert ids_left(final) == 0
    assert not accounted(before, final)


def rows_by_table(seen: dict) -> dict[str, list[str]]:
    return {name: sorted(json.dumps(r, sort_keys=True) for r in seen[name]["rows"]) for name in LIVE}


def test_a_second_sigint_is_dbts_own_interrupt_after_the_node_stops(many_lake: tuple[Lake, dict]) -> None:
    """Ctrl-C twice, the second shortly after the first: the second is dbt's own interrupt. dbt
    still waits for the running node, which the first stopped at its safe point and which writes
    what it committed to purge_log; then it runs no on-run-end, says `Exited because of keyboard
    interrupt` with a traceback and exits with 2.  Readers see every table purged or as it was,
    the next command records the invocation `cancelled`, and the next purge finishes the work."""
    lake, before = many_lake
    lake.restore()
    stopped = lake.dbt(
        "run", "--select", "purge+", "--vars", run_vars(),
        interrupt=Interrupt(rf"purge: table 3/{TABLES} {DATABASE}\.t", signal.SIGINT, again=0.5),
    )  # fmt: skip
    assert stopped.signals == 2, stopped.output[-3000:]
    assert stopped.returncode == 2, stopped.output[-3000:]
    assert "Exited because of keyboard interrupt" in stopped.output
    assert "on-run-end" not in stopped.output
    print(f"SIGINT twice: the process ended {stopped.seconds_to_exit:.1f}s after the second")
    after = lake.inspect(DATABASE, SCHEMA)
    was, now = rows_by_table(before), rows_by_table(after)
    for name in LIVE:
        purged = [r for r in was[name] if json.loads(r)["guestid"] not in (1001, 1002, 1003)]
        assert now[name] in (was[name], purged), f"{name} is neither purged nor as it was"
    assert not accounted(before, after), accounted(before, after)
    assert 2 <= len({key[0] for key, place in locations(after).items() if locations(before)[key] != place})
    invocation = json.loads((lake.root / "target" / "run_results.json").read_text())["metadata"][
        "invocation_id"
    ]

    done = lake.dbt("run", "--select", "purge+", "--vars", run_vars())
    assert done.ok, done.output[-3000:]
    final = lake.inspect(DATABASE, SCHEMA)
    assert ids_left(final) == 0
    assert not accounted(before, final), accounted(before, final)
    assert statuses(final)[invocation] == "cancelled"


def test_a_killed_purge_is_completed_by_the_next_one(many_lake: tuple[Lake, dict]) -> None:
    lake, before = many_lake
    lake.restore()
    killed = lake.dbt(
        "run", "--select", "purge+", "--vars", run_vars(),
        interrupt=Interrupt(rf"purge: {DATABASE}\.t2 ds=d\d: COMMITTED", signal.SIGKILL),
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL
    after_kill = lake.inspect(DATABASE, SCHEMA)
    moved = {k: v for k, v in locations(after_kill).items() if locations(before)[k] != v}
    assert moved  # t0, t1 and some of t2 at least

    done = lake.dbt("run", "--select", "purge+", "--vars", run_vars())
    assert done.ok, done.output[-3000:]
    assert "completed purge_log from the journal" in done.output
    final = lake.inspect(DATABASE, SCHEMA)
    assert ids_left(final) == 0
    # each partition the killed run moved: exactly one COMMITTED row to where it moved
    rows = committed_rows(final)
    for key, place in moved.items():
        found = [r for r in rows if (f"{r['database_name']}.{r['table_name']}", r["partition_spec"]) == key
                 and str(r["new_location"]).rstrip("/") == place.rstrip("/")]  # fmt: skip
        assert len(found) == 1, (key, place, found)
    assert not accounted(before, final)
    # the killed invocation is recorded `interrupted` by the next command
    assert "interrupted" in statuses(final).values()
