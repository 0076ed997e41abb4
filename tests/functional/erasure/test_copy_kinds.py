"""Every kind of location the verifier reads (python_hooks/erasure/locations.py KINDS), on one
erased request: an id planted in a location of each kind keeps it from `erased` (a copy:
`copies_remaining`; a live table: `reintroduced`, so never `live_clean` either), and the
verification names each kind with its one row; once the bytes are removed, the next verification
says `erased` again.  Each state is held to the
tests' own scan of the files (files_scan.py), outside the product's code.

The kinds: `live` (a partition of an onboarded table), `backup`, `staging` and `trash` (registered
side tables), `backup_dir` (a reaped backup under `<backup_dir>/<db>/<table>`, for var
`backup_dir` and for the directory a row of the policy seed names), `stale` (a
`stale_data_records` row), `journal` (a location only the purge journal names) and `table_dir`
(files under a table's directory that no partition references).  Then the locations whose
identifier cannot be known or compared: never counted clean.
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
from tests.functional.erasure.conftest import SEED_HEADER, ZERO, dbt_log, project_config
from tests.functional.erasure.files_scan import ids_in_files, warehouse
from tests.functional.purge.conftest import descriptor

DB = "e_kind"
IDS = "e_kind_ids.requests"
REQUEST_IDS = {4001, 4002}
KINDS = ["live", "backup", "staging", "trash", "backup_dir", "stale", "journal", "table_dir"]
# a backup_dir a row of the retention policy seed names, besides var backup_dir's
SEED_BACKUP_DIR = beside_warehouse("e_kind_seed_backup_dir")


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
    def seeds(self) -> dict[str, Any]:
        row = f"{DB}.events,,,,,,{SEED_BACKUP_DIR},,,,,,,\n"
        return {"retention": {"retention_policies.csv": SEED_HEADER + row}}

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
        seed_backup_dir = warehouse_fs.qualify(spark, SEED_BACKUP_DIR)
        for directory in (backup_dir, seed_backup_dir):
            warehouse_fs.delete(spark, directory)
        lake = {"backup_dir": backup_dir, "seed_backup_dir": seed_backup_dir, "schema": project.test_schema}
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
    def request(spark: Any, lake: dict[str, Any]) -> Any:
        """The request's row of the ledger."""
        spark.catalog.clearCache()
        return spark.sql(
            f"select * from {lake['schema']}.erasure_requests where request_id = 'REQ-K'"
        ).collect()[0]

    def status(self, spark: Any, lake: dict[str, Any]) -> tuple[str, str]:
        row = self.request(spark, lake)
        return row.status, row.progress

    @staticmethod
    def findings(spark: Any, lake: dict[str, Any]) -> list[tuple[str, str, int]]:
        """(kind, table, rows) of each location holding the request's ids in the latest verification."""
        schema = lake["schema"]
        return [
            (r[0], r[1], r[2])
            for r in spark.sql(f"""select location_kind, table_name, rows_holding_ids
                from {schema}.erasure_verification_findings where request_id = 'REQ-K' and verification_id = (
                    select max_by(verification_id, started_at) from {schema}.erasure_verification
                    where request_id = 'REQ-K')""").collect()
        ]

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
        """What the scan reads beyond the metastore and the journal: the backup_dirs (the var's
        and the seed's), the stale records' directory."""
        return [lake["backup_dir"], lake["seed_backup_dir"], f"{warehouse(spark)}/e_kind_stale"]

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
            # under the var's backup_dir, and under the one the policy seed's row names
            homes = [lake["backup_dir"], lake["seed_backup_dir"]]
            for home in homes:
                _planted(spark, f"{home}/{DB}/events/ds=a/part-00000.parquet")

            def remove_both() -> None:
                for home in homes:
                    _removed(spark, f"{home}/{DB}")

            return remove_both
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

    def test_ids_in_every_copy_kind_are_found(self, project, spark, lake):
        """One of the request's ids planted in a location of every kind at once.  The verification
        finds each, one row per kind (two for `backup_dir`: one under the var's, one under the
        directory a row of the policy seed names), and the request is `reintroduced` (a live table
        holds it again); with the live one removed, `copies_remaining`, every copy kind still
        found; with every one removed, `erased`.  The tests' own scan of the files agrees at each
        step."""
        removers = {kind: self.plant(spark, lake, kind) for kind in KINDS}
        try:
            live, copies = ids_in_files(spark, [DB], REQUEST_IDS, roots=self.roots(spark, lake))
            assert (sum(live.values()), sum(copies.values())) == (1, len(KINDS)), (live, copies)
            self.run(lake, "tag:erasure")
            assert self.status(spark, lake) == ("reintroduced", "reintroduced")
            assert self.kinds_found(spark, lake) == {kind: 1 for kind in KINDS} | {"backup_dir": 2}

            removers.pop("live")()
            live, copies = ids_in_files(spark, [DB], REQUEST_IDS, roots=self.roots(spark, lake))
            assert (live, sum(copies.values())) == ({}, len(KINDS)), (live, copies)
            self.run(lake, "tag:erasure")
            assert self.status(spark, lake) == ("copies_remaining", "copies_remaining")
            assert self.kinds_found(spark, lake) == {kind: 1 for kind in KINDS if kind != "live"} | {
                "backup_dir": 2
            }
        finally:
            for remove in removers.values():
                remove()
        assert ids_in_files(spark, [DB], REQUEST_IDS, roots=self.roots(spark, lake)) == ({}, {})
        self.run(lake, "tag:erasure")
        assert self.status(spark, lake) == ("erased", "erased")
        assert self.kinds_found(spark, lake) == {}

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

    def test_a_location_whose_identifier_cannot_be_known_is_never_clean(self, project, spark, lake):
        """A registered backup whose table is gone is read with the identifier the purge journal
        recorded for that table.  A location whose identifier cannot be known or compared is
        reported with its error, never counted clean: a live one (a string identifier against
        numeric ids) keeps the request `unverified`; a copy (the gone table's backup once no
        journal entry names its identifier) keeps it `live_clean`."""
        root = warehouse(spark)
        created = int(time.time() * 1000)
        name = f"gone_backup_{created}"
        directory = f"{root}/e_kind_side/{name}"
        _planted(spark, f"{directory}/part-00000.parquet")
        spark.sql(f"""create table {DB}.{name} (guestid bigint, page string) stored as parquet location '{directory}'
            tblproperties ('lakehouse.side_table' = 'backup', 'lakehouse.side_table.of' = '{DB}.gone',
                'lakehouse.side_table.created_at' = '{created}',
                'lakehouse.side_table.invocation_id' = 'planted-gone')""")
        intent = Intent(
            invocation_id="planted-gone", purge_ts=created, database=DB, table="gone",
            identifier_field="guestid", staging_table=f"{DB}.gone_staging_{created}",
            staging_location=f"{root}/e_kind_side/gone_staging_{created}", backup_table=f"{DB}.{name}",
            partitions=[],
        )  # fmt: skip
        journal = Journal(spark)
        journal.record_intent(intent)
        journal.mark_logged(intent)
        entry = f"{journal.root.toString()}/{intent.run}"
        onboarded = f"tblproperties ('dataset.descriptor' = '{descriptor('guestid')}')"
        spark.sql(f"create table {DB}.labels (guestid string, page string) stored as parquet {onboarded}")
        spark.sql(f"insert into {DB}.labels values ('4001', 'a label')")
        try:
            self.run(lake, "erasure_verification erasure_requests")
            row = self.request(spark, lake)
            assert (row.status, row.unread_locations_count) == ("unverified", 1), row
            assert row.missing.startswith("live locations could not be read: live ")
            assert (
                f"{DB}.labels: its identifier guestid is string and the ids are bigint: they cannot be"
                " compared safely" in row.missing
            )
            assert self.findings(spark, lake) == [("backup", "gone", 1)]

            spark.sql(f"drop table {DB}.labels")
            warehouse_fs.delete(spark, entry)
            self.run(lake, "erasure_verification erasure_requests")
            row = self.request(spark, lake)
            assert (row.status, row.unread_locations_count, row.copy_rows) == ("live_clean", 1, 0), row
            assert row.missing.startswith("copies could not be read: backup ")
            assert (
                f"the identifier of {DB}.gone is unknown (no usable dataset.descriptor): fix it with"
                f" `dbt run-operation onboard --args '{{table: {DB}.gone, identifier: <field>}}'`"
                in row.missing
            )
            assert self.findings(spark, lake) == []
        finally:
            spark.sql(f"drop table if exists {DB}.labels")
            spark.sql(f"drop table if exists {DB}.{name}")
            _removed(spark, directory)
            warehouse_fs.delete(spark, entry)
