"""Property: over random histories of purges, restores and dead runs, and random policies, retention
never loses a live row, and every expired location is gone except what the metastore still references.

The histories follow the purge contract with DDL (lake.py); restores use the restore planner and the
restore macro's DDL; retention is the same engine the `retention` model's pre-hook calls.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.filesystem import path_within
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_hooks.catalog import metastore, side_tables
from python_hooks.errors import LakehouseError
from python_hooks.restore import plan as restore_hook
from python_hooks.retention import engine
from tests.functional.retention.lake import BASE_TS, DAY, HOUR, Lake, clause, data_files, lit, local, register

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("purge"), st.sets(st.integers(1, 6), max_size=2)),
        st.tuples(st.just("restore"), st.sampled_from(["a", "b:1"]), st.integers(0, 3)),
        st.tuples(st.just("staging"), st.just(0)),
    ),
    min_size=1,
    max_size=5,
)
POLICY = st.fixed_dictionaries(
    {
        "backup_retention_days": st.integers(0, 6),
        "backup_retention_versions": st.integers(0, 3),
        "trash_retention_days": st.integers(0, 6),
        "staging_retention_hours": st.integers(0, 72),
    }
)


def do_restore(spark: Any, lake: Lake, value: str, pick: int, ts: int) -> None:
    backups = sorted(t for t in lake.tables() if "_backup_" in t)
    chosen = backups[pick] if pick < len(backups) else None
    try:
        plan = restore_hook.plan_restore(spark, "r_prop.t", f"dp={value}", backup=chosen, now=ts)
    except LakehouseError:
        return
    pairs = [tuple(p) for p in plan["pairs"]]
    if plan["current_location"]:
        spark.sql(f"create table r_prop.{plan['trash_table']} like r_prop.t")
        register(
            spark, "r_prop", plan["trash_table"], "trash", "t", int(plan["trash_table"].rsplit("_", 1)[1])
        )
        spark.sql(
            f"alter table r_prop.{plan['trash_table']} add partition {clause(pairs)} "
            f"location {lit(plan['current_location'])}"
        )
        spark.sql(
            f"alter table r_prop.t partition {clause(pairs)} set location {lit(plan['backup_location'])}"
        )


def expired(
    table: metastore.Table, policy: dict[str, int], now: int, versions: dict[str, list[int]]
) -> list[str]:
    """The oracle: the locations of `table` that the policy expires (an independent reading of the issue)."""
    side = side_tables.side_table(table.name)
    if side is None:
        return []
    _, kind, ts = side
    if kind == "staging":
        return table.locations() if ts < now - policy["staging_retention_hours"] * HOUR else []
    if kind == "trash":
        return table.locations() if ts < now - policy["trash_retention_days"] * DAY else []
    gone = []
    for key, loc in [(p.spec, p.location) for p in table.partitions] or [("", table.location)]:
        rank = sorted(versions[key], reverse=True).index(ts)
        if rank >= policy["backup_retention_versions"] or ts < now - policy["backup_retention_days"] * DAY:
            gone.append(loc)
    return gone


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=OPS, policy=POLICY, partitioned=st.booleans(), wait_hours=st.integers(0, 240))
def test_random_histories_lose_no_live_row_and_leave_no_expired_data(
    spark, history, policy, partitioned, wait_hours
):
    lake = Lake(spark, "r_prop")
    if partitioned:
        lake.create("t", {"a": [1, 2, 3], "b:1": [4, 5, 6]})
    else:
        lake.create("t", ids=[1, 2, 3, 4, 5, 6])
    ts = BASE_TS
    for step, (op, arg, *rest) in enumerate(history):
        ts = BASE_TS + step * DAY
        if op == "purge":
            lake.purge("t", ts, arg)
        elif op == "restore" and partitioned:
            do_restore(spark, lake, arg, rest[0], ts)
        elif op == "staging" and partitioned:
            lake.staging("t", ts, ["a"])
    now = ts + wait_hours * HOUR
    live_before = lake.rows("t")
    before = {name: lake.table(name) for name in lake.tables()}
    versions: dict[str, list[int]] = {}
    for name, table in before.items():
        side = side_tables.side_table(name)
        if side and side[1] == "backup":
            for key in [p.spec for p in table.partitions] or [""]:
                versions.setdefault(key, []).append(side[2])

    full = {**policy, "stale_retention_days": 7, "backup_reap_days": "", "backup_dir": ""}
    result = engine.run_retention(
        spark,
        invocation_id="property",
        policies={"r_prop.t": full},
        defaults=full,
        now=now,
        view_name="retention_property_attempts",
    )

    assert result["failed"] == 0, spark.table("retention_property_attempts").collect()
    assert lake.rows("t") == live_before, "a live row was lost"
    after = {name: lake.table(name) for name in lake.tables()}
    referenced = [
        loc
        for t in after.values()
        for loc in ([p.location for p in t.partitions] if t.is_partitioned else [t.location])
    ]
    for name, table in before.items():
        gone = expired(table, full, now, versions)
        for location in gone:
            for file in data_files(location):
                assert any(
                    path_within("file:" + file, ref) or path_within(file, local(ref)) for ref in referenced
                ), f"{file} of expired {name} ({location}) is still there and nothing references it"
        kept_parts = len(table.partitions) - len(gone) if table.is_partitioned else (0 if gone else 1)
        if name == "t" or (kept_parts > 0):
            assert name in after, f"{name} was dropped although it is not expired"
        else:
            assert name not in after, f"expired {name} is still in the metastore"
    lake.drop()
