"""The run lock's refusal, within one machine, without Spark (the two-process test is functional)."""

import subprocess
import sys
import textwrap

import pytest
from dbt.adapters.lakehouse import run_lock
from dbt.adapters.lakehouse.driver import Driver

from python_hooks.errors import LakehouseError


def test_second_holder_is_refused_with_the_holders_details(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from dbt.adapters.lakehouse.driver import DRIVER
                DRIVER.lock_directory({str(tmp_path)!r})
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
            Driver().lock_directory(str(tmp_path))
        message = str(refused.value)
        assert f"Another dbt run holds the warehouse {tmp_path}" in message
        assert f"pid {holder.pid}" in message
        assert "Nothing was changed by this run" in message
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the dead holder's lock: the next run takes it at once
    driver = Driver()
    path = driver.lock_directory(str(tmp_path))
    assert path.endswith(".dbt-run.lock")
    assert driver.lock_directory(str(tmp_path)) == path  # held: taken once
    driver.release()
    # released: another driver takes it at once
    other = Driver()
    assert other.lock_directory(str(tmp_path)) == path
    other.release()


def test_remote_warehouses_are_not_locked_locally():
    assert Driver().lock_directory("hdfs://namenode/warehouse") is None


def test_the_refusal_records_are_where_the_lock_leaves_them(tmp_path):
    derby = f"jdbc:derby:;databaseName={tmp_path}/metastore_db;create=true"
    # a local warehouse: beside its lock
    assert run_lock.refusal_dirs(str(tmp_path / "wh"), derby) == [str(tmp_path / "wh" / ".dbt-refusals")]
    assert run_lock.refusal_dirs(f"file:{tmp_path}/wh", None) == [str(tmp_path / "wh" / ".dbt-refusals")]
    # HDFS with the embedded metastore: the lock beside the metastore, and the lease's on HDFS
    assert run_lock.refusal_dirs("hdfs://nn:8020/wh/", derby) == [
        str(tmp_path / ".dbt-refusals"),
        "hdfs://nn:8020/wh/.dbt-refusals",
    ]
    # a shared metastore: only the lease's
    assert run_lock.refusal_dirs("s3a://bucket/wh", None) == ["s3a://bucket/wh/.dbt-refusals"]
    assert run_lock.refusal_dirs(None, derby) == []
