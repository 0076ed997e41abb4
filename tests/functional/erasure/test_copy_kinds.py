"""Every kind of location the verifier reads (python_hooks/erasure/locations.py KINDS), one case
each, on one erased request: ids planted there keep it from `erased` (a copy: `copies_remaining`;
a live table: `reintroduced`, so never `live_clean` either), and the verification names the kind;
once the bytes are removed, the next verification says `erased` again.  Each state is held to the
tests' own scan of the files (files_scan.py), outside the product's code.

The kinds: `live` (a partition of an onboarded table), `backup`, `staging` and `trash` (registered
side tables), `backup_dir` (a reaped backup under `<backup_dir>/<db>/<table>`), `stale` (a
`stale_data_records` row), `journal` (a location only the purge journal names) and `table_dir`
(files under a table's directory that no partition references).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pyarrow as pa
import pytest

from python_hooks.catalog.journal import Intent, Journal, PartitionSwap
from tests import warehouse_fs
from tests.conftest import beside_warehouse
from tests.functional.erasure.conftest import ZERO, dbt_log, project_config
from tests.functional.erasure.files_scan import ids_in_files, warehouse
from tests.functional.purge.conftest import descriptor

DB = "e_kind"
IDS = "e_kind_ids.requests"
REQUEST_IDS = {4001, 4002}
KINDS = ["live", "backup", "staging", "trash", "backup_dir", "stale", "journal", "table_dir"]


def _planted(spark: Any, path: str) -> str:
    """A parquet file holding one of the request's ids, written through the warehouse's filesystem."""
    warehouse_fs.write_parquet(
        spark, path, pa.table({"guestid": pa.array([4001], pa.int64()), "page": ["planted"]})
    )
    assert warehouse_fs.exists(spark, path)
    return path


def _removed(spark: Any, directory: str) -> None:
    warehouse_fs.delete(spark, directory)
    assert not warehouse_fs.files(spark, directory), directory


class TestEveryCopyKind:
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return project_config(DB, IDS)

    @pytest.fixture(scope="class")
    def lake(self, project: Any, spark: Any) -> dict[str, Any]:
        for database in (DB, "e_kind_ids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        requested = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
        spark.sql(
            f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet"
        )
        spark.sql(
            f"insert into {IDS} values (4001, 'REQ-K', timestamp'{requested}'), (4002, 'REQ-K', timestamp'{requested}')"
        )
        spark.sql(f"""
            create table {DB}.events (guestid bigint, page string) partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql(
            f"insert into {DB}.events partition (ds) values (4001, 'p1', 'a'), (7, 'p2', 'a'), (4002, 'p3', 'b'), (8, 'p4', 'b')"
        )
        dbt_log(["seed"])
        # where retention reaps backups to: beside the warehouse, on its filesystem
        backup_dir = warehouse_fs.qualify(spark, beside_warehouse("e_kind_backup_dir"))
        warehouse_fs.delete(spark, backup_dir)
        lake = {"backup_dir": backup_dir, "schema": project.test_schema}
        self.run(lake, "purge+")
        self.run(lake, "retention+", **ZERO)
        self.run(lake, "tag:erasure")
        assert self.status(spark, lake) == ("erased", "erased")
        return lake

    @staticmethod
    def run(lake: dict[str, Any], select: str, **variables: Any) -> str:
        base = {"purge_whitelist": DB, "retention_scope": DB, "backup_dir": lake["backup_dir"]}
        return dbt_log(["run", "--select", select, "--vars", json.dumps({**base, **variables})])

    @staticmethod
    def status(spark: Any, lake: dict[str, Any]) -> tuple[str, str]:
        spark.catalog.clearCache()
        row = spark.sql(
            f"select * from {lake['schema']}.erasure_requests where request_id = 'REQ-K'"
        ).collect()[0]
        return row.status, row.progress

    @staticmethod
    def kinds_found(spark: Any, lake: dict[str, Any]) -> dict[str, int]:
        spark.catalog.clearCache()
        schema = lake["schema"]
        (latest,) = spark.sql(f"""select verification_id from {schema}.erasure_verification
            where request_id = 'REQ-K' order by started_at desc, verification_id desc limit 1""").collect()
        found: dict[str, int] = {}
        for row in spark.sql(f"""select location_kind, rows_holding_ids from {schema}.erasure_verification_findings
                where verification_id = '{latest[0]}' and request_id = 'REQ-K'""").collect():  # fmt: skip
            found[row[0]] = found.get(row[0], 0) + row[1]
        return found

    @staticmethod
    def roots(spark: Any, lake: dict[str, Any]) -> list[str]:
        """What the scan reads beyond the metastore and the journal: the backup_dir, the stale
        records' directory."""
        return [lake["backup_dir"], f"{warehouse(spark)}/e_kind_stale"]

    def plant(self, spark: Any, lake: dict[str, Any], kind: str) -> Any:
        """Ids in one location of `kind`; returns what removes them."""
        root = warehouse(spark)
        home = f"{root}/{DB}.db/events"
        if kind == "live":
            spark.sql(f"insert into {DB}.events partition (ds = 'z') values (4001, 'late')")
            return lambda: spark.sql(f"alter table {DB}.events drop partition (ds = 'z')")
        if kind in ("backup", "staging", "trash"):
            name = f"events_{kind}_{int(time.time() * 1000)}"
            directory = f"{root}/e_kind_side/{name}"
            _planted(spark, f"{directory}/ds=a/part-00000.parquet")
            spark.sql(f"""create table {DB}.{name} (guestid bigint, page string) partitioned by (ds string)
                stored as parquet location '{directory}'
                tblproperties ('lakehouse.side_table' = '{kind}', 'lakehouse.side_table.of' = '{DB}.events',
                    'lakehouse.side_table.created_at' = '{int(time.time() * 1000)}',
                    'lakehouse.side_table.invocation_id' = 'planted-{kind}')""")
            spark.sql(f"alter table {DB}.{name} add partition (ds = 'a') location '{directory}/ds=a'")

            def drop() -> None:
                spark.sql(f"drop table {DB}.{name}")
                _removed(spark, directory)

            return drop
        if kind == "backup_dir":
            _planted(spark, f"{lake['backup_dir']}/{DB}/events/ds=a/part-00000.parquet")
            return lambda: _removed(spark, f"{lake['backup_dir']}/{DB}")
        if kind == "stale":
            directory = f"{root}/e_kind_stale/events_a_old"
            _planted(spark, f"{directory}/part-00000.parquet")
            table = f"{lake['schema']}.stale_data_records"
            fields = spark.table(table).schema.fields
            values = {"database_name": f"'{DB}'", "table_name": "'events'", "location": f"'{directory}'"}
            values["reason"] = "'planted'"
            select = ", ".join(
                f"cast({values.get(f.name, 'null')} as {f.dataType.simpleString()})" for f in fields
            )
            spark.sql(f"insert into {table} select {select}")

            def forget() -> None:
                spark.sql(
                    f"create table {table}_kept using parquet as select * from {table} where coalesce(reason, '') != 'planted'"
                )
                spark.sql(f"insert overwrite table {table} select * from {table}_kept")
                spark.sql(f"drop table {table}_kept")
                _removed(spark, directory)

            return forget
        if kind == "journal":
            directory = f"{root}/e_kind_copies/events_a_old"
            _planted(spark, f"{directory}/part-00000.parquet")
            intent = Intent(
                invocation_id="planted-journal", purge_ts=1700000000001, database=DB, table="events",
                identifier_field="guestid", staging_table=f"{DB}.events_staging_1700000000001",
                staging_location=f"{home}/1700000000001", backup_table=f"{DB}.events_backup_1700000000001",
                partitions=[PartitionSwap("ds=a", [["ds", "a"]], directory, f"{home}/ds=a")],
            )  # fmt: skip
            journal = Journal(spark)
            journal.record_intent(intent)
            journal.mark_logged(intent)  # a finished run's entry: no purge recovers it

            return lambda: _removed(spark, directory)
        if kind == "table_dir":
            directory = f"{home}/1700000000002"
            _planted(spark, f"{directory}/ds=a/part-00000.parquet")
            return lambda: _removed(spark, directory)
        raise AssertionError(kind)

    @pytest.mark.parametrize("kind", KINDS)
    def test_ids_in_a_copy_keep_the_request_from_erased_until_removed(self, project, spark, lake, kind):
        remove = self.plant(spark, lake, kind)
        try:
            live, copies = ids_in_files(spark, [DB], REQUEST_IDS, roots=self.roots(spark, lake))
            assert sum(live.values()) + sum(copies.values()) == 1, (live, copies)
            self.run(lake, "tag:erasure")
            status, progress = self.status(spark, lake)
            if kind == "live":
                assert live and (status, progress) == ("reintroduced", "reintroduced")
            else:
                assert copies and (status, progress) == ("copies_remaining", "copies_remaining")
            assert self.kinds_found(spark, lake) == {kind: 1}
        finally:
            remove()
        assert ids_in_files(spark, [DB], REQUEST_IDS, roots=self.roots(spark, lake)) == ({}, {})
        self.run(lake, "tag:erasure")
        assert self.status(spark, lake) == ("erased", "erased")

    def test_a_deletion_after_the_last_verification_holds_erased_back(self, project, spark, lake):
        """`erased` needs a verification that started after the last deletion of a copy: a
        registered backup holding none of the ids, verified (`erased`), then deleted by retention,
        makes it `live_clean` until the next verification."""
        name = f"events_backup_{int(time.time() * 1000)}"
        directory = f"{warehouse(spark)}/e_kind_side/{name}"
        warehouse_fs.write_parquet(
            spark,
            f"{directory}/part-0.parquet",
            pa.table({"guestid": pa.array([7], pa.int64()), "page": ["no id"]}),
        )
        spark.sql(f"""create table {DB}.{name} (guestid bigint, page string) stored as parquet location '{directory}'
            tblproperties ('lakehouse.side_table' = 'backup', 'lakehouse.side_table.of' = '{DB}.events',
                'lakehouse.side_table.created_at' = '{int(time.time() * 1000)}',
                'lakehouse.side_table.invocation_id' = 'planted-deletion')""")
        self.run(lake, "tag:erasure")
        assert self.status(spark, lake) == ("erased", "erased")
        self.run(lake, "retention+", **ZERO)
        spark.catalog.clearCache()
        row = spark.sql(
            f"select * from {lake['schema']}.erasure_requests where request_id = 'REQ-K'"
        ).collect()[0]
        assert (row.status, row.last_deletion_at > row.verified_at) == ("live_clean", True), row
        assert "a copy was deleted after the last verification" in row.missing
        self.run(lake, "tag:erasure")
        assert self.status(spark, lake) == ("erased", "erased")
