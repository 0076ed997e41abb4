"""Retention on real Spark: each of the seven operations, the safety rules, dry run and failures.

One world of `r_*` databases is built with DDL following the purge contract
(tests/functional/retention/lake.py), then cleaned twice at the same time `NOW`: a dry run, then
the real pass.  Each test checks one scenario of the world, so the whole class costs two dbt runs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from tests import warehouse_fs
from tests.conftest import TEST_FS, WAREHOUSE, beside_warehouse
from tests.functional.retention.conftest import REAPED, attempts, retention
from tests.functional.retention.lake import DAY, HOUR, NOW, Lake, data_files, register


def every_file(spark: Any, databases: list[str]) -> dict[str, list[str]]:
    found = {}
    for db in databases:
        root = spark.sql(f"describe database {db}").where("info_name = 'Location'").collect()[0][1]
        found[db] = data_files(spark, root)
    return found


def warehouse_tree(spark: Any, own_schema: str) -> set[str]:
    """Every file and directory under the warehouse and the reaped backups' directory, but the
    run's own log tables (its schema)."""
    found = set()
    for root in (WAREHOUSE, REAPED):
        for name in warehouse_fs.tree(spark, root):
            if name.split("/", 1)[0] != f"{own_schema}.db":
                found.add(f"{root}/{name}")
    return found


def stale_record_count(spark: Any, schema: str) -> int:
    spark.catalog.refreshTable(f"{schema}.stale_data_records")
    return spark.sql(f"select count(*) from {schema}.stale_data_records").collect()[0][0]


@pytest.fixture(scope="class")
def world(built, spark):
    lakes: dict[str, Lake] = {}

    def lake(name: str) -> Lake:
        lakes[name] = Lake(spark, name)
        return lakes[name]

    fresh = lake("r_fresh")
    fresh.create("t", {"a": [1, 2], "b": [3]})
    fresh.purge("t", NOW - HOUR, {2})
    fresh.staging("t", NOW - 2 * HOUR, ["a"])

    versions = lake("r_versions")
    versions.create("t", {"a": [1, 2, 3, 4, 5, 6], "b": [7]})
    for n in range(5):  # purges on five consecutive days, each removing one id
        versions.purge("t", NOW - (4 - n) * DAY, {n + 1})

    old = lake("r_old")
    old.create("t", {"a": [1, 2, 3]})
    old.purge("t", NOW - 9 * DAY, {1}, external=True)  # external backups with their own dirs, as purge makes
    old.purge("t", NOW - 8 * DAY, {2}, external=True)

    flat = lake("r_flat")
    flat.create("u", ids=[1, 2, 3])
    flat.purge("u", NOW - 30 * DAY, {1})
    flat.purge("u", NOW - 29 * DAY, {2})

    pointer = lake("r_pointer")
    pointer.create("t", {"a": [1, 2]})
    live = pointer.table("t").partitions[0].location
    spark.sql(f"create table r_pointer.t_backup_{NOW - 20 * DAY} like r_pointer.t")
    register(spark, "r_pointer", f"t_backup_{NOW - 20 * DAY}", "backup", "t", NOW - 20 * DAY)
    spark.sql(f"alter table r_pointer.t_backup_{NOW - 20 * DAY} add partition (dp = 'a') location '{live}'")

    outside = lake("r_outside")
    outside.create("t", {"a": [1, 2]})
    outside.purge("t", NOW - 20 * DAY, {1})
    # on the warehouse's filesystem, outside every root of r_outside.t
    elsewhere = f"{beside_warehouse('elsewhere')}/not-this-table/dp=a"
    outside.write(elsewhere, [9])
    spark.sql(f"create table r_outside.t_backup_{NOW - 19 * DAY} like r_outside.t")
    register(spark, "r_outside", f"t_backup_{NOW - 19 * DAY}", "backup", "t", NOW - 19 * DAY)
    spark.sql(
        f"alter table r_outside.t_backup_{NOW - 19 * DAY} add partition (dp = 'a') location '{elsewhere}'"
    )

    staging = lake("r_staging")
    staging.create("t", {"a": [1], "b": [2]})
    staging.staging("t", NOW - 30 * HOUR, ["a", "b"])
    staging.staging("t", NOW - HOUR, ["a"])
    # a run that died after swapping partition b: the live partition lies inside its staging dir
    dead = staging.staging("t", NOW - 25 * HOUR, ["b"])
    spark.sql(f"alter table r_staging.t partition (dp = 'b') set location '{dead}/dp=b'")

    dates = lake("r_dates")  # NOW is 2030-04-16 17:46 UTC
    dates.create("events", {"2030-04-01": [1], "2030-04-10": [2], "2030-04-16": [3], "not-a-date": [4]})
    dates.create("hourly_x", {"2030-04-16-10": [1], "2030-04-15-10": [2]})
    dates.create("snap", {"2030-04-10": [1], "2030-04-11": [2], "2030-04-12": [3]})

    reap = lake("r_reap")
    reap.create("t", {"a": [1, 2]})
    reap.purge("t", NOW - 3 * DAY, {1})

    stale = lake("r_stale")
    stale.create("t", {"a": [1]})
    stale_old = f"{stale.table('t').location}/old-version/dp=a"
    stale.write(stale_old, [1])
    for location in (stale_old, stale.table("t").partitions[0].location):
        run_dbt(
            [
                "run-operation",
                "record_stale_location",
                "--args",
                f"{{database: r_stale, table: t, partition_spec: dp=a, location: '{location}', reason: test}}",
            ]
        )

    state = {
        "tables": {name: lk.tables() for name, lk in lakes.items()},
        "files": every_file(spark, list(lakes)),
        "rows": {name: {t: lk.rows(t) for t in lk.tables()} for name, lk in lakes.items()},
    }
    tree = warehouse_tree(spark, built.test_schema)
    stale_records = stale_record_count(spark, built.test_schema)
    # the tests' clock is a day of 2030: without retention_allow_future_now it is refused
    _, refused = retention(NOW, expect_pass=False, retention_allow_future_now=False)
    refused_files = every_file(spark, list(lakes))
    # a backup_dir that climbs out of its directory: refused before any delete
    climbing = f"{REAPED}/../elsewhere"
    _, refused_dir = retention(NOW, expect_pass=None, backup_dir=climbing)
    refused_dir_tree = warehouse_tree(spark, built.test_schema)
    _, dry_log = retention(NOW, expect_pass=False, retention_dry_run=True, retention_progress_seconds=0.05)
    dry = {
        "log": dry_log,
        "attempts": attempts(spark, built.test_schema),
        "tables": {name: lk.tables() for name, lk in lakes.items()},
        "files": every_file(spark, list(lakes)),
    }
    # a purge's dry run makes retention dry too, whichever boolean spelling it is given
    retention(NOW, expect_pass=False, purge_dry_run="yes")
    dry["purge_dry_run"] = {
        "attempts": attempts(spark, built.test_schema),
        "tables": {name: lk.tables() for name, lk in lakes.items()},
        "tree": warehouse_tree(spark, built.test_schema),
        "stale_records": stale_record_count(spark, built.test_schema),
    }
    dry["tree_before"], dry["stale_records_before"] = tree, stale_records
    before = {name: {t: lk.table(t) for t in lk.tables()} for name, lk in lakes.items()}
    _, log = retention(NOW, expect_pass=False)
    yield {
        "lakes": lakes,
        "state": state,
        "refused": (refused, refused_files),
        "refused_dir": (climbing, refused_dir, refused_dir_tree, tree),
        "dry": dry,
        "log": log,
        "before": before,
        "attempts": attempts(spark, built.test_schema),
        "elsewhere": elsewhere,
        "dead": dead,
        "stale_old": stale_old,
    }
    for lk in lakes.values():
        lk.drop()


def rows_of(world: dict, database: str) -> list[Any]:
    return [r for r in world["attempts"] if r.database_name == database]


class TestRetention:
    def test_a_clock_in_the_future_deletes_nothing_and_an_allowed_one_is_logged(self, world):
        log, files = world["refused"]
        assert "Var retention_now is 2030-04-16T17:46:40Z" in log and "ahead of this driver's clock" in log
        assert "Nothing was deleted" in log
        assert files == world["state"]["files"]
        # the passes that were allowed record the clock they judged ages by
        (clock,) = [r for r in world["attempts"] if r.kind == "clock"]
        assert (clock.action, clock.succeeded, clock.files_deleted) == ("override_clock", True, 0)
        assert clock.note.startswith("retention_now 2030-04-16T17:46:40Z, in place of the driver's clock 20")
        assert "Retention: ages are judged at retention_now 2030-04-16T17:46:40Z" in world["log"]

    def test_a_backup_dir_with_dots_is_refused_naming_it_and_nothing_is_deleted(self, world):
        climbing, log, tree, tree_before = world["refused_dir"]
        assert "Retention policies refused; nothing was deleted" in log
        assert f"Var backup_dir: backup_dir is '{climbing}': a path with '..' is refused" in log
        # not a file or directory more or less under the warehouse or the reaped backups' directory
        assert tree == tree_before

    def test_dry_run_deletes_nothing_and_logs_what_it_would(self, world):
        dry = world["dry"]
        assert dry["tables"] == world["state"]["tables"]
        assert dry["files"] == world["state"]["files"]
        assert dry["attempts"] and all(r.dry_run for r in dry["attempts"])
        would = {
            (r.database_name, r.table_name, r.partition_spec) for r in dry["attempts"] if r.files_deleted
        }
        done = {
            (r.database_name, r.table_name, r.partition_spec) for r in world["attempts"] if r.files_deleted
        }
        assert would == done
        assert not any(r.dry_run for r in world["attempts"])

    def test_a_dry_run_lists_every_location_per_kind(self, world):
        dry = world["dry"]
        would = [r for r in dry["attempts"] if r.action == "delete" and r.succeeded]
        total_files = sum(r.files_deleted for r in would)
        assert (
            f"Retention (dry run): would delete {len(would)} location(s), {total_files} file(s)" in dry["log"]
        )
        for kind in {r.kind for r in would}:
            of_kind = [r for r in would if r.kind == kind]
            assert (
                f"  {kind}: {len(of_kind)} location(s), {sum(r.files_deleted for r in of_kind)} file(s)"
                in dry["log"]
            )
        for row in would:
            where = f"{row.database_name}.{row.table_name}" + (
                f" partition {row.partition_spec}" if row.partition_spec else ""
            )
            assert f"    {row.location}  ({where}; {row.files_deleted} file(s)" in dry["log"], row
        # the real pass prints the same totals per kind, without listing the paths
        done = [r for r in world["attempts"] if r.action == "delete" and r.succeeded]
        assert f"Retention: deleted {len(done)} location(s)" in world["log"]
        assert not any(f"    {r.location}  (" in world["log"] for r in done)

    def test_progress_is_told_while_the_pass_runs(self, world):
        # every 0.05 s here (retention_progress_seconds; 10 s by default): `i/N`, elapsed, estimate
        lines = [line for line in world["dry"]["log"].splitlines() if " item(s) done, " in line]
        assert lines, world["dry"]["log"]
        assert re.search(
            r"Retention: \d+/\d+ item\(s\) done, \d+ s elapsed, (about \d+ s left|no estimate yet)", lines[0]
        )

    def test_failed_attempts_are_a_runtime_error_naming_them(self, world):
        assert "deletion attempt(s) failed (the others went on)" in world["log"]
        assert "Runtime Error" in world["log"] and "Compilation Error" not in world["log"]

    def test_a_purge_dry_run_makes_retention_dry(self, world):
        dry, before = world["dry"]["purge_dry_run"], world["dry"]
        assert dry["tables"] == world["state"]["tables"]
        # not a file or directory more or less anywhere under the warehouse, no stale record written
        assert dry["tree"] == before["tree_before"]
        assert dry["stale_records"] == before["stale_records_before"]
        assert dry["attempts"] and all(r.dry_run for r in dry["attempts"])
        assert {(r.database_name, r.table_name, r.location) for r in dry["attempts"]} == {
            (r.database_name, r.table_name, r.location) for r in before["attempts"]
        }

    def test_the_metastore_is_listed_only_when_something_is_due(self, world):
        # the main pass deleted: it protected every location in the metastore first
        assert "Retention: listed the metastore's " in world["log"]
        # a pass over young backups only deletes nothing, and lists no live table's partitions
        fresh = world["lakes"]["r_fresh"]
        before = fresh.tables()
        _, log = retention(NOW, scope="r_fresh")
        assert "Retention: nothing was due, so the metastore's locations were not listed" in log
        assert fresh.tables() == before

    def test_nothing_live_is_lost_and_nothing_young_goes(self, world):
        for name, lake in world["lakes"].items():
            if name == "r_dates":
                continue
            live = "u" if name == "r_flat" else "t"
            assert lake.rows(live) == world["state"]["rows"][name][live], f"{name}: live rows changed"
        fresh = world["lakes"]["r_fresh"]
        assert fresh.tables() == world["state"]["tables"]["r_fresh"]
        assert rows_of(world, "r_fresh") == []

    def test_backups_keep_the_newest_versions(self, world, spark):
        lake, before = world["lakes"]["r_versions"], world["before"]["r_versions"]
        kept = [f"t_backup_{NOW - n * DAY}" for n in (2, 1, 0)]
        assert lake.tables() == sorted(["t", *kept])
        for n in (4, 3):
            for part in before[f"t_backup_{NOW - n * DAY}"].partitions:
                assert not warehouse_fs.exists(spark, part.location), f"backup data left at {part.location}"
        for part in before[kept[0]].partitions:
            assert data_files(spark, part.location)
        rows = rows_of(world, "r_versions")
        assert {(r.table_name, r.partition_spec) for r in rows} == {
            (f"t_backup_{NOW - n * DAY}", spec) for n in (4, 3) for spec in ("dp=a", "dp=b")
        }
        assert all(r.kind == "backup" and r.action == "delete" and r.succeeded for r in rows)
        assert sum(r.files_deleted for r in rows) == 4 and all(r.bytes_deleted > 0 for r in rows)

    def test_backups_older_than_the_days_go_and_empty_run_dirs_with_them(self, world, spark):
        lake = world["lakes"]["r_old"]
        assert lake.tables() == ["t"]
        assert lake.rows("t") == [(3, "a")]
        assert warehouse_fs.listdir(spark, lake.table("t").location) == [str(NOW - 8 * DAY)]
        db_dir = lake.table("t").location.rstrip("/").rsplit("/", 1)[0]
        assert warehouse_fs.listdir(spark, db_dir) == ["t"], "the backups' own directories were left behind"
        assert all(r.succeeded for r in rows_of(world, "r_old"))

    def test_unpartitioned_backup_loses_only_its_own_files(self, world, spark):
        lake = world["lakes"]["r_flat"]
        root = world["before"]["r_flat"][f"u_backup_{NOW - 30 * DAY}"].location
        live = lake.table("u").location
        assert live == f"{root}/{NOW - 30 * DAY}/{NOW - 29 * DAY}"
        assert lake.tables() == ["u"]
        assert data_files(spark, live) and data_files(spark, root) == data_files(spark, live)
        rows = rows_of(world, "r_flat")
        assert {r.location for r in rows} == {root, f"{root}/{NOW - 30 * DAY}"}
        assert all(r.succeeded and r.files_deleted == 1 and "own files" in r.note for r in rows)

    def test_backup_pointing_at_the_live_location_loses_metadata_not_data(self, world):
        lake = world["lakes"]["r_pointer"]
        assert lake.tables() == ["t"]
        assert lake.rows("t") == [(1, "a"), (2, "a")]
        [row] = rows_of(world, "r_pointer")
        assert row.succeeded and row.action == "keep_data" and row.files_deleted == 0
        assert "still referenced by r_pointer.t partition dp=a" in row.note

    def test_outside_the_roots_is_refused_logged_and_the_rest_goes_on(self, world, spark):
        assert "deletion attempt(s) failed" in world["log"] and "outside the roots" in world["log"]
        assert data_files(spark, world["elsewhere"]), "a path outside the table's roots was deleted"
        [failed] = [r for r in world["attempts"] if not r.succeeded]
        assert failed.database_name == "r_outside" and "outside the roots" in failed.failure_reason
        # refused before its metadata went: the backup still references its files, nothing is orphaned
        assert f"t_backup_{NOW - 19 * DAY}" in world["lakes"]["r_outside"].tables()
        normal = world["before"]["r_outside"][f"t_backup_{NOW - 20 * DAY}"].partitions[0].location
        assert not warehouse_fs.exists(spark, normal), "the other backup was not cleaned after the failure"
        assert len(world["attempts"]) > 10

    def test_leftover_staging_older_than_the_policy(self, world, spark):
        lake = world["lakes"]["r_staging"]
        assert lake.tables() == ["t", f"t_staging_{NOW - HOUR}"]
        root = lake.table("t").location
        assert not warehouse_fs.exists(spark, f"{root}/{NOW - 30 * HOUR}")
        assert data_files(spark, f"{root}/{NOW - HOUR}")
        assert data_files(spark, f"{world['dead']}/dp=b"), (
            "live data inside a dead run's staging dir was deleted"
        )
        assert lake.rows("t") == [(1, "a"), (1, "b")]
        assert {r.kind for r in rows_of(world, "r_staging")} == {"staging"}

    def test_date_partitions_and_snapshots(self, world, spark):
        lake = world["lakes"]["r_dates"]
        assert lake.rows("events") == [(2, "2030-04-10"), (3, "2030-04-16"), (4, "not-a-date")]
        gone = [
            p.location for p in world["before"]["r_dates"]["events"].partitions if p.spec == "dp=2030-04-01"
        ]
        assert not warehouse_fs.exists(spark, gone[0])
        assert lake.rows("hourly_x") == [(1, "2030-04-16-10")]
        assert lake.rows("snap") == [(2, "2030-04-11"), (3, "2030-04-12")]
        kinds = {(r.table_name, r.kind, r.partition_spec) for r in rows_of(world, "r_dates")}
        assert kinds == {
            ("events", "partition", "dp=2030-04-01"),
            ("hourly_x", "partition", "dp=2030-04-15-10"),
            ("snap", "snapshot", "dp=2030-04-10"),
        }

    def test_reaping_moves_old_backups_to_backup_dir(self, world, spark):
        lake = world["lakes"]["r_reap"]
        backup = f"t_backup_{NOW - 3 * DAY}"
        moved = lake.table(backup).partitions[0].location
        reaped = f"file:{REAPED}" if TEST_FS == "file" else REAPED  # as the metastore spells it
        assert moved == f"{reaped}/r_reap/t/{NOW - 3 * DAY}/dp=a"
        assert lake.rows(backup) == [(1, "a"), (2, "a")]
        assert data_files(spark, moved), "the reaped backup's data is not at its new location"
        assert warehouse_fs.listdir(spark, lake.table("t").location) == [str(NOW - 3 * DAY)], (
            "table dir: live data only"
        )
        [row] = rows_of(world, "r_reap")
        assert row.action == "reap" and row.succeeded and row.files_deleted == 1

    def test_stale_locations_are_deleted_once_unreferenced(self, world, spark, built):
        lake = world["lakes"]["r_stale"]
        assert not warehouse_fs.exists(spark, world["stale_old"]), "an unreferenced stale location was kept"
        assert lake.rows("t") == [(1, "a")]
        records = spark.sql(
            f"select location from {built.test_schema}.stale_data_records where database_name = 'r_stale'"
        ).collect()
        assert [r.location for r in records] == [lake.table("t").partitions[0].location]
        [row] = rows_of(world, "r_stale")
        assert row.kind == "stale" and row.files_deleted == 1
