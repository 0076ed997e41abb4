"""Delta Lake and Apache Iceberg tables on the warehouse's own filesystem (LAKEHOUSE_TEST_FS: file,
hdfs or s3a; CI's storage smoke runs this file on the S3-compatible store, `make test-hdfs` on the
loopback HDFS).

A partitioned Delta table with deletion vectors and the change data feed on, and no statistics on
its identifier, and a partitioned merge-on-read Iceberg table, one request holding an id in each:
`purge+` leaves no id in a live file, the verifier finds the older versions' and snapshots'
copies, and after retention (every policy at zero) the request is `erased` and no file under
either table holds an id.  Each assertion reads the files through Hadoop (tests/warehouse_fs.py),
on the warehouse's scheme.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import struct
from typing import Any

import fastavro
import pytest

from tests import warehouse_fs
from tests.conftest import TEST_FS
from tests.functional.erasure.conftest import ZERO, dbt_log, models, project_config, seeds  # noqa: F401
from tests.functional.purge.conftest import descriptor

DB = "fs_fmt"
IDS = "fs_fmt_ids.requests"
DELTA_ID, ICEBERG_ID = 5001, 6001
SCHEME = {"file": "file:", "hdfs": "hdfs://", "s3a": "s3a://"}[TEST_FS]


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    for database in (DB, "fs_fmt_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    stamp = f"{dt.datetime.now() - dt.timedelta(days=1):%Y-%m-%d %H:%M:%S}"
    spark.sql(f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet")
    spark.sql(
        f"insert into {IDS} values ({DELTA_ID}, 'FMT-1', timestamp'{stamp}'), ({ICEBERG_ID}, 'FMT-1', timestamp'{stamp}')"
    )
    guest = descriptor("guestid")
    spark.sql(f"""create table {DB}.visits (guestid bigint, page string, ds string) using delta partitioned by (ds)
        tblproperties ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true',
            'delta.dataSkippingStatsColumns' = 'page', 'dataset.descriptor' = '{guest}')""")
    spark.sql(f"insert into {DB}.visits values ({DELTA_ID}, 'a', 'd1'), (7, 'b', 'd1'), (8, 'c', 'd2')")
    spark.sql(f"""create table iceberg.{DB}.clicks (guestid bigint, url string, ds string) using iceberg
        partitioned by (ds)
        tblproperties ('format-version' = '2', 'write.merge.mode' = 'merge-on-read', 'dataset.descriptor' = '{guest}')""")
    spark.sql(
        f"insert into iceberg.{DB}.clicks select /*+ REPARTITION(1) */ * from values"
        f" ({ICEBERG_ID}, 'u', 'd1'), (9, 'v', 'd1'), (10, 'w', 'd2') as t(guestid, url, ds)"
    )
    dbt_log(["seed"])
    yield
    spark.sql(f"drop table if exists iceberg.{DB}.clicks purge")
    for database in (DB, "fs_fmt_ids"):
        spark.sql(f"drop database if exists {database} cascade")


def run(select: str, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    return dbt_log(["run", "--select", select, "--vars", json.dumps({**base, **variables})])


def ledger(spark: Any, schema: str) -> Any:
    spark.catalog.clearCache()
    return spark.sql(f"select * from {schema}.erasure_requests where request_id = 'FMT-1'").first()


def held_by(spark: Any, schema: str) -> set[str]:
    rows = spark.sql(f"""select location_kind from {schema}.erasure_verification_findings
        where verification_id = (select max(verification_id) from {schema}.erasure_verification_runs)""")
    return {r.location_kind for r in rows.collect()}


def table_location(spark: Any, table: str) -> str:
    rows = spark.sql(f"describe table extended {table}").collect()
    return str(next(r.data_type for r in rows if str(r.col_name).strip() == "Location"))


def ids_in(spark: Any, paths: list[str]) -> set[int]:
    """The listed ids the files `paths` hold: a parquet file's guestid column, an Avro file's
    statistic equal to an id's 8-byte encoding (fastavro), a JSON file's text."""
    found: set[int] = set()
    for path in paths:
        name = os.path.basename(path)
        if name.startswith("."):  # a local filesystem's checksums
            continue
        if name.endswith(".parquet"):
            table = warehouse_fs.read_parquet(spark, path)
            if "guestid" in table.column_names:
                found |= {DELTA_ID, ICEBERG_ID} & set(table.column("guestid").to_pylist())
        elif name.endswith(".avro"):
            records = list(fastavro.reader(io.BytesIO(warehouse_fs.read_bytes(spark, path))))
            found |= {
                i
                for i in (DELTA_ID, ICEBERG_ID)
                if any(warehouse_fs.avro_holds(r, struct.pack("<q", i)) for r in records)
            }
        elif name.endswith((".json", ".crc")):
            text = warehouse_fs.read_bytes(spark, path).decode("utf-8", errors="replace")
            found |= {i for i in (DELTA_ID, ICEBERG_ID) if f'"guestid":{i}' in text.replace(" ", "")}
    return found


class TestFormatsOnTheFilesystem:
    def test_the_tables_are_on_the_filesystem_under_test(self, project, spark, lake):
        for table in (f"{DB}.visits", f"iceberg.{DB}.clicks"):
            assert table_location(spark, table).startswith(SCHEME), table

    def test_the_purge_leaves_no_id_in_a_live_file_and_the_verifier_finds_the_copies(
        self, project, spark, lake
    ):
        run("purge+")
        live = [str(p) for p in spark.table(f"{DB}.visits").inputFiles()]
        live += [
            r.file_path for r in spark.sql(f"select file_path from iceberg.{DB}.clicks.data_files").collect()
        ]
        assert live and ids_in(spark, live) == set(), live
        everything = warehouse_fs.files(spark, table_location(spark, f"{DB}.visits"))
        everything += warehouse_fs.files(spark, table_location(spark, f"iceberg.{DB}.clicks"))
        assert ids_in(spark, everything) == {DELTA_ID, ICEBERG_ID}  # the older versions' files
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert row.status == "copies_remaining" and row.live_rows == 0, row
        assert row.unread_locations_count == 0, row.unread_locations
        assert {"delta_version", "iceberg_snapshot"} <= held_by(spark, project.test_schema)

    def test_after_retention_no_file_holds_an_id_and_the_request_is_erased(self, project, spark, lake):
        run("retention+", **ZERO)
        everything = warehouse_fs.files(spark, table_location(spark, f"{DB}.visits"))
        everything += warehouse_fs.files(spark, table_location(spark, f"iceberg.{DB}.clicks"))
        assert ids_in(spark, everything) == set()
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert row.status == "erased" and row.unread_locations_count == 0, row
        assert held_by(spark, project.test_schema) == set()
