"""The run lock's refusal, within one machine, without Spark (the two-process test is functional)."""

import subprocess
import sys
import textwrap

import pytest
from dbt.adapters.lakehouse import run_lock

from python_hooks.errors import LakehouseError


def test_second_holder_is_refused_with_the_holders_details(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from dbt.adapters.lakehouse import run_lock
                run_lock.acquire({str(tmp_path)!r})
                print("held", flush=True)
                time.sleep(30)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LakehouseError) as refused:
            run_lock.acquire(str(tmp_path))
        message = str(refused.value)
        assert f"Another dbt run holds the warehouse {tmp_path}" in message
        assert f"pid {holder.pid}" in message
        assert "Nothing was changed by this run" in message
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the dead holder's lock: the next run takes it at once
    path = run_lock.acquire(str(tmp_path))
    assert path.endswith(".dbt-run.lock")
    run_lock.release(path)


def test_remote_warehouses_are_not_locked_locally():
    assert run_lock.acquire("hdfs://namenode/warehouse") is None
