"""Kill `dbt snapshot` (the adapter's parquet snapshot materialization) at each of its statements:
the staging view, the rewrite into a new directory, the location swap, the refresh, the record of
the old directory, the staging view's drop.  Readers must see the old or the new version whole;
the next `dbt snapshot` must give the version an uninterrupted one gives; a retention pass must
leave no directory of the killed run."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.harness import SCHEMA, Fault, Lake

# each case starts dbt and Spark processes of its own (`make test-long`)
pytestmark = pytest.mark.slow

TABLE = f"{SCHEMA}.member_history"


def sql(pattern: str) -> Fault:
    return Fault(r"^event SQLQuery: On snapshot\.compliance\.member_history: .*" + pattern)


POINTS = {
    "staging_view": sql(r"create or replace view \S*member_history__dbt_tmp"),
    "record_new": sql(r"insert into \S*stale_data_records"),
    "rewrite": sql(r"insert overwrite directory"),
    "swap": sql(r"alter table \S*member_history\S* set location"),
    "refresh": sql(r"refresh table \S*member_history"),
    "stale_record": Fault(sql(r"insert into \S*stale_data_records").pattern, nth=2),
    "drop_staging_view": sql(r"drop view .*member_history__dbt_tmp"),
}
# Cases that fail today, with the reason.  (The new directory used to be left unrecorded by a kill
# between its write and the old directory's record; it is now recorded before it is written.)
KNOWN: dict[str, str] = {}
SUBSET: set[str] = {"swap"}  # `make test-long`: one kill point of each capability


def cases() -> list:
    return [
        pytest.param(
            fault,
            marks=([] if name in SUBSET else [pytest.mark.faults])
            + ([pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else []),
            id=name,
        )
        for name, fault in POINTS.items()
    ]


@pytest.mark.parametrize("fault", cases())
def test_kill_snapshot(snapshot_lake: tuple[Lake, dict[str, list[str]]], fault: Fault) -> None:
    lake, versions = snapshot_lake
    lake.restore()
    killed = lake.dbt("snapshot", "--vars", scenarios.snapshot_vars(), fault=fault)
    assert killed.killed_at

    seen = lake.inspect(SCHEMA)[TABLE]
    assert "read_error" not in seen, seen.get("read_error")
    assert seen["count"] == len(seen["rows"])
    now = scenarios.snapshot_version(seen["rows"])
    assert now in (versions["before"], versions["after"]), (
        f"after the kill at {killed.killed_at[:200]}: {now}"
    )

    again = lake.dbt("snapshot", "--vars", scenarios.snapshot_vars())
    assert again.ok, again.output[-4000:]
    cleaned = lake.dbt("run", "--select", "retention", "--vars", scenarios.snapshot_vars())
    assert cleaned.ok, cleaned.output[-4000:]
    final = lake.inspect(SCHEMA)
    assert scenarios.snapshot_version(final[TABLE]["rows"]) == versions["after"]
    left = lake.leftovers(
        {TABLE: final[TABLE]},
        [p for p in (lake.warehouse / f"{SCHEMA}.db").iterdir() if p.name.startswith("member_history")],
    )
    assert not left, "snapshot directories no table references, left after a retention pass:\n" + "\n".join(
        left
    )
