"""An Apache Iceberg table after its purge: retention expires the older snapshots that still hold
the purged ids, reports the tag that pins one, and the verifier reports the table unread.

A merge-on-read table (format 2) purged by the product; its snapshot before the purge still
reads the id (time travel), and its files still hold it.  A tag on that snapshot keeps it through
a retention pass, which says so in `retention_log`; once the tag is dropped, the next pass expires
it and deletes its files, and no file under the table's location (data, delete files, manifests)
holds the id any more: the test reads the bytes itself (pyarrow for the data and delete files,
fastavro-free: the manifests' bytes, for the id's 8-byte little-endian bound).  The verifier, which
does not read Iceberg's snapshots yet, reports the table unread, so the request never reaches
`erased`.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

import pytest

from tests import warehouse_fs
from tests.functional.erasure.conftest import ZERO, dbt_log, fresh_request, project_config
from tests.functional.purge.conftest import descriptor

DB = "e_ice"
IDS = "e_ice_ids.requests"
GUEST = 8001
TABLE = f"iceberg.{DB}.visits"


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    fresh_request(spark, (DB, "e_ice_ids"), IDS, "REQ-I", [GUEST])
    spark.sql(f"""create table {TABLE} (guestid bigint, page string, ds string) using iceberg partitioned by (ds)
        tblproperties ('format-version' = '2', 'write.merge.mode' = 'merge-on-read',
            'dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(
        f"insert into {TABLE} select /*+ REPARTITION(1) */ * from values"
        f" ({GUEST}, 'a', 'd1'), (7, 'b', 'd1'), (8, 'c', 'd2') as t(guestid, page, ds)"
    )
    dbt_log(["seed"])
    yield
    spark.sql(f"drop table if exists {TABLE} purge")
    for database in (DB, "e_ice_ids"):
        spark.sql(f"drop database if exists {database} cascade")


def run(select: str, expect_pass: bool = True, **more: Any) -> str:
    variables = {"purge_whitelist": DB, "retention_scope": DB, **more}
    return dbt_log(["run", "--select", select, "--vars", json.dumps(variables)], expect_pass=expect_pass)


def location(spark: Any) -> str:
    return str(spark.sql(f"describe table extended {TABLE}").where("col_name = 'Location'").first().data_type)


def files_holding_the_id(spark: Any) -> list[str]:
    """The files under the table's location whose bytes hold the id: a data or delete file whose
    guestid column has it, or a metadata file (manifest) holding its 8-byte bound."""
    bound = struct.pack("<q", GUEST)
    found = []
    for path in warehouse_fs.files(spark, location(spark)):
        name = os.path.basename(path)
        if name.startswith("."):  # the local filesystem's checksums of the files beside them
            continue
        if name.endswith(".parquet"):
            table = warehouse_fs.read_parquet(spark, path)
            if "guestid" in table.column_names and GUEST in table.column("guestid").to_pylist():
                found.append(path)
        elif bound in warehouse_fs.read_bytes(spark, path):
            found.append(path)
    return found


def iceberg_rows(spark: Any, schema: str) -> list[Any]:
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.retention_log where kind like 'iceberg%' order by attempted_at"
    ).collect()


class TestIcebergRetention:
    def test_the_purge_leaves_the_id_in_the_older_snapshot_only(self, project, spark, lake):
        before = spark.sql(f"select snapshot_id from {TABLE}.refs where name = 'main'").first()[0]
        run("purge+")
        assert spark.sql(f"select count(*) from {TABLE} where guestid = {GUEST}").first()[0] == 0
        old = spark.sql(f"select count(*) from {TABLE} version as of {before} where guestid = {GUEST}")
        assert old.first()[0] == 1
        live = {r.file_path for r in spark.sql(f"select file_path from {TABLE}.data_files").collect()}
        holding = files_holding_the_id(spark)
        assert holding and not live & set(holding), holding
        spark.sql(f"alter table {TABLE} create tag `before_purge` as of version {before}")

    def test_retention_reports_the_tag_and_keeps_what_it_pins(self, project, spark, lake):
        run("retention+", **ZERO)
        rows = iceberg_rows(spark, project.test_schema)
        reports = [r for r in rows if r.action == "report"]
        assert len(reports) == 1 and reports[0].succeeded, rows
        assert reports[0].note.startswith("tag before_purge pins snapshot "), reports[0]
        assert f"alter table iceberg.{DB}.visits drop tag `before_purge`" in reports[0].note
        assert files_holding_the_id(spark), "the tagged snapshot's files were deleted"

    def test_without_the_tag_retention_expires_the_snapshot_and_its_files(self, project, spark, lake):
        spark.sql(f"alter table {TABLE} drop tag `before_purge`")
        run("retention+", **ZERO)
        deletes = [
            r
            for r in iceberg_rows(spark, project.test_schema)
            if r.action == "delete" and r.kind == "iceberg_snapshot" and r.files_deleted > 0
        ]
        assert deletes and all(r.succeeded and not r.dry_run for r in deletes), deletes
        assert "expire_snapshots older than " in deletes[-1].note and "retain_last 1" in deletes[-1].note
        assert files_holding_the_id(spark) == []
        snapshots = spark.sql(f"select count(*) from {TABLE}.snapshots").first()[0]
        assert snapshots == 1
        assert sorted(r.page for r in spark.table(TABLE).collect()) == ["b", "c"]

    def test_a_horizon_under_a_day_needs_the_short_retention_override(self, project, spark, lake):
        spark.sql(f"insert into {TABLE} values (9, 'd', 'd3')")
        said = run(
            "retention+",
            expect_pass=False,
            **{**ZERO, "retention_allow_short": False, "retention_min_hours": 0},
        )
        assert (
            f"a horizon of 0 hours (backup_retention_days 0) for {DB}.visits is under 24 hours, which can delete"
            " the files of an Iceberg write still in progress: raise backup_retention_days, or set"
            " retention_allow_short: true"
        ) in said
        assert spark.sql(f"select count(*) from {TABLE}.snapshots").first()[0] == 2

    def test_the_verifier_reports_the_iceberg_table_unread_never_clean(self, project, spark, lake):
        run("tag:erasure")
        row = {
            r.request_id: r
            for r in spark.sql(f"select * from {project.test_schema}.erasure_requests").collect()
        }["REQ-I"]
        assert row.status != "erased" and row.unread_locations_count >= 1, row
        assert f"{DB}.visits is an Apache Iceberg table: this verifier does not read" in row.unread_locations
