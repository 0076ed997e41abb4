"""An Iceberg table whose identifier is a string longer than its metrics keep (16 characters by
default): Iceberg writes a file's smallest id cut to 16 characters, and its largest cut and with
its last character incremented (`zzzz-guest-purge...` -> `zzzz-guest-purgf`).  After the purge of
the largest id of a file, the older snapshot's manifests hold that incremented cut and nothing
else of the id: the verifier must find it there (fastavro, outside the product, agrees).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from tests import warehouse_fs
from tests.functional.erasure.conftest import dbt_log, project_config
from tests.functional.purge.conftest import descriptor

DB = "e_ice_str"
IDS = "e_ice_str_ids.requests"
TABLE = f"iceberg.{DB}.visits"
KEPT, PURGED = "aaaa-guest-keep-000001", "zzzz-guest-purge-000001"


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    for database in (DB, "e_ice_str_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    requested = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    spark.sql(f"create table {IDS} (guestid string, request_id string, requested_at timestamp) using parquet")
    spark.sql(f"insert into {IDS} values ('{PURGED}', 'REQ-S', timestamp'{requested}')")
    spark.sql(f"""create table {TABLE} (guestid string, page string, ds string) using iceberg partitioned by (ds)
        tblproperties ('format-version' = '2', 'write.merge.mode' = 'merge-on-read',
            'dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(
        f"insert into {TABLE} select /*+ REPARTITION(1) */ * from values"
        f" ('{KEPT}', 'a', 'd1'), ('{PURGED}', 'b', 'd1') as t(guestid, page, ds)"
    )
    dbt_log(["seed"])
    yield
    spark.sql(f"drop table if exists {TABLE} purge")
    for database in (DB, "e_ice_str_ids"):
        spark.sql(f"drop database if exists {database} cascade")


class TestAStringIdentifierLongerThanItsStatistics:
    def test_the_incremented_upper_bound_of_a_purged_id_is_a_copy(self, project, spark, lake):
        variables = json.dumps({"purge_whitelist": DB, "retention_scope": DB})
        dbt_log(["run", "--select", "purge", "--vars", variables])
        assert [r.guestid for r in spark.table(TABLE).collect()] == [KEPT]
        # Iceberg's own bytes: the older manifests keep the purged id's upper bound, incremented
        bounds = warehouse_fs.manifest_bounds(spark, TABLE)
        assert b"zzzz-guest-purgf" in bounds and not any(b.startswith(b"zzzz-guest-purge") for b in bounds)
        dbt_log(["run", "--select", "tag:erasure", "--vars", variables])
        spark.catalog.clearCache()
        schema = project.test_schema
        held = {
            r.location_kind
            for r in spark.sql(f"""select location_kind from {schema}.erasure_verification_findings
                where verification_id = (select max(verification_id) from {schema}.erasure_verification_runs)""").collect()
        }
        assert held == {"iceberg_snapshot", "iceberg_metadata"}, held
        status = spark.sql(f"select status from {schema}.erasure_requests where request_id = 'REQ-S'").first()
        assert status.status == "copies_remaining", status
