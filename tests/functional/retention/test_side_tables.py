"""Side tables are registered, not guessed: retention and restore never touch a user's tables
named like them.

The issue's case: `orders_backup_202401151200`, `orders_trash_2024011512` and
`orders_staging_1700000000000`, none made by the project, beside the user's `orders`; the first
onboarded (a `dataset.descriptor`: the purge cleans it as the live table it is,
tests/functional/purge/test_onboarding.py).  With every policy at 0 (and short retention
allowed), retention and restore leave them alone; the purge's own side tables, registered, go.  `adopt_side_tables` lists, then adopts, old ones on request.
Bad policies stop the pass before anything is deleted.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests import warehouse_fs
from tests.functional.retention.conftest import restore, retention
from tests.functional.retention.lake import DAY, NOW, Lake, data_files
from tests.policies import RETENTION_ZERO

# every policy at zero, without the override that allows it (the refusal is tested)
ZERO = {k: v for k, v in RETENTION_ZERO.items() if k != "retention_allow_short"}
LOOKALIKES = ["orders_backup_202401151200", "orders_trash_2024011512", "orders_staging_1700000000000"]


def registration(spark: Any, table: str) -> dict[str, str]:
    return {
        r.key: r.value
        for r in spark.sql(f"show tblproperties {table}").collect()
        if r.key.startswith("lakehouse.")
    }


def state(spark: Any, lake: Lake) -> dict[str, Any]:
    """The tables and every file under the database directory."""
    root = spark.sql(f"describe database {lake.db}").where("info_name = 'Location'").collect()[0][1]
    return {"tables": lake.tables(), "files": data_files(spark, root)}


@pytest.fixture(scope="class")
def user_lake(built, spark):
    lake = Lake(spark, "r_user")
    lake.create("orders", {"a": [1, 2], "b": [3]})
    lake.purge("orders", NOW - 10 * DAY, {2})  # one real, registered backup of the project's own
    for name in LOOKALIKES[:2]:  # the user's own tables, made like orders, holding data
        spark.sql(f"create table r_user.{name} like r_user.orders")
        spark.sql(f"insert into r_user.{name} partition (dp = 'a') values (42, 'mine')")
    spark.sql(
        f"alter table r_user.{LOOKALIKES[0]} set tblproperties"
        """ ('dataset.descriptor' = '{"complianceSpec": {"identifierField": "id"}}')"""
    )
    spark.sql(f"create table r_user.{LOOKALIKES[2]} (note string) stored as parquet")
    spark.sql(f"insert into r_user.{LOOKALIKES[2]} values ('mine')")
    yield lake
    lake.drop()


class TestSideTables:
    def test_bad_policies_stop_the_pass_before_any_delete(self, built, spark, user_lake):
        before = state(spark, user_lake)
        _, log = retention(
            NOW, expect_pass=False, scope="r_user", **{**ZERO, "trash_retention_days": "seven"}
        )
        assert "Retention policies refused; nothing was deleted" in log
        assert (
            "Var trash_retention_days: trash_retention_days is 'seven': expected a number >= 0 (days)" in log
        )
        # zero days is under the minimum retention unless allowed, and the message says how
        _, log = retention(NOW, expect_pass=False, scope="r_user", **ZERO)
        assert "backup_retention_days is 0 (0 h), under retention_min_hours (24 h)" in log
        assert "retention_allow_short: true" in log
        assert state(spark, user_lake) == before

    def test_lookalikes_are_never_touched_and_registered_backups_go(self, built, spark, user_lake):
        files = {name: data_files(spark, user_lake.table(name).location) for name in LOOKALIKES}
        backup = f"orders_backup_{NOW - 10 * DAY}"
        backup_dirs = [p.location for p in user_lake.table(backup).partitions]
        _, log = retention(NOW, scope="r_user", retention_allow_short=True, **ZERO)
        assert set(LOOKALIKES) <= set(user_lake.tables())
        for name in LOOKALIKES:
            assert data_files(spark, user_lake.table(name).location) == files[name] != []
        assert user_lake.rows(LOOKALIKES[0]) == [(42, "a")]  # onboarded: a live table
        assert "3 table(s) are named like side tables but do not carry the side-table properties" in log
        assert "adopt_side_tables" in log
        # the project's own backup was past its policy: gone, with its old directory
        assert backup not in user_lake.tables()
        assert backup_dirs and not any(warehouse_fs.exists(spark, d) for d in backup_dirs)

    def test_restore_refuses_a_backup_that_is_only_named_like_one(self, spark, user_lake):
        location = user_lake.table("orders").partitions[0].location
        _, log = restore(
            expect_pass=False,
            table="r_user.orders",
            partition="dp=a",
            backup=f"r_user.{LOOKALIKES[0]}",
            now=NOW,
        )
        assert f"from r_user.{LOOKALIKES[0]}: it is named like a backup but is not registered" in log
        assert "Nothing was changed" in log
        assert user_lake.table("orders").partitions[0].location == location
        _, log = restore(expect_pass=False, table="r_user.orders", partition="dp=..", now=NOW)
        assert "the value '..' of dp is refused" in log

    def test_adoption_lists_first_then_adopts_what_was_made_like_its_table(self, spark, user_lake):
        args = {"scope": "r_user"}
        _, log = run_dbt_and_capture(["run-operation", "adopt_side_tables", "--args", json.dumps(args)])
        assert "3 unregistered table(s) named like side tables; 2 adoptable (a listing only" in log
        assert (
            f"r_user.{LOOKALIKES[0]}: backup of r_user.orders, made at 202401151200: would be adopted" in log
        )
        assert f"r_user.{LOOKALIKES[2]}: not adopted (its columns or partition columns differ" in log
        assert registration(spark, f"r_user.{LOOKALIKES[0]}") == {}
        _, log = run_dbt_and_capture(
            ["run-operation", "adopt_side_tables", "--args", json.dumps({**args, "apply": True})]
        )
        assert f"r_user.{LOOKALIKES[1]}: trash of r_user.orders, made at 2024011512: adopted" in log
        props = registration(spark, f"r_user.{LOOKALIKES[0]}")
        assert props["lakehouse.side_table"] == "backup"
        assert props["lakehouse.side_table.of"] == "r_user.orders"
        assert props["lakehouse.side_table.created_at"] == "202401151200"
        assert registration(spark, f"r_user.{LOOKALIKES[2]}") == {}


@pytest.fixture(scope="class")
def orphan_lake(built, spark):
    lake = Lake(spark, "r_orphan")
    lake.create("t", {"a": [1, 2], "b": [3]})
    lake.purge("t", NOW - 10 * DAY, {2}, external=True)
    # one backup partition of two files: its delete can fail between them
    lake.write(lake.table(f"t_backup_{NOW - 10 * DAY}").partitions[0].location, [4])
    yield lake
    lake.drop()


class TestNoOrphans:
    def test_a_failed_delete_after_the_metadata_step_is_recorded_and_a_later_pass_deletes_it(
        self, built, spark, orphan_lake, monkeypatch
    ):
        """A delete that fails after the metadata step, outright (a permission) or midway (S3
        deletes a prefix object by object: part of the copy is gone, part is left): what is left
        is recorded as stale data, the live table reads whole, and a later pass deletes the rest."""
        from python_hooks.catalog import filesystem

        backup = f"t_backup_{NOW - 10 * DAY}"
        dirs = [warehouse_fs.qualify(spark, p.location) for p in orphan_lake.table(backup).partitions]
        assert dirs and all(data_files(spark, d) for d in dirs)
        halfway = [d for d in dirs if len(data_files(spark, d)) == 2]
        assert len(halfway) == 1, dirs
        real_delete = filesystem.delete

        def refused(spark_session: Any, path: str, recursive: bool = True) -> Any:
            if "r_orphan" in path:
                if warehouse_fs.qualify(spark_session, path) in halfway:
                    real_delete(spark_session, data_files(spark_session, path)[0], False)
                raise OSError(f"Permission denied: {path}")
            return real_delete(spark_session, path, recursive)

        monkeypatch.setattr(filesystem, "delete", refused)
        _, log = retention(NOW, expect_pass=False, scope="r_orphan")
        monkeypatch.undo()
        # the metadata went, the data could not (all of it, or the rest of it): it is recorded,
        # not orphaned, and the live table never lost a row
        assert backup not in orphan_lake.tables()
        assert all(data_files(spark, d) for d in dirs)
        assert len(data_files(spark, halfway[0])) == 1
        assert orphan_lake.rows("t") == [(1, "a"), (3, "b")]
        assert "lost their metadata but could not be deleted; recorded in" in log, log[-4000:]
        stale = spark.sql(
            f"select location, reason from {built.test_schema}.stale_data_records where database_name = 'r_orphan'"
        ).collect()
        assert {warehouse_fs.qualify(spark, r.location) for r in stale} >= set(dirs)
        assert all(
            "the delete failed after the metadata was dropped (Permission denied" in r.reason for r in stale
        )
        # a later pass deletes them and forgets the records
        _, log2 = retention(NOW, expect_pass=None, scope="r_orphan")
        assert "deletion attempt(s) failed" not in log2, log2[-3000:]
        assert not any(warehouse_fs.exists(spark, d) for d in dirs)
        left = spark.sql(
            f"select count(*) from {built.test_schema}.stale_data_records where database_name = 'r_orphan'"
        ).collect()[0][0]
        assert left == 0
        assert orphan_lake.rows("t") == [(1, "a"), (3, "b")]
