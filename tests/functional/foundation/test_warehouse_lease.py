"""The cross-host run lease on the warehouse filesystem, through the session's Hadoop FileSystem.

Two `Lease` objects in one JVM stand for two drivers (the two-process test on the cluster is
tests/functional/cluster/test_run_lease.py): only the lease file decides who holds the warehouse.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from dbt.adapters.lakehouse.warehouse_lease import LEASE_FILE_NAME, Lease, LeaseHeldError

from tests.functional.processes import wait_until


@pytest.fixture
def lease_root(warehouse_root, request):
    path = warehouse_root / "leases" / request.node.name
    path.mkdir(parents=True, exist_ok=True)
    return path


def holders(spark, root, ttl):
    first, second = Lease(spark, f"file:{root}", ttl), Lease(spark, f"file:{root}", ttl)
    second.info["pid"] = 424242  # a different "driver"
    return first, second


def test_a_held_lease_refuses_the_second_driver_and_is_gone_after_release(spark, lease_root):
    first, second = holders(spark, lease_root, ttl=30)
    first.acquire()
    try:
        record = json.loads((lease_root / LEASE_FILE_NAME).read_text())
        assert record["lease_id"] == first.id and record["ttl_seconds"] == 30
        with pytest.raises(LeaseHeldError) as refused:
            second.acquire()
        assert f"pid {first.info['pid']}" in refused.value.holder
        assert int(re.search(r"renewed (\d+)s ago", refused.value.holder).group(1)) < 30
        assert refused.value.info["lease_id"] == first.id
    finally:
        first.release()
    assert not (lease_root / LEASE_FILE_NAME).exists()
    second.acquire()  # released: taken at once
    second.release()


def test_the_holder_renews_and_a_dead_holders_lease_expires(spark, lease_root):
    ttl = 2
    first, second = holders(spark, lease_root, ttl=ttl)
    first.acquire()
    lease = lease_root / LEASE_FILE_NAME
    stamp = lease.stat().st_mtime
    # only the heartbeat (every ttl/4) can carry the lease's time past its ttl
    wait_until(lambda: lease.stat().st_mtime >= stamp + ttl, "the heartbeat to renew past the ttl")
    with pytest.raises(LeaseHeldError):
        second.acquire()

    # the holder dies without releasing: its heartbeat stops and the file stays
    first._stop.set()
    first._thread.join()
    last_renewed = lease.stat().st_mtime

    def taken_over() -> bool:
        try:
            second.acquire()
        except LeaseHeldError:
            return False
        return True

    wait_until(taken_over, "the dead holder's lease to expire", timeout=60)
    try:
        # not before it had gone unrenewed for its ttl
        assert time.time() - last_renewed >= ttl
        assert json.loads(lease.read_text())["lease_id"] == second.id
        assert not list(lease_root.glob(f"{LEASE_FILE_NAME}.expired-*"))  # the stale one is gone
        # the dead holder, should it wake up, learns it lost the warehouse
        assert first.renew() is False and first.lost
    finally:
        second.release()


def test_a_lost_lease_stops_the_run_at_its_next_step(spark, lease_root):
    from dbt.adapters.lakehouse.driver import Driver

    from python_hooks.errors import LakehouseError

    driver = Driver()
    warehouse = f"file:{lease_root}"
    lease = driver.hold_lease(spark, warehouse, ttl=30)
    try:
        assert driver.hold_lease(spark, warehouse) is lease  # held: taken once
        lease.lost = True
        with pytest.raises(LakehouseError, match="lost its lease"):
            driver.hold_lease(spark, warehouse)
    finally:
        driver.release()
    assert not lease_root.joinpath(".dbt-run.lease").exists()
