"""Kill `dbt run-operation restore` at each of its statements (dbt logs each statement's SQL),
then check the restored partition holds its current or its backed-up rows, whole and once; that
running the restore again finishes it; and that a retention pass leaves nothing behind."""

from __future__ import annotations

import json

import pytest

from tests.faults import scenarios
from tests.faults.harness import Fault, Lake, describe_difference, multiset

# each case starts dbt and Spark processes of its own (`make test-long`)
# the purge lake and its purged state are prepared once per worker: `--dist loadgroup` keeps
# the cases that use them on one
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("purge_lake")]

TABLE, PARTITION = "fk.hive_parquet", "ds=2024-01-01"
ARGS = json.dumps({"table": TABLE, "partition": PARTITION})


def sql(pattern: str) -> Fault:
    return Fault(r"^event SQLQuery: .*" + pattern)


POINTS = {
    "create_trash": sql(r"create table \S*hive_parquet_trash_\d+\S* like"),
    "untag_trash": sql(r"alter table \S*hive_parquet_trash_\d+\S* unset tblproperties"),
    "trash_partition": sql(r"alter table \S*hive_parquet_trash_\d+\S*\s+add"),
    "point_partition": sql(r"alter table `fk`\.`hive_parquet`\s+partition .*set location"),
    "stale_record": sql(r"insert into \S*stale_data_records"),
}
SUBSET: set[str] = {"point_partition"}  # `make test-long`: one kill point of each capability


def cases() -> list:
    return [
        pytest.param(fault, marks=[] if name in SUBSET else [pytest.mark.faults], id=name)
        for name, fault in POINTS.items()
    ]


def check(seen: dict, finished: bool) -> list[str]:
    found = seen.get(TABLE)
    if found is None or "read_error" in found or "describe_error" in found:
        return [f"{TABLE} does not read: {found}"]
    seeded = scenarios.purge_rows("hive_parquet")
    problems = []
    for ds in scenarios.PARTITIONS:
        before = multiset([r for r in seeded if r["ds"] == ds])
        purged = multiset([r for r in seeded if r["ds"] == ds and r["guestid"] not in scenarios.IDS])
        actual = multiset([r for r in found["rows"] if r["ds"] == ds])
        allowed = (
            [before]
            if (ds == "2024-01-01" and finished)
            else [purged, before]
            if ds == "2024-01-01"
            else [purged]
        )
        if actual not in allowed:
            problems.append(f"{TABLE} ds={ds}:\n{describe_difference(allowed[0], actual)}")
    return problems


@pytest.mark.parametrize("fault", cases())
def test_kill_restore(purged_lake: Lake, fault: Fault) -> None:
    lake = purged_lake
    lake.restore()
    killed = lake.dbt(
        "run-operation", "restore", "--args", ARGS, "--vars", scenarios.purge_vars(), fault=fault
    )
    assert killed.killed_at

    seen = lake.inspect("fk")
    problems = check(seen, finished=False) + [
        f"{name} does not read: {t.get('read_error') or t.get('describe_error')}"
        for name, t in seen.items()
        if "read_error" in t or "describe_error" in t
    ]
    assert not problems, "after the kill at " + killed.killed_at[:200] + ":\n" + "\n".join(problems)

    # running it again finishes it; a kill after the partition was pointed at the backup left
    # nothing to do, and the restore then refuses (no other backup to go to), which is fine
    done = not check(seen, finished=True)
    again = lake.dbt("run-operation", "restore", "--args", ARGS, "--vars", scenarios.purge_vars())
    assert again.ok or (done and "no backup holds" in again.output), again.output[-4000:]
    cleaned = lake.dbt("run", "--select", "retention", "--vars", scenarios.purge_vars())
    assert cleaned.ok, cleaned.output[-4000:]
    final = lake.inspect("fk")
    problems = check(final, finished=True)
    assert not problems, "after the restore and a retention pass:\n" + "\n".join(problems)
    side = [name for name in final if any(s in name for s in ("_staging_", "_trash_"))]
    assert not side, f"side tables left after a retention pass at zero: {side}"
    left = lake.leftovers(final, [lake.warehouse / "fk.db"])
    assert not left, "data or directories no table references, left after the retention pass:\n" + "\n".join(
        left
    )
