"""A request whose ids were in a Delta Lake table is never certified while the verifier cannot read
its versions: purged and verified, it stays `unverified`, the table named as unread.  The bytes
say why: the table's older version still holds the ids (time travel)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.functional.erasure.conftest import dbt_log, fresh_request, project_config
from tests.functional.purge.conftest import descriptor

DB = "e_delta"
IDS = "e_delta_ids.requests"


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> Any:
    fresh_request(spark, (DB, "e_delta_ids"), IDS, "REQ-D", [5001])
    spark.sql(f"""create table {DB}.visits (guestid bigint, page string) using delta
        tblproperties ('delta.enableDeletionVectors' = 'true', 'dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.visits values (5001, 'a'), (7, 'b')")
    dbt_log(["seed"])
    yield
    for database in (DB, "e_delta_ids"):
        spark.sql(f"drop database if exists {database} cascade")


def run(select: str, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    return dbt_log(["run", "--select", select, "--vars", json.dumps({**base, **variables})])


class TestDeltaEvidence:
    def test_a_purged_and_verified_delta_table_is_never_counted_clean(self, project, spark, lake):
        run("purge+")
        run("tag:erasure")
        spark.catalog.clearCache()
        row = spark.sql(
            f"select * from {project.test_schema}.erasure_requests where request_id = 'REQ-D'"
        ).collect()[0]
        assert (row.status, row.purge_runs, row.unread_locations_count) == ("unverified", 1, 1), row
        assert (
            f"{DB}.visits is a Delta Lake table: the verifier does not read its versions yet, so it is never"
            " counted clean"
        ) in row.missing
        # the current version holds no id; the one before the purge still does
        assert spark.sql(f"select count(*) from {DB}.visits where guestid = 5001").collect()[0][0] == 0
        history = spark.sql(f"describe history {DB}.visits").collect()
        before = min(r.version for r in history if r.operation == "MERGE") - 1
        old = spark.sql(f"select count(*) from {DB}.visits version as of {before} where guestid = 5001")
        assert old.collect()[0][0] == 1
