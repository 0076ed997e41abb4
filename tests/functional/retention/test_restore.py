"""Restore on real Spark: default and chosen backup, values with quotes and colons, errors, trash expiry."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt

from python_hooks.catalog.partitions import spec_path
from python_hooks.errors import ConfigError, NotFoundError, RefusedError
from python_hooks.restore import plan as restore_hook
from tests import warehouse_fs
from tests.functional.retention.conftest import attempts, restore, retention
from tests.functional.retention.lake import DAY, NOW, Lake, data_files

COLON = "2024-01-01 10:00"
QUOTE = "o'brien"
T1, T2 = NOW - 2 * DAY, NOW - DAY


@pytest.fixture(scope="class")
def lake(built, spark):
    lake = Lake(spark, "r_restore")
    lake.create("t", {COLON: [1, 2, 3], QUOTE: [4, 5]})
    lake.purge("t", T1, {2, 4})
    lake.purge("t", T2, {3, 5})
    yield lake
    lake.drop()


class TestRestore:
    def test_default_restore_takes_the_newest_non_empty_backup(self, built, lake, spark):
        assert lake.rows("t") == [(1, COLON)]
        before = lake.table("t")
        current = next(p.location for p in before.partitions if p.pairs == [("dp", QUOTE)])
        _, log = restore(table="r_restore.t", partition=f"dp={QUOTE}", now=NOW)
        assert f"Restored r_restore.t partition dp={QUOTE} from r_restore.t_backup_{T2}" in log
        assert lake.rows("t") == [(1, COLON), (5, QUOTE)]
        # the replaced data is kept as trash, and recorded as stale
        assert lake.rows(f"t_trash_{NOW}") == []
        assert lake.table(f"t_trash_{NOW}").partitions[0].location == current
        assert data_files(spark, current)
        stale = spark.sql(
            f"select location, reason, partition_spec from {built.test_schema}.stale_data_records "
            "where database_name = 'r_restore'"
        ).collect()
        assert [tuple(r) for r in stale] == [(current, "restore", f"dp={QUOTE}")]

    def test_chosen_backup_and_a_value_with_a_colon(self, lake):
        restore(table="r_restore.t", partition=f"dp={COLON}", backup=f"r_restore.t_backup_{T1}", now=NOW)
        assert lake.rows("t") == [(1, COLON), (2, COLON), (3, COLON), (5, QUOTE)]
        assert f"t_trash_{NOW + 1}" in lake.tables()

    def test_a_spec_copied_from_purge_log_restores_the_partition_it_names(self, lake, spark):
        """purge_log and `show partitions` give a partition path-escaped; copied as is, it names the
        same partition (planned only: nothing changes)."""
        escaped = spec_path([("dp", COLON)])
        assert escaped == "dp=2024-01-01 10%3A00"
        planned = restore_hook.plan_restore(
            spark, "r_restore.t", escaped, backup=f"t_backup_{T2}", now=NOW, allow_future=True
        )
        assert (planned["pairs"], planned["partition_spec"]) == ([["dp", COLON]], f"dp={COLON}")
        assert planned["partition_exists"] and planned["backup_table"] == f"t_backup_{T2}"
        # a spec that names no partition, escaped or not, is still refused, naming the nearest
        with pytest.raises(NotFoundError, match=r"no backup holds a non-empty copy of it"):
            restore_hook.plan_restore(spark, "r_restore.t", "dp=o%27brian", now=NOW, allow_future=True)

    def test_errors_name_the_table_the_partition_and_the_backups(self, lake, spark):
        # through dbt: a runtime error of the operation, never a compilation error
        _, log = restore(expect_pass=False, table="r_restore.t", partition="day=2024")
        assert "r_restore.t" in log and "partitioned by ['dp']" in log and "dp=<value>" in log
        assert "Runtime Error" in log and "Compilation Error" not in log
        _, log = restore(expect_pass=False, table="r_restore.tt", partition=f"dp={QUOTE}")
        assert "Cannot restore r_restore.tt: the table does not exist (did you mean r_restore.t" in log
        assert "Runtime Error" in log and "Compilation Error" not in log
        with pytest.raises(ConfigError, match=r"Not a partition column: dpp \(did you mean dp\?\)"):
            restore_hook.plan_restore(spark, "r_restore.t", "dpp=x")
        with pytest.raises(NotFoundError) as missing:
            restore_hook.plan_restore(spark, "r_restore.t", f"dp={QUOTE}", backup=f"t_backup_{T2 + 1}")
        message = str(missing.value)
        assert f"r_restore.t_backup_{T2 + 1}: no such backup (did you mean r_restore.t_backup_{T2}" in message
        assert f"r_restore.t_backup_{T2} (holds this partition)" in message
        assert f"r_restore.t_backup_{T1} (holds this partition)" in message
        with pytest.raises(
            NotFoundError,
            match=r"r_restor.t: the database r_restor does not exist \(did you mean r_restore\?\)",
        ):
            restore_hook.plan_restore(spark, "r_restor.t", "dp=x")
        with pytest.raises(NotFoundError, match="r_restore.nope: the table does not exist"):
            restore_hook.plan_restore(spark, "r_restore.nope", "dp=x")
        # a partition that neither the table nor a backup has: the nearest that exist
        with pytest.raises(
            NotFoundError, match=r"no backup holds a non-empty copy.*\(did you mean dp=o'brien\?\)"
        ):
            restore_hook.plan_restore(spark, "r_restore.t", "dp=o'brian")
        # the restored partition's data IS backup T1's: choosing it again is refused
        with pytest.raises(RefusedError, match="is the live location"):
            restore_hook.plan_restore(spark, "r_restore.t", f"dp={COLON}", backup=f"t_backup_{T1}")
        assert lake.rows("t") == [(1, COLON), (2, COLON), (3, COLON), (5, QUOTE)]

    def test_batched_stale_records(self, built, lake, spark):
        gone = f"{lake.table('t').location}/never-written"
        rows = [
            {
                "database": "r_restore",
                "table": "t",
                "partition_spec": "dp=o'x:1",
                "location": gone,
                "reason": "purge",
            }
        ]
        run_dbt(["run-operation", "record_stale_locations", "--args", json.dumps({"rows": rows})])
        recorded = spark.sql(
            f"select partition_spec, location, reason from {built.test_schema}.stale_data_records "
            "where reason = 'purge'"
        ).collect()
        assert [tuple(r) for r in recorded] == [("dp=o'x:1", gone, "purge")]

    def test_trash_and_backups_expire_without_touching_restored_data(self, built, lake, spark):
        trash = {name: lake.table(name) for name in lake.tables() if "_trash_" in name}
        assert len(trash) == 2
        retention(NOW + 10 * DAY, scope="r_restore")
        assert lake.tables() == ["t"]
        assert lake.rows("t") == [(1, COLON), (2, COLON), (3, COLON), (5, QUOTE)]
        for table in trash.values():
            for part in table.partitions:
                assert not warehouse_fs.exists(spark, part.location), f"trash data left at {part.location}"
        rows = attempts(spark, built.test_schema, "r_restore")
        assert {r.kind for r in rows} == {"trash", "backup", "stale"}
        # the restores' stale records: their locations went with the trash, so the records go too
        stale = [r for r in rows if r.kind == "stale"]
        assert sorted(r.partition_spec for r in stale) == [f"dp={COLON}", f"dp={QUOTE}", "dp=o'x:1"]
        assert all(r.files_deleted == 0 and r.succeeded for r in stale)
        left = spark.sql(
            f"select * from {built.test_schema}.stale_data_records where database_name = 'r_restore'"
        ).collect()
        assert left == []
        kept = [r for r in rows if r.action == "keep_data"]
        assert kept and all("still referenced by r_restore.t" in r.note for r in kept)
        assert all(r.succeeded for r in rows)
