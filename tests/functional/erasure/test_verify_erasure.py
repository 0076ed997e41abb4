"""Verification of bytes: `dbt run-operation verify_erasure` and the `erasure_verification` model
after a real `dbt run --select purge+`, and again after retention has deleted every copy."""

from __future__ import annotations

import json
from typing import Any

import pytest

from python_hooks.catalog import files as catalog_files
from python_hooks.erasure import footers
from tests.functional.erasure.conftest import (
    SEED_TYPES,
    committed,
    descriptor,
    latest_verification,
    purge,
    purge_runs,
    retention_at_zero,
    run_dbt,
    verify,
)

IDS = (1001, 1002, 1003)


def _config(id_table: str, scope: str) -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet"}},
        "seeds": {"compliance": {"+file_format": "parquet", "+column_types": SEED_TYPES}},
        "vars": {
            "purge_depends_on": [],
            "purge_whitelist": "",
            "compliance_id_table": id_table,
            "compliance_id_column": "guestid",
            "retention_scope": scope,
        },
    }


def _files(spark: Any, location: str) -> list[str]:
    return [str(s.getPath().toString()) for s in catalog_files.data_files(spark, location)]


class TestVerifyErasure:
    """A partitioned Hive parquet table with a nested identifier and partition values holding a
    space and a colon, and an unpartitioned one; the id table has no request_id column, so the
    request is the purge run (its invocation_id)."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _config("e_ids.ids", "e_verify")

    @pytest.fixture(scope="class")
    def purged(self, project: Any, spark: Any) -> dict[str, Any]:
        for database in ("e_verify", "e_ids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        spark.sql("create table e_ids.ids (guestid bigint) using parquet")
        spark.sql("insert into e_ids.ids values " + ", ".join(f"({i})" for i in IDS) + ", (null)")
        spark.sql(f"""
            create table e_verify.events (metadata struct<guestid: bigint, note: string>, payload string)
            partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("metadata.guestid")}')""")
        for ds, low, high in (
            ("2024-01-01 10:00", 1000, 1010),
            ("2024-01-02", 1002, 1006),
            ("2024-01-03", 2000, 2010),
        ):
            spark.sql(f"""
                insert into e_verify.events partition (ds = '{ds}')
                select named_struct('guestid', id, 'note', 'n'), concat('p', id) from range({low}, {high})""")
        spark.sql(f"""
            create table e_verify.flat (guestid bigint, payload string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql("insert into e_verify.flat select id, 'x' from range(995, 1010)")
        before = {
            "events": {ds: _files(spark, loc) for ds, loc in self._partitions(spark)},
            "flat": _files(spark, self._location(spark, "flat")),
        }
        purge("e_verify", "e_verify")
        (run,) = purge_runs(spark, project.test_schema)
        return {"run": run, "rows": committed(spark, project.test_schema, run), "before": before}

    @staticmethod
    def _partitions(spark: Any) -> list[tuple[str, str]]:
        from python_hooks.catalog import tables

        return [
            (p["values"][0][1], p["location"]) for p in tables.list_partitions(spark, "e_verify", "events")
        ]

    @staticmethod
    def _location(spark: Any, table: str) -> str:
        from python_hooks.catalog import tables

        return tables.describe_table(spark, "e_verify", table)["location"]

    def test_after_the_purge_live_is_clean_and_the_backups_hold_exactly_the_purged_rows(
        self, project, spark, purged
    ):
        log = verify(purged["run"])
        rows = latest_verification(spark, project.test_schema, purged["run"])
        by_kind: dict[str, list[Any]] = {}
        for row in rows:
            by_kind.setdefault(row.location_kind, []).append(row)
        assert {r.table_name for r in rows} == {"events", "flat"}
        # live: the purged partitions' (and the unpartitioned table's) current locations, read and clean
        live = {(r.table_name, r.location) for r in by_kind["live"]}
        assert len(live) == 3  # two purged partitions of events, and flat
        assert all(
            r.rows_holding_ids == 0 and r.files_total > 0 and r.error is None for r in by_kind["live"]
        ), rows
        assert ("events", [loc for ds, loc in self._partitions(spark) if ds == "2024-01-03"][0]) not in live
        # backups: each pre-purge copy holds exactly the rows its partition lost, per location
        purged_by_location = {r.old_location: r.rows_purged for r in purged["rows"]}
        backups = {r.location: r.rows_holding_ids for r in by_kind["backup"] if r.files_total}
        assert backups == purged_by_location
        assert all(n > 0 for n in backups.values())
        assert sum(r.rows_holding_ids for r in rows) == sum(purged_by_location.values()) == 3 + 2 + 3
        # the summary a user reads, and nothing fails because the backups still hold ids
        assert "PENDING RETENTION" in log
        assert "backup" in log and purged["run"] in log
        # counts and locations only: no id is in the result table
        text = json.dumps([r.asDict() for r in rows], default=str)
        assert not any(str(i) in text.replace(purged["run"], "") for i in IDS)

    def test_the_model_appends_the_same_result(self, project, spark, purged):
        run_dbt(
            [
                "run",
                "--select",
                "erasure_verification",
                "--vars",
                json.dumps({"erasure_request_id": purged["run"]}),
            ]
        )
        rows = latest_verification(spark, project.test_schema, purged["run"])
        assert sum(r.rows_holding_ids for r in rows if r.location_kind == "backup") == 8
        assert sum(r.rows_holding_ids for r in rows if r.location_kind == "live") == 0

    def test_after_retention_nothing_holds_an_id_and_the_pre_purge_copies_are_gone(
        self, project, spark, purged
    ):
        retention_at_zero("e_verify")
        log = verify(purged["run"])
        rows = latest_verification(spark, project.test_schema, purged["run"])
        assert rows and all(r.rows_holding_ids == 0 and r.error is None for r in rows)
        assert "ERASED" in log and "NOT ERASED" not in log
        assert {r.location_kind for r in rows} == {"live", "stale"}
        old = {r.old_location for r in purged["rows"]}
        stale = {r.location: r for r in rows if r.location_kind == "stale"}
        assert old <= set(stale)
        for location in old:
            assert stale[location].files_total == 0
        # every file that existed before the purge is gone (flat's old directory holds its live _purge_<ts>)
        for ds, paths in purged["before"]["events"].items():
            if ds != "2024-01-03":
                assert not any(catalog_files.data_files(spark, p) for p in paths), ds
        assert not any(catalog_files.data_files(spark, p) for p in purged["before"]["flat"])
        # a scheduled run after that verifies nothing again: the request is done
        run_dbt(["run", "--select", "erasure_verification"])


# The clustered partition of TestFooterSkipping: one file per insert, (label, first id, last id)
# or an explicit list of ids.  The ids are 150, 250 and 399.
CLUSTERED_IDS = (150, 250, 399)
CLUSTERED_FILES = [
    ("below", "range(0, 100)"),  # [0, 99]: skipped
    ("holds_150", "range(100, 200)"),
    ("holds_250", "range(200, 300)"),
    ("max_is_399", "range(300, 400)"),  # the id is the file's max: read
    ("above", "range(400, 500)"),  # skipped
    (
        "straddles_150",
        "(select explode(array(140L, 160L)) as id)",
    ),  # min 140 max 160 around 150: read, holds none
    ("nulls_only", "(select explode(array(cast(null as bigint), cast(null as bigint))) as id)"),  # read
    ("far_above", "range(600, 700)"),  # skipped
]


class TestFooterSkipping:
    """Files with clustered ids: the footers skip the ones that cannot hold an id, and never one
    that may (an id at a file's max, a min/max range straddling an id, a null-only file)."""

    @pytest.fixture(scope="class", params=["parquet", "orc"])
    def storage(self, request: Any) -> str:
        return request.param

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _config("e_fids.ids", "e_foot")

    @pytest.fixture(scope="class")
    def clustered(self, project: Any, spark: Any, storage: str) -> dict[str, Any]:
        for database in ("e_foot", "e_fids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        spark.sql("create table e_fids.ids (guestid bigint) using parquet")
        spark.sql("insert into e_fids.ids values " + ", ".join(f"({i})" for i in CLUSTERED_IDS))
        spark.sql(f"""
            create table e_foot.clustered (guestid bigint, payload string)
            partitioned by (p string) stored as {storage}
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        from python_hooks.catalog import tables

        named: dict[str, Any] = {}
        seen: set[str] = set()
        for label, source in CLUSTERED_FILES:
            spark.sql(f"""
                insert into e_foot.clustered partition (p = 'a')
                select /*+ COALESCE(1) */ id, 'x' from {source} as ids""")
            location = tables.partition_location(spark, "e_foot", "clustered", [["p", "a"]])
            new = [s for s in catalog_files.data_files(spark, location) if str(s.getPath()) not in seen]
            assert len(new) == 1, (label, new)
            named[label] = new[0]
            seen.add(str(new[0].getPath()))
        purge("e_foot", "e_foot")
        run = purge_runs(spark, project.test_schema)[-1]  # one project for both formats
        return {"run": run, "files": named, "location": location}

    def test_the_footers_skip_only_files_that_cannot_hold_an_id(self, project, spark, clustered, storage):
        verify(clustered["run"])
        rows = latest_verification(spark, project.test_schema, clustered["run"])
        (backup,) = [r for r in rows if r.location == clustered["location"]]
        assert backup.location_kind == "backup"
        assert backup.files_total == len(CLUSTERED_FILES)
        assert backup.files_skipped == 3  # below, above, far_above
        assert backup.files_read == len(CLUSTERED_FILES) - 3
        # nothing hidden: the same as reading every file of the partition
        every_row = spark.read.format(storage).load([str(s.getPath()) for s in clustered["files"].values()])
        assert backup.rows_holding_ids == every_row.where(every_row[0].isin(*CLUSTERED_IDS)).count() == 3

    def test_a_file_that_may_hold_an_id_is_never_skipped(self, spark, clustered, storage):
        ids = sorted(CLUSTERED_IDS)
        decided = {
            label: footers.may_hold(spark, status, storage, ["guestid"], "int", ids)
            for label, status in clustered["files"].items()
        }
        assert decided == {
            "below": False,
            "holds_150": True,
            "holds_250": True,
            "max_is_399": True,
            "above": False,
            "straddles_150": True,
            "nulls_only": True,
            "far_above": False,
        }
        # no pruning where the types do not allow it, or for a path that is not the identifier's leaf
        status = clustered["files"]["below"]
        assert footers.may_hold(spark, status, storage, ["guestid"], None, ids)
        assert footers.may_hold(spark, status, storage, ["payload"], "int", ids)
        assert footers.may_hold(spark, status, storage, ["guestid", "x"], "int", ids)


def test_nested_and_string_identifiers_use_only_their_own_leaf(spark, tmp_path):
    """A struct leaf's statistics prune by exact path (case-insensitively, as Spark resolves it);
    a repeated path (inside an array) is always read."""
    frame = spark.sql(
        "select named_struct('guestid', concat('g', cast(id as string)), 'n', id) as metadata,"
        " array(named_struct('guestid', 'zzz')) as events from range(100, 110)"
    )
    frame.coalesce(1).write.parquet(str(tmp_path / "nested"))
    (status,) = catalog_files.data_files(spark, str(tmp_path / "nested"))
    kind = footers.id_kind("string", "string")
    outside = footers.sortable_ids(["a1", "zz"], kind)
    inside = footers.sortable_ids(["g105"], kind)
    straddling = footers.sortable_ids(["g100x"], kind)  # between g100 and g109, held by no row
    assert not footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, outside)
    assert not footers.may_hold(spark, status, "parquet", ["Metadata", "GUESTID"], kind, outside)
    assert footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, inside)
    assert footers.may_hold(spark, status, "parquet", ["metadata", "guestid"], kind, straddling)
    assert footers.may_hold(spark, status, "parquet", ["events", "guestid"], kind, outside)
    assert footers.may_hold(spark, status, "parquet", ["metadata"], kind, outside)
