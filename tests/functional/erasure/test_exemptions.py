"""Exemptions with a legal basis (seed `erasure_exemptions`): a table the law requires keeping
(GDPR Art. 17(3)) no longer keeps a request `pending` forever.

One request whose id is purged from a whitelisted table and also sits in two onboarded tables
outside the whitelist: `invoices`, exempt (a legal basis, an owner, a review date), and
`crm_export`, neither purged nor exempt.  While `crm_export` holds it the request is `pending`,
and the reason names that table and both ways out (the whitelist, or a seed row); once only the
exempt table holds it, the request is `retained_exempt` (never `erased`), naming the table, its
basis and its rows, and so does its status report.  An exemption row without a legal basis, an
owner or a review date, or whose review date has passed, exempts nothing, fails
`assert_erasure_exemptions_have_a_basis` with the problem, and the ledger says why the table is not
exempt.  A project that installs this one names its own seed in var `erasure_exemptions`, and of
its rows matching a table the most specific decides."""

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
EXEMPTIONS = f'table_pattern,legal_basis,owner,review_date\n{KEEP}.invoices,"{BASIS}",finance,2099-06-30\n'
# the seed of a project that installs this one (var erasure_exemptions names it): four rows match
# the invoices table, the most specific third
HOST_BASIS = "GDPR Art. 17(3)(e): legal claims, the invoices themselves"
HOST_EXEMPTIONS = (
    "table_pattern,legal_basis,owner,review_date\n"
    f'{KEEP}.inv*,"GDPR Art. 17(3)(b): invoice-like tables",finance,2099-02-28\n'
    f'{KEEP},"GDPR Art. 17(3)(b): the whole database",legal,2099-03-31\n'
    f'{KEEP}.invoices,"{HOST_BASIS}",claims,2099-04-30\n'
    f'{KEEP}*,"GDPR Art. 17(3)(b): every database like it",legal,2099-05-31\n'
)
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
        return {
            "retention": {"retention_policies.csv": SEED_HEADER},
            "erasure_exemptions.csv": EXEMPTIONS,
            "host_exemptions.csv": HOST_EXEMPTIONS,
        }

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
            == f"{KEEP}.invoices: 2 row(s), kept under {BASIS} (owner finance, review 2099-06-30)"
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

    def test_an_exemption_without_a_basis_an_owner_or_a_review_date_exempts_nothing(
        self, project, spark, lake
    ):
        dbt_log(["test", "--select", "assert_erasure_exemptions_have_a_basis"])
        self.reseed(
            project,
            f"{KEEP}.invoices,,finance,2099-06-30",  # no legal basis: the table that holds the ids
            f'{KEEP}.other_a,"{BASIS}",,2099-06-30',  # no owner
            f'{KEEP}.other_b,"{BASIS}",finance,',  # no review date
        )
        log = dbt_log(["test", "--select", "assert_erasure_exemptions_have_a_basis"], expect_pass=False)
        assert "assert_erasure_exemptions_have_a_basis" in log and "FAIL 3" in log
        problems = self.problems(spark, project)
        assert problems == {
            f"{KEEP}.invoices": "no legal_basis",
            f"{KEEP}.other_a": "no owner",
            f"{KEEP}.other_b": "no review_date",
        }
        run("erasure_requests")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.exempt_rows) == ("pending", 0)
        assert f"{KEEP}.invoices: 2" in row.missing
        assert (
            f"Exemptions that exempt nothing: {KEEP}.invoices: its exemption its row has no legal_basis,"
            " so it exempts nothing until completed" in row.missing
        )

    def test_a_lapsed_exemption_stops_exempting(self, project, spark, lake):
        """An exemption whose review date has passed keeps nothing: the request whose ids only its
        table holds is `pending` again (not `retained_exempt`), the ledger says the review date
        passed, and the data test fails on the row until it is renewed."""
        spark.sql(f"insert overwrite table {KEEP}.crm_export values (9, 'y')")  # only invoices holds the id
        self.reseed(project, f'{KEEP}.invoices,"{BASIS}",finance,2020-01-31')
        run("tag:erasure")
        row = ledger(spark, project.test_schema)
        assert (row.progress, row.exempt_rows, row.live_rows) == ("pending", 0, 2), row.missing
        assert (
            f"{KEEP}.invoices: its exemption its review date 2020-01-31 has passed, so it exempts nothing"
            " until it is reviewed (renew review_date, or remove the row)" in row.missing
        )
        dbt_log(["test", "--select", "assert_erasure_exemptions_have_a_basis"], expect_pass=False)
        assert self.problems(spark, project) == {
            f"{KEEP}.invoices": "the review date has passed: review the exemption and renew review_date,"
            " or remove the row"
        }
        # renewed: exempt again
        self.reseed(project, f'{KEEP}.invoices,"{BASIS}",finance,2099-01-31')
        run("erasure_requests")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.exempt_rows) == ("retained_exempt", 2)

    def test_an_installing_project_names_its_own_seed_and_the_most_specific_row_wins(
        self, project, spark, lake
    ):
        """A project that installs this one names its own seed in var `erasure_exemptions`; of the
        rows matching a table (`db*`, `db`, `db.table*`, `db.table`), the most specific decides."""
        run("erasure_requests", erasure_exemptions="host_exemptions")
        row = ledger(spark, project.test_schema)
        assert (row.status, row.live_rows, row.exempt_rows) == ("retained_exempt", 0, 2), row.missing
        assert row.exempt_holding == (
            f"{KEEP}.invoices: 2 row(s), kept under {HOST_BASIS} (owner claims, review 2099-04-30)"
        )
        assert row.missing.endswith("; they stay until the exemption ends (seed host_exemptions)")

    @staticmethod
    def reseed(project: Any, *lines: str) -> None:
        seed = Path(project.project_root) / "seeds" / "erasure_exemptions.csv"
        seed.write_text(
            "table_pattern,legal_basis,owner,review_date\n" + "".join(f"{line}\n" for line in lines)
        )
        dbt_log(["seed", "--select", "erasure_exemptions", "--full-refresh"])

    @staticmethod
    def problems(spark: Any, project: Any) -> dict[str, str]:
        """What the data test found, read from the rows it selects (store_failures is off: run its SQL)."""
        compiled = next(
            (Path(project.project_root) / "target" / "compiled").rglob(
                "assert_erasure_exemptions_have_a_basis.sql"
            )
        )
        return {r.table_pattern: r.problem for r in spark.sql(compiled.read_text()).collect()}
