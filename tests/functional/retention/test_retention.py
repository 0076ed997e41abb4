"""Retention on real Spark: each of the seven operations, the safety rules, dry run and failures.

Tables, backups, staging and trash tables are built with DDL following the purge contract
(tests/functional/retention/lake.py); each test works in its own `r_*` database and the runs are
scoped to `r_*` so the tests do not clean up each other's fixtures.
"""

from __future__ import annotations

import os

from dbt.tests.util import run_dbt

from tests.functional.retention.conftest import attempts, retention
from tests.functional.retention.lake import BASE_TS, DAY, HOUR, Lake, data_files, local


class TestRetention:
    def test_defaults_delete_nothing_that_is_not_expired(self, built, spark):
        lake = Lake(spark, "r_fresh")
        lake.create("t", {"a": [1, 2], "b": [3]})
        lake.purge("t", BASE_TS, {2})
        lake.staging("t", BASE_TS + HOUR, ["a"])
        before = lake.rows("t")
        retention(BASE_TS + 2 * HOUR)
        assert attempts(spark, built.test_schema, "r_fresh") == []
        assert lake.tables() == ["t", f"t_backup_{BASE_TS}", f"t_staging_{BASE_TS + HOUR}"]
        assert lake.rows("t") == before == [(1, "a"), (3, "b")]
        assert sorted(lake.rows(f"t_backup_{BASE_TS}")) == [(1, "a"), (2, "a"), (3, "b")]
        lake.drop()

    def test_backups_keep_newest_versions_and_none_older_than_days(self, built, spark):
        lake = Lake(spark, "r_backups")
        lake.create("t", {"a": [1, 2, 3, 4, 5, 6], "b": [7]})
        for n in range(5):  # purges on five consecutive days, each removing one id
            lake.purge("t", BASE_TS + n * DAY, {n + 1})
        old = {n: lake.table(f"t_backup_{BASE_TS + n * DAY}") for n in range(5)}
        retention(BASE_TS + 4 * DAY + HOUR)  # 3 newest versions kept per partition
        assert lake.tables() == ["t"] + [f"t_backup_{BASE_TS + n * DAY}" for n in (2, 3, 4)]
        for n in (0, 1):
            for part in old[n].partitions:
                assert not os.path.exists(local(part.location)), f"backup {n} data left at {part.location}"
        for part in old[2].partitions:
            assert data_files(part.location)
        assert lake.rows("t") == [(6, "a"), (7, "b")]
        rows = attempts(spark, built.test_schema, "r_backups")
        assert {(r.table_name, r.partition_spec) for r in rows} >= {
            (f"t_backup_{BASE_TS}", "dp=a"),
            (f"t_backup_{BASE_TS + DAY}", "dp=b"),
        }
        assert all(r.kind == "backup" and r.succeeded and not r.dry_run for r in rows)
        assert sum(r.files_deleted for r in rows) >= 4 and sum(r.bytes_deleted for r in rows) > 0

        retention(BASE_TS + 12 * DAY)  # every backup is now older than 7 days
        assert lake.tables() == ["t"]
        assert lake.rows("t") == [(6, "a"), (7, "b")]
        live = lake.table("t")
        assert os.listdir(local(live.location)) == [str(BASE_TS + 4 * DAY)]
        lake.drop()

    def test_unpartitioned_backup_holds_the_live_directory(self, built, spark):
        lake = Lake(spark, "r_flat")
        lake.create("u", ids=[1, 2, 3])
        root = lake.table("u").location
        lake.purge("u", BASE_TS, {1})
        lake.purge("u", BASE_TS + DAY, {2})
        live = lake.table("u").location
        assert live == f"{root}/{BASE_TS}/{BASE_TS + DAY}"
        retention(BASE_TS + 30 * DAY)
        assert lake.tables() == ["u"]
        assert lake.rows("u") == [(3, None)]
        assert data_files(live), "the live files went"
        # each backup's own files went: nothing is left but the live directory and its parents
        assert data_files(root) == data_files(live)
        rows = attempts(spark, built.test_schema, "r_flat")
        assert {r.location for r in rows} == {root, f"{root}/{BASE_TS}"}
        assert all(r.succeeded and "own files" in r.note for r in rows)
        lake.drop()

    def test_backup_pointing_at_the_live_location_loses_metadata_not_data(self, built, spark):
        lake = Lake(spark, "r_pointer")
        lake.create("t", {"a": [1, 2]})
        live = lake.table("t").partitions[0].location
        spark.sql(f"create table r_pointer.t_backup_{BASE_TS} like r_pointer.t")
        spark.sql(f"alter table r_pointer.t_backup_{BASE_TS} add partition (dp = 'a') location '{live}'")
        retention(BASE_TS + 30 * DAY)
        assert lake.tables() == ["t"]
        assert lake.rows("t") == [(1, "a"), (2, "a")]
        [row] = [r for r in attempts(spark, built.test_schema, "r_pointer") if r.partition_spec == "dp=a"]
        assert row.succeeded and row.action == "keep_data" and row.files_deleted == 0
        assert "still referenced by r_pointer.t partition dp=a" in row.note
        lake.drop()

    def test_outside_the_roots_is_refused_logged_and_the_rest_goes_on(self, built, spark, tmp_path):
        lake = Lake(spark, "r_outside")
        lake.create("t", {"a": [1, 2]})
        lake.purge("t", BASE_TS, {1})
        elsewhere = tmp_path / "not-this-table" / "dp=a"
        lake.write(str(elsewhere), [9])
        spark.sql(f"create table r_outside.t_backup_{BASE_TS + 1} like r_outside.t")
        spark.sql(f"alter table r_outside.t_backup_{BASE_TS + 1} add partition (dp = 'a') location '{elsewhere}'")
        normal = lake.table(f"t_backup_{BASE_TS}").partitions[0].location

        _, log = retention(BASE_TS + 30 * DAY, expect_pass=False)
        assert "deletion attempt(s) failed" in log and "outside the roots" in log
        assert data_files(str(elsewhere)), "a path outside the table's roots was deleted"
        assert not os.path.exists(local(normal)), "the other backup was not cleaned after the failure"
        rows = attempts(spark, built.test_schema, "r_outside")
        [failed] = [r for r in rows if not r.succeeded]
        assert failed.location.endswith("not-this-table/dp=a") and "outside the roots" in failed.failure_reason
        assert any(r.succeeded and r.location == normal for r in rows)
        assert lake.rows("t") == [(2, "a")]
        lake.drop()

    def test_leftover_staging_older_than_the_policy(self, built, spark):
        lake = Lake(spark, "r_staging")
        lake.create("t", {"a": [1], "b": [2]})
        old = lake.staging("t", BASE_TS, ["a", "b"])
        fresh = lake.staging("t", BASE_TS + 30 * HOUR, ["a"])
        # a run that died after swapping partition b: the live partition lies inside its staging dir
        dead = lake.staging("t", BASE_TS + HOUR, ["b"])
        spark.sql(f"alter table r_staging.t partition (dp = 'b') set location '{dead}/dp=b'")
        retention(BASE_TS + 31 * HOUR)  # 24 hours by default
        assert lake.tables() == ["t", f"t_staging_{BASE_TS + 30 * HOUR}"]
        assert not os.path.exists(local(old))
        assert data_files(fresh)
        assert data_files(f"{dead}/dp=b"), "live data inside a dead run's staging dir was deleted"
        assert lake.rows("t") == [(1, "a"), (1, "b")]
        assert {r.kind for r in attempts(spark, built.test_schema, "r_staging")} == {"staging"}
        lake.drop()

    def test_date_partitions_and_snapshots(self, built, spark):
        lake = Lake(spark, "r_dates")
        lake.create("events", {"2023-11-01": [1], "2023-11-09": [2], "2023-11-12": [3], "not-a-date": [4]})
        lake.create("hourly_x", {"2023-11-14-20": [1], "2023-11-13-20": [2]})
        lake.create("snap", {"2023-11-10": [1], "2023-11-11": [2], "2023-11-12": [3]})
        gone = [p.location for p in lake.table("events").partitions if p.spec in ("dp=2023-11-01",)]
        retention(BASE_TS)  # 2023-11-14 22:13; events keep 10 days, hourly_x 1 day, snap 2 days
        assert lake.rows("events") == [(2, "2023-11-09"), (3, "2023-11-12"), (4, "not-a-date")]
        assert not os.path.exists(local(gone[0]))
        assert lake.rows("hourly_x") == [(1, "2023-11-14-20")]
        assert lake.rows("snap") == [(2, "2023-11-11"), (3, "2023-11-12")]
        kinds = {(r.table_name, r.kind) for r in attempts(spark, built.test_schema, "r_dates")}
        assert kinds == {("events", "partition"), ("hourly_x", "partition"), ("snap", "snapshot")}
        lake.drop()

    def test_reaping_moves_old_backups_to_backup_dir(self, built, spark, tmp_path):
        lake = Lake(spark, "r_reap")
        lake.create("t", {"a": [1, 2]})
        lake.purge("t", BASE_TS, {1})
        backup = f"t_backup_{BASE_TS}"
        retention(BASE_TS + 3 * DAY, backup_reap_days=2, backup_dir=str(tmp_path / "backups"))
        moved = lake.table(backup).partitions[0].location
        assert moved == f"file:{tmp_path}/backups/r_reap/t/{BASE_TS}/dp=a"
        assert lake.rows(backup) == [(1, "a"), (2, "a")]
        assert os.listdir(local(lake.table("t").location)) == [str(BASE_TS)], "the table dir holds live data only"
        [row] = attempts(spark, built.test_schema, "r_reap")
        assert row.action == "reap" and row.succeeded and row.files_deleted == 1
        # once expired, the reaped backup is deleted from backup_dir
        retention(BASE_TS + 9 * DAY, backup_reap_days=2, backup_dir=str(tmp_path / "backups"))
        assert lake.tables() == ["t"] and not os.path.exists(local(moved))
        lake.drop()

    def test_dry_run_deletes_nothing_and_logs_what_it_would(self, built, spark):
        lake = Lake(spark, "r_dry")
        lake.create("t", {"a": [1, 2]})
        lake.purge("t", BASE_TS, {1})
        backup = lake.table(f"t_backup_{BASE_TS}")
        retention(BASE_TS + 30 * DAY, retention_dry_run=True)
        assert lake.tables() == ["t", f"t_backup_{BASE_TS}"]
        assert data_files(backup.partitions[0].location)
        [row] = attempts(spark, built.test_schema, "r_dry")
        assert row.dry_run and row.succeeded and row.files_deleted == 1 and row.bytes_deleted > 0
        lake.drop()

    def test_stale_locations_are_deleted_once_unreferenced(self, built, spark):
        lake = Lake(spark, "r_stale")
        lake.create("t", {"a": [1]})
        live = lake.table("t").partitions[0].location
        old = f"{lake.table('t').location}/old-version/dp=a"
        lake.write(old, [1])
        for location in (old, live):
            run_dbt(["run-operation", "record_stale_location", "--args",
                     f"{{database: r_stale, table: t, partition_spec: dp=a, location: '{location}', reason: test}}"])
        retention(BASE_TS + 3 * DAY)  # the records are younger than 7 days
        assert os.path.exists(local(old))
        retention(BASE_TS + 10_000 * DAY)
        assert not os.path.exists(local(old)), "an unreferenced stale location was kept"
        assert lake.rows("t") == [(1, "a")]
        records = spark.sql(
            f"select location from {built.test_schema}.stale_data_records where database_name = 'r_stale'"
        ).collect()
        assert [r.location for r in records] == [live], "the deleted record stays, or the referenced one went"
        [row] = attempts(spark, built.test_schema, "r_stale")
        assert row.kind == "stale" and row.files_deleted == 1
        lake.drop()
