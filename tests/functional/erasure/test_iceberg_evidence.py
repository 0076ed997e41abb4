"""An Apache Iceberg table after its purge: the verifier finds the purged id in the older
snapshot's file and in the metadata, retention expires that snapshot (after reporting the tag that
pins it), and the request reaches `erased` only then.

A merge-on-read table (format 2) purged by the product; its snapshot before the purge still
reads the id (time travel), and its files still hold it.  A tag on that snapshot keeps it through
a retention pass, which says so in `retention_log`; once the tag is dropped, the next pass expires
it and deletes its files, and no file under the table's location (data, delete files, manifests)
holds the id any more: the test reads the files itself (pyarrow for the data and delete files,
fastavro for the manifests' statistics, the id's 8-byte little-endian encoding) and agrees with the
verifier at each step.
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
from tests.functional.erasure.conftest import (
    ZERO,
    certificate_issued_and_verified,
    dbt_log,
    fresh_request,
    project_config,
)
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


def json_values(document: Any) -> Any:
    """Every key and scalar value of a parsed JSON document."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield key
            yield from json_values(value)
    elif isinstance(document, list):
        for value in document:
            yield from json_values(value)
    else:
        yield document


def files_holding_the_id(spark: Any) -> list[str]:
    """The files under the table's location that hold the id: a data or delete file whose guestid
    column has it (pyarrow), a manifest or manifest list with a statistic equal to its 8-byte
    encoding (fastavro), a metadata JSON file with a value that is the id (a number equal to it, a
    string equal to it or ending in `=<id>` as a partition path does).  Never its digits inside
    another number: a timestamp or a snapshot id may hold them by chance."""
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
        elif name.endswith(".avro"):
            if any(
                warehouse_fs.avro_holds(record, bound)
                for record in fastavro.reader(io.BytesIO(warehouse_fs.read_bytes(spark, path)))
            ):
                found.append(path)
        elif name.endswith(".json"):
            if any(
                value in (GUEST, str(GUEST)) or (isinstance(value, str) and value.endswith(f"={GUEST}"))
                for value in json_values(json.loads(warehouse_fs.read_bytes(spark, path)))
            ):
                found.append(path)
        elif str(GUEST) in warehouse_fs.read_bytes(spark, path).decode("utf-8"):
            found.append(path)
    return found


def ledger(spark: Any, schema: str) -> Any:
    spark.catalog.clearCache()
    return {r.request_id: r for r in spark.sql(f"select * from {schema}.erasure_requests").collect()}["REQ-I"]


def held_by(spark: Any, schema: str) -> set[str]:
    """The location kinds the latest verification found holding the request's id."""
    rows = spark.sql(f"""select location_kind from {schema}.erasure_verification_findings
        where verification_id = (select max(verification_id) from {schema}.erasure_verification_runs)""")
    return {r.location_kind for r in rows.collect()}


def copy_rows(spark: Any, schema: str) -> list[Any]:
    """The request's iceberg_snapshot copies in erasure_copies (rebuilt by tag:erasure)."""
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.erasure_copies where request_id = 'REQ-I' and copy_kind = 'iceberg_snapshot'"
    ).collect()


def iceberg_rows(spark: Any, schema: str) -> list[Any]:
    spark.catalog.clearCache()
    return spark.sql(
        f"select * from {schema}.retention_log where kind like 'iceberg%' order by attempted_at"
    ).collect()


def plant_position_deletes_with_rows(spark: Any, guest: int) -> str:
    """A position delete file, registered in the table through Iceberg's own API, that carries the
    row it deletes in its optional `row` struct (as some writers write them): the id is in its bytes
    while no data file, manifest or metadata file holds it."""
    import pyarrow as pa

    (data_file,) = [
        r.file_path
        for r in spark.sql(f"select file_path from {TABLE}.data_files where partition.ds = 'd1'").collect()
    ]
    path = f"{location(spark)}/data/ds=d1/planted-position-deletes.parquet"
    row = pa.array([{"guestid": guest, "page": "a", "ds": "d1"}])
    warehouse_fs.write_parquet(
        spark, path, pa.table({"file_path": [data_file], "pos": pa.array([0], pa.int64()), "row": row})
    )
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, TABLE)
    deletes = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
        .ofPositionDeletes()
        .withPath(warehouse_fs.qualify(spark, path))
        .withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
        .withFileSizeInBytes(len(warehouse_fs.read_bytes(spark, path)))
        .withRecordCount(1)
        .withPartitionPath("ds=d1")
        .build()
    )
    table.newRowDelta().addDeletes(deletes).commit()
    return path


class TestIcebergEvidence:
    def test_the_purge_leaves_the_id_in_the_older_snapshot_only(self, project, spark, lake):
        before = spark.sql(f"select snapshot_id from {TABLE}.refs where name = 'main'").first()[0]
        run("purge+")
        assert spark.sql(f"select count(*) from {TABLE} where guestid = {GUEST}").first()[0] == 0
        old = spark.sql(f"select count(*) from {TABLE} version as of {before} where guestid = {GUEST}")
        assert old.first()[0] == 1
        live = {r.file_path for r in spark.sql(f"select file_path from {TABLE}.data_files").collect()}
        holding = files_holding_the_id(spark)
        assert holding and not live & set(holding), holding
        # the verifier agrees: the older snapshot's file and the manifests hold it, no live file
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert row.status == "copies_remaining" and row.live_rows == 0, row
        assert row.unread_locations_count == 0, row.unread_locations
        assert held_by(spark, project.test_schema) == {"iceberg_snapshot", "iceberg_metadata"}
        assert any("/metadata/" in path for path in holding) and any("/data/" in path for path in holding)
        # the ledger dates the older snapshots' copy of the touched partition: the VACUUM horizon's
        # equal, backup_retention_days (7) after the purge
        (copy,) = copy_rows(spark, project.test_schema)
        assert copy.partition_spec == "ds=d1" and copy.rows_purged == 1 and copy.deleted_at is None, copy
        assert copy.will_delete_at == copy.purged_at + dt.timedelta(days=7), copy
        spark.sql(f"alter table {TABLE} create tag `before_purge` as of version {before}")

    def test_retention_reports_the_tag_and_keeps_what_it_pins(self, project, spark, lake):
        run("retention+", **ZERO)
        rows = iceberg_rows(spark, project.test_schema)
        reports = [r for r in rows if r.action == "report"]
        assert len(reports) == 1 and reports[0].succeeded, [(r.kind, r.action, r.note) for r in rows]
        assert reports[0].note.startswith("tag before_purge pins snapshot "), reports[0]
        assert f"alter table iceberg.{DB}.visits drop tag `before_purge`" in reports[0].note
        assert files_holding_the_id(spark), "the tagged snapshot's files were deleted"
        # a pass that reported a tag keeping a snapshot does not date the copy's deletion
        run("erasure_copies")
        assert [c.deleted_at for c in copy_rows(spark, project.test_schema)] == [None]

    def test_without_the_tag_retention_expires_the_snapshot_and_its_files(self, project, spark, lake):
        spark.sql(f"alter table {TABLE} drop tag `before_purge`")
        run("retention+", **ZERO)
        deletes = [
            r
            for r in iceberg_rows(spark, project.test_schema)
            if r.action == "delete" and r.kind == "iceberg_snapshot" and r.files_deleted > 0
        ]
        assert deletes and all(r.succeeded and not r.dry_run for r in deletes), deletes
        assert (
            deletes[-1].note.startswith("expire_snapshots older than 0 hours (")
            and "retain_last 1" in deletes[-1].note
        )
        assert files_holding_the_id(spark) == []
        snapshots = spark.sql(f"select count(*) from {TABLE}.snapshots").first()[0]
        assert snapshots == 1
        assert sorted(r.page for r in spark.table(TABLE).collect()) == ["b", "c"]
        # and the verifier, reading the bytes again, finds the id nowhere: the request is erased
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert row.status == "erased" and row.unread_locations_count == 0, row
        assert held_by(spark, project.test_schema) == set()
        (copy,) = copy_rows(spark, project.test_schema)
        assert copy.deleted_at == deletes[-1].attempted_at, (copy, deletes[-1])

    def test_the_certificate_names_the_snapshot_read_and_verifies(self, project, spark, lake):
        doc, markdown = certificate_issued_and_verified(project, "REQ-I")
        live = {t["table"]: t for t in doc["verification"]["live_tables"]}
        current = spark.sql(f"select snapshot_id from {TABLE}.refs where name = 'main'").first()[0]
        assert (live[f"{DB}.visits"]["iceberg_snapshot"], live[f"{DB}.visits"]["delta_version"]) == (
            current,
            None,
        )
        assert f"| {DB}.visits |  | {current} |" in markdown

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

    def test_the_verifier_reads_the_id_in_its_row_struct(self, project, spark, lake):
        """Last: the table as the tests before left it, erased of the id."""
        run("tag:erasure")
        assert ledger(spark, project.test_schema).status == "erased"
        path = plant_position_deletes_with_rows(spark, GUEST)
        assert spark.sql(f"select count(*) from {TABLE}.delete_files").first()[0] == 1
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        # the deleted row's id, in the delete file's bytes, is a copy: the request is erased no more
        assert row.status != "erased" and row.unread_locations_count == 0, row
        assert held_by(spark, project.test_schema) == {"iceberg_delete_file"}
        found = spark.sql(f"""select location, rows_holding_ids from {project.test_schema}.erasure_verification_findings
            where verification_id = (select max(verification_id) from {project.test_schema}.erasure_verification_runs)
            and location_kind = 'iceberg_delete_file'""").collect()
        assert [(r.location.rsplit("/", 1)[-1], r.rows_holding_ids) for r in found] == [
            (path.rsplit("/", 1)[-1], 1)
        ]
