"""Kill a retention pass (`dbt run --select retention`, every policy at zero) while it drops the
backups, staging tables and stale data a purge left, then check that the live tables are whole,
every table reads, and the next pass removes everything the killed one was removing.

Retention logs nothing per deletion (its attempts reach `retention_log` only at the end), so its
steps are the launcher's markers for the calls of python_hooks' metastore drops and the adapter's
filesystem deletes.
"""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.harness import Fault, Lake
from tests.faults.scenarios import check_tables

# each case starts dbt and Spark processes of its own (`make test-long`)
# the purge lake and its purged state are prepared once per worker: `--dist loadgroup` keeps
# the cases that use them on one
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("purge_lake")]

POINTS = {
    # the first backup table: before its metadata goes
    "drop_table": Fault(r"^call python_hooks\.\S*metastore\.drop_table_metadata "),
    # between two partitions' metadata of one backup table
    "drop_second_partition": Fault(r"^call python_hooks\.\S*metastore\.drop_partition_metadata ", nth=2),
    # the metadata of the first backup is gone, its data not yet deleted
    "first_delete": Fault(r"^call python_hooks\.catalog\.filesystem\.delete "),
    "third_delete": Fault(r"^call python_hooks\.catalog\.filesystem\.delete ", nth=3),
    # the stale-data records rewritten without the ones just deleted
    "stale_records_rewrite": Fault(
        r"^call python_hooks\.\S*metastore\.overwrite_table \S+ stale_data_records"
    ),
    # everything deleted, the attempts not yet in retention_log
    "retention_log": Fault(r"^event NodeStart: Began running node model\.compliance\.retention_log"),
}
# Cases that fail today, with the reason (none: retention now sweeps the scratch directories of
# dead passes and the empty directories of side tables that are gone).
KNOWN: dict[str, str] = {}
SUBSET: set[str] = {"first_delete"}  # `make test-long`: one kill point of each capability


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
def test_kill_retention(purged_lake: Lake, fault: Fault) -> None:
    lake = purged_lake
    lake.restore()
    killed = lake.dbt("run", "--select", "retention", "--vars", scenarios.purge_vars(), fault=fault)
    assert killed.killed_at

    seen = lake.inspect("fk", scenarios.SCHEMA)
    problems = check_tables(seen, finished=True)
    problems += [
        f"{name} does not read: {t.get('read_error') or t.get('describe_error')}"
        for name, t in seen.items()
        if "read_error" in t or "describe_error" in t
    ]
    assert not problems, "after the kill at " + killed.killed_at[:200] + ":\n" + "\n".join(problems)

    again = lake.dbt("run", "--select", "retention", "--vars", scenarios.purge_vars())
    assert again.ok, again.output[-4000:]
    final = lake.inspect("fk", scenarios.SCHEMA)
    assert not check_tables(final, finished=True)
    side = [name for name in final if any(s in name for s in ("_staging_", "_backup_", "_trash_"))]
    assert not side, f"side tables left after the next pass: {side}"
    left = lake.leftovers(final, [lake.warehouse / "fk.db", lake.warehouse / ".retention_scratch"])
    assert not left, "data or directories no table references, left after the next pass:\n" + "\n".join(left)
