"""Exemptions with a legal basis (seed `erasure_exemptions`): a table the law requires keeping
(GDPR Art. 17(3)) no longer keeps a request `pending` forever.

One request whose id is purged from a whitelisted table and also sits in two onboarded tables
outside the whitelist: `invoices`, exempt (a legal basis, an owner, a review date), and
`crm_export`, neither purged nor exempt.  While `crm_export` holds it the request is `pending`,
and the reason names that table and both ways out (the whitelist, or a seed row); once only the
exempt table holds it, the request is `retained_exempt` (never `erased`), naming the table, its
basis and its rows, and so does its status report.  An exemption row without a legal basis
exempts nothing and fails `assert_erasure_exemptions_have_a_basis`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.functional.erasure.conftest import SEED_HEADER, ZERO, dbt_log, project_config
from tests.functional.purge.conftest import descriptor

DB = "e_ex"
KEEP = "e_ex_keep"
IDS = "e_ex_ids.requests"
BASIS = "GDPR Art. 17(3)(b): tax records, AO 147"
EXEMPTIONS = f'table_pattern,legal_basis,owner,review_date\n{KEEP}.invoices,"{BASIS}",finance,2027-06-30\n'
REPO = Path(__file__).resolve().parents[3]


def run(select: str, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    return dbt_log(["run", "--select", select, "--vars", json.dumps({**base, **variables})])


def ledger(spark: Any, schema: str) -> Any:
    spark.catalog.clearCache()
    return spark.sql(f"select * from {schema}.erasure_requests where request_id = 'REQ-X'").collect()[0]


class TestExemptions:
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return project_config(DB, IDS, erasure_verification_scope=f"{DB}, {KEEP}")

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, Any]:
        return {"retention": {"retention_policies.csv": SEED_HEADER}, "erasure_exemptions.csv": EXEMPTIONS}

    @pytest.fixture(scope="class")
    def tests(self) -> dict[str, Any]:
        name = "assert_erasure_exemptions_have_a_basis.sql"
        return {name: (REPO / "tests" / "erasure" / name).read_text()}

    @pytest.fixture(scope="class")
    def lake(self, project: Any, spark: Any) -> None:
        for database in (DB, KEEP, "e_ex_ids"):
            spark.sql(f"drop database if exists {database} cascade")
            spark.sql(f"create database {database}")
        requested = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
        spark.sql(
            f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet"
        )
        spark.sql(f"insert into {IDS} values (5001, 'REQ-X', timestamp'{requested}')")
        onboarded = f"tblproperties ('dataset.descriptor' = '{descriptor('guestid')}')"
        spark.sql(
            f"create table {DB}.events (guestid bigint, page string) partitioned by (ds string) stored as parquet {onboarded}"
        )
        spark.sql(f"insert into {DB}.events partition (ds) values (5001, 'p1', 'a'), (7, 'p2', 'a')")
        spark.sql(
            f"create table {KEEP}.invoices (guestid bigint, amount double) stored as parquet {onboarded}"
        )
        spark.sql(f"insert into {KEEP}.invoices values (5001, 10.0), (5001, 12.5), (8, 1.0)")
        spark.sql(
            f"create table {KEEP}.crm_export (guestid bigint, note string) stored as parquet {onboarded}"
        )
        spark.sql(f"insert into {KEEP}.crm_export values (5001, 'x'), (9, 'y')")
        dbt_log(["seed"])
        run("purge+")
        run("retention+", **ZERO)

    def test_a_table_neither_purged_nor_exempt_keeps_the_request_pending_and_is_named(
        self, project, spark, lake
    ):
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.live_rows, row.exempt_rows) == ("pending", 1, 2)
        # the table, and what resolves it: the whitelist, or a row of the exemptions seed
        assert f"{KEEP}.crm_export: 1" in row.missing and f"{KEEP}.invoices" not in row.missing
        assert "make purge_whitelist select each of them" in row.missing
        assert (
            "add a row (table_pattern, legal_basis, owner, review_date) to the seed erasure_exemptions"
            in row.missing
        )
        assert (
            row.exempt_holding
            == f"{KEEP}.invoices: 2 row(s), kept under {BASIS} (owner finance, review 2027-06-30)"
        )

    def test_ids_left_only_in_exempt_tables_are_retained_exempt_not_erased(self, project, spark, lake):
        spark.sql(f"insert overwrite table {KEEP}.crm_export values (9, 'y')")  # its id removed
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.progress, row.live_rows, row.exempt_rows) == (
            "retained_exempt",
            "retained_exempt",
            0,
            2,
        )
        assert row.fully_erased_at is None
        assert f"{KEEP}.invoices: 2 row(s), kept under {BASIS}" in row.missing
        # the document for the request names them too: a status report, not a certificate
        log = dbt_log(["run-operation", "erasure_certificate", "--args", '{"request_id": "REQ-X"}'])
        target = Path(project.project_root) / "target" / "erasure"
        assert not (target / "REQ-X.json").exists(), log
        report = json.loads((target / "REQ-X.status.json").read_text())
        assert report["request"]["status"] == "retained_exempt"
        assert report["request"]["exempt_rows"] == 2 and BASIS in report["request"]["exempt_holding"]
        assert any(BASIS in reason for reason in report["not_certified_because"])

    def test_an_exemption_without_a_legal_basis_fails_its_test_and_exempts_nothing(
        self, project, spark, lake
    ):
        dbt_log(["test", "--select", "assert_erasure_exemptions_have_a_basis"])
        seed = Path(project.project_root) / "seeds" / "erasure_exemptions.csv"
        seed.write_text(f"table_pattern,legal_basis,owner,review_date\n{KEEP}.invoices,,finance,2027-06-30\n")
        dbt_log(["seed", "--select", "erasure_exemptions", "--full-refresh"])
        log = dbt_log(["test", "--select", "assert_erasure_exemptions_have_a_basis"], expect_pass=False)
        assert "assert_erasure_exemptions_have_a_basis" in log and "FAIL 1" in log
        run("erasure_requests")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.exempt_rows) == ("pending", 0)
        assert f"{KEEP}.invoices: 2" in row.missing
