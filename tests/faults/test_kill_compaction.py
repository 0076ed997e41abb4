"""Kill the hourly compaction (`dbt run --select page_view_hourly`) at each of its statements
(dbt logs each statement's SQL, the launcher each call of the project's Python): the plan's
table made again and its rows appended, the insert overwrite of the hours, the late table,
the completion records and the log.  Then check the published hours are whole and deduplicated
or not there yet, and that the next run publishes them."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.harness import SCHEMA, Fault, Lake

# each case starts dbt and Spark processes of its own (`make test-long`)
pytestmark = pytest.mark.slow

TABLE = f"{SCHEMA}.page_view_hourly"
COLUMNS = ("event_id", "page", "event_ts", "ingested_at", "ds", "hr")


def sql(pattern: str) -> Fault:
    return Fault(r"^event SQLQuery: On model\.compliance\.page_view_hourly: .*" + pattern)


POINTS = {
    # the plan: its query collected, the table made again, its rows appended as one parquet file
    "write_plan": Fault(r"^call python_hooks\.compaction\.plan\.write_plan \S+ page_view_hourly__plan "),
    "plan_rows": Fault(r"^call python_hooks\.compaction\.records\.append \S+ page_view_hourly__plan "),
    "insert_overwrite": sql(r"insert overwrite table \S*page_view_hourly\b"),
    "late_table": sql(r"create table if not exists \S*page_view_hourly_late"),
    # the completion records and the log are parquet files appended by python_hooks/compaction/records.py
    "watermarks": Fault(r"^call python_hooks\.compaction\.records\.append \S+ compaction_watermarks "),
    "compaction_log": Fault(r"^call python_hooks\.compaction\.records\.append \S+ compaction_log "),
}
SUBSET: set[str] = {"insert_overwrite"}  # `make test-long`: one kill point of each capability


def cases() -> list:
    return [
        pytest.param(fault, marks=[] if name in SUBSET else [pytest.mark.faults], id=name)
        for name, fault in POINTS.items()
    ]


def hours(seen: dict) -> dict[tuple[str, int], list[tuple]]:
    found: dict[tuple[str, int], list[tuple]] = {}
    for r in seen[TABLE]["rows"]:
        found.setdefault((r["ds"], int(r["hr"])), []).append(tuple(r[c] for c in COLUMNS))
    return {k: sorted(v) for k, v in found.items()}


def check(seen: dict, finished: bool) -> list[str]:
    found = seen.get(TABLE)
    if found is None or "read_error" in found or "describe_error" in found:
        return [f"{TABLE} does not read: {found}"]
    if found["count"] != len(found["rows"]):
        return [f"{TABLE}: count(*) {found['count']} but a full scan returns {len(found['rows'])} rows"]
    published = hours(seen)
    problems = []
    for hour in scenarios.HOURS:
        expected = scenarios.expected_hour(*hour)
        if hour not in published and not finished and hour != scenarios.HOURS[0]:
            continue
        if published.get(hour) != expected:
            problems.append(f"hour {hour}: {published.get(hour)} instead of {expected}")
    extra = set(published) - set(scenarios.HOURS)
    if extra:
        problems.append(f"hours never landed: {sorted(extra)}")
    return problems


@pytest.mark.parametrize("fault", cases())
def test_kill_compaction(compaction_lake: Lake, fault: Fault) -> None:
    lake = compaction_lake
    lake.restore()
    killed = lake.dbt(
        "run", "--select", "page_view_hourly", "--vars", scenarios.compaction_vars(), fault=fault
    )
    assert killed.killed_at

    seen = lake.inspect(SCHEMA)
    problems = check(seen, finished=False)
    assert not problems, "after the kill at " + killed.killed_at[:200] + ":\n" + "\n".join(problems)

    again = lake.dbt("run", "--select", "page_view_hourly", "--vars", scenarios.compaction_vars())
    assert again.ok, again.output[-4000:]
    final = lake.inspect(SCHEMA)
    problems = check(final, finished=True)
    assert not problems, "after the next run:\n" + "\n".join(problems)
    marks = [
        r for r in final[f"{SCHEMA}.compaction_watermarks"]["rows"] if r["action"] in ("compact", "recompact")
    ]
    twice = {
        (r["ds"], r["hr"])
        for r in marks
        if sum(1 for m in marks if (m["ds"], m["hr"]) == (r["ds"], r["hr"])) > 1
    }
    assert not twice, f"hours compacted twice: {sorted(twice)}"
    left = lake.leftovers(
        {k: v for k, v in final.items() if "page_view_hourly" in k},
        [lake.warehouse / f"{SCHEMA}.db" / "page_view_hourly"],
    )
    assert not left, "data or directories the table does not reference:\n" + "\n".join(left)
