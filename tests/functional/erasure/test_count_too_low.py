"""The purge's choice of what to skip is not evidence.  When its count of the rows holding ids is
forced too low (the test wraps the scan, `python_hooks.purge.scanning.scan_table`, and drops a
partition from its result, as a wrong fast path would; the product carries no switch for it), the purge marks that partition SKIPPED and leaves its
ids where they are.  The erasure verifier, which decides what to read from the metastore and reads
every partition of every onboarded table with Spark, finds them: the request is not `live_clean`,
and the ledger names the table.  Once the wrapper is gone, the next purge and verification clear it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.functional.erasure.conftest import dbt_log, fresh_request, project_config
from tests.functional.erasure.files_scan import ids_in_files
from tests.functional.purge.conftest import descriptor

DB = "e_low"
IDS = "e_low_ids.requests"
REQUEST_IDS = {2001, 2002}


def run(select: str) -> str:
    return dbt_log(
        ["run", "--select", select, "--vars", json.dumps({"purge_whitelist": DB, "retention_scope": DB})]
    )


def ledger(spark: Any, schema: str) -> Any:
    spark.catalog.clearCache()
    return spark.sql(f"select * from {schema}.erasure_requests where request_id = 'REQ-L'").collect()[0]


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> None:
    fresh_request(spark, (DB, "e_low_ids"), IDS, "REQ-L", [2001, 2002])
    spark.sql(f"""
        create table {DB}.events (guestid bigint, payload string) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"""insert into {DB}.events partition (ds) values
        (2001, 'p1', 'a'), (7, 'p2', 'a'), (2002, 'p3', 'b'), (8, 'p4', 'b'), (9, 'p5', 'c')""")
    dbt_log(["seed"])


class TestACountTooLow:
    def test_the_verifier_finds_what_a_too_low_count_left(self, project, spark, lake, monkeypatch):
        from python_hooks.purge import scanning

        real = scanning.scan_table

        def too_low(spark: Any, table: Any, sql: dict[str, str]) -> list[list[Any]]:
            rows = real(spark, table, sql)
            return [r for r in rows if r[0] != "b"] if table.table == "events" else rows

        # the fault comes from outside: run_scans looks scan_table up when it submits each scan
        monkeypatch.setattr(scanning, "scan_table", too_low)
        log = run("purge+")
        assert f"{DB}.events ds=a: COMMITTED" in log
        spark.catalog.clearCache()
        states = {
            r.partition_spec: r.state
            for r in spark.sql(
                f"select * from {project.test_schema}.purge_log where table_name = 'events'"
            ).collect()
        }
        assert states == {"ds=a": "COMMITTED", "ds=b": "SKIPPED", "ds=c": "SKIPPED"}
        live, _ = ids_in_files(spark, [DB], REQUEST_IDS)
        assert sum(live.values()) == 1  # 2002, still in ds=b: the purge missed it

        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        # the purge's own logs say every partition is done; the bytes say otherwise
        assert (row.status, row.progress, row.live_rows) == ("pending", "pending", 1)
        assert row.live_holding == f"{DB}.events: 1"
        assert row.live_clean_at is None and row.fully_erased_at is None

        monkeypatch.undo()
        run("purge+")
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert (row.progress, row.live_rows) == ("copies_remaining", 0)
        assert ids_in_files(spark, [DB], REQUEST_IDS)[0] == {}
