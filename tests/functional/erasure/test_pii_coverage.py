"""`pii_coverage` and its data test on real tables: what coverage finds, in every database of the
metastore and not only the whitelisted ones, what it leaves alone, and the test that fails until
every finding is onboarded or excepted.

The test session shares one metastore: the databases of other tests are left out with
`pii_coverage_exclude`, which is tested that way too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from python_hooks.catalog import metastore
from tests import warehouse_fs
from tests.conftest import repo_files

DESCRIPTOR = '{"complianceSpec": {"identifierField": "%s"}}'
SIDE_TABLE = "visits_backup_1700000000000"

# a model two steps downstream of the onboarded table, through another model
GUEST_ROLLUP = """
{{ config(materialized='table') }}
select metadata.guestid as guest, count(*) as events
from {{ source('cov', 'onboarded_events') }}
group by metadata.guestid
"""
GUEST_ROLLUP_TOP = """
{{ config(materialized='table') }}
select guest, events from {{ ref('guest_rollup') }} where events > 1
"""
# downstream of it too, and never built before coverage runs: judged from the manifest
GUEST_ROLLUP_UNBUILT = """
{{ config(materialized='table') }}
select guest from {{ ref('guest_rollup') }}
"""
# downstream of the onboarded table too, but tagged with one of pii_coverage_exempt_tags
GUEST_TOTALS = """
{{ config(materialized='table', tags=['counts_only']) }}
select count(distinct metadata.guestid) as guests from {{ source('cov', 'onboarded_events') }}
"""
SOURCES_YML = """
version: 2
sources:
  - name: cov
    schema: cov
    tables:
      - name: onboarded_events
"""

EXCEPTIONS = """table_pattern,reason
cov.excepted_guests,a frozen extract kept by legal hold; deleted by its own process
"""


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        "on-run-start": ["{{ compliance.audit_on_run_start() }}"],
        "on-run-end": ["{{ compliance.audit_on_run_end(results) }}"],
        "models": {
            "compliance": {
                "+file_format": "parquet",
                "erasure": {"+tags": ["erasure"], "+materialized": "table"},
                "audit": {
                    "+tags": ["audit"],
                    "+materialized": "incremental",
                    "+incremental_strategy": "append",
                    "+full_refresh": False,
                },
            }
        },
        "seeds": {
            "compliance": {
                "+file_format": "parquet",
                "erasure": {"+column_types": {"table_pattern": "string", "reason": "string"}},
            }
        },
        "vars": {
            "purge_whitelist": "cov",
            "purge_blacklist": "",
            "compliance_id_table": "cov_ids.ids",
            "compliance_id_column": "guestid",
            "pii_column_patterns": ["*email*"],
            "pii_coverage_exempt_tags": ["purge", "retention", "audit", "erasure", "counts_only"],
            # the audit is on only where the test needs the lineage (loading it takes seconds)
            "audit_enabled": False,
            "audit_workflow_graph": False,
            "audit_openlineage": False,
        },
    }


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {
        # coverage alone: the request models read the purge's source and relations
        "erasure": {k: v for k, v in repo_files("models", "erasure").items() if not k.startswith("erasure_")},
        "audit": repo_files("models", "audit"),
        "guest_rollup.sql": GUEST_ROLLUP,
        "guest_rollup_top.sql": GUEST_ROLLUP_TOP,
        "guest_rollup_unbuilt.sql": GUEST_ROLLUP_UNBUILT,
        "guest_totals.sql": GUEST_TOTALS,
        "sources.yml": SOURCES_YML,
    }


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"erasure": {**repo_files("seeds", "erasure"), "pii_coverage_exceptions.csv": EXCEPTIONS}}


@pytest.fixture(scope="class")
def tests() -> dict[str, Any]:
    return {"erasure": repo_files("tests", "erasure")}


OWN = ("cov", "cov_ids", "cov_outside")


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any):
    """The whitelisted database `cov`: one table of each kind coverage must tell apart; and
    `cov_outside`, which the whitelist does not name."""
    for database in OWN:
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    spark.sql("create table cov_ids.ids (guestid bigint) using parquet")
    statements = [
        # onboarded: a descriptor naming a nested field
        f"""create table cov.onboarded_events (metadata struct<guestid: bigint, note: string>, page string)
            partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "metadata.guestid"}')""",
        "insert into cov.onboarded_events partition (ds = '2024-01-01') "
        "select named_struct('guestid', id % 3, 'note', 'n'), 'p' from range(10)",
        # the id column at the top, no descriptor
        "create table cov.visits (GuestId bigint, page string) stored as parquet",
        # the identifier's leaf name nested in a struct
        "create table cov.sessions (device struct<kind: string, owner: struct<guestid: bigint>>, n int) using parquet",
        # in an array of structs
        "create table cov.orders (order_id bigint, items array<struct<sku: string, guestid: bigint>>) using parquet",
        # matches pii_column_patterns only
        "create table cov.contacts (contact_email string, country string) using parquet",
        # would be a finding, but the seed excepts it
        "create table cov.excepted_guests (guestid bigint) using parquet",
        # a Delta Lake table: its schema is in its own log, not in the metastore's entry
        "create table cov.delta_visits (page string, visitor struct<guestid: bigint>) using delta",
        # onboarded, in Delta Lake
        f"""create table cov.delta_orders (guestid bigint, total double) using delta
            tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "guestid"}')""",
        # nothing that matches
        "create table cov.metrics (day string, n bigint) using parquet",
        # a registered side table of this project, with the id column: never a finding
        f"""create table cov.{SIDE_TABLE} (GuestId bigint, page string) stored as parquet
            tblproperties ('lakehouse.side_table' = 'backup', 'lakehouse.side_table.of' = 'cov.visits',
                           'lakehouse.side_table.created_at' = '1700000000000')""",
        # a view holds nothing to purge
        "create view cov.visit_pages as select GuestId, page from cov.visits",
        # outside the whitelist: a copy of ids in a database the purge never lists ...
        "create table cov_outside.campaign_hits (guestid bigint, campaign string) using parquet",
        "insert into cov_outside.campaign_hits select id % 3, 'c' from range(6)",
        # ... and a table onboarded there, which the purge never touches
        f"""create table cov_outside.loyalty (member struct<guestid: bigint>, points int) using parquet
            tblproperties ('dataset.descriptor' = '{DESCRIPTOR % "member.guestid"}')""",
    ]
    for statement in statements:
        spark.sql(statement)
    yield
    for database in OWN:
        spark.sql(f"drop database if exists {database} cascade")


def coverage(spark: Any, project: Any) -> dict[str, dict[str, Any]]:
    spark.catalog.clearCache()
    rows = spark.sql(f"select * from {project.test_schema}.pii_coverage").collect()
    return {r.finding_id: r.asDict() for r in rows}


def build_coverage(spark: Any, project: Any, expect_pass: bool = True, exclude: tuple[str, ...] = ()) -> str:
    """`dbt run --select pii_coverage`, every database but this test's left out (and `exclude`)."""
    others = [
        d.name
        for d in spark.catalog.listDatabases()
        if d.name not in OWN and d.name.lower() != project.test_schema.lower()
    ]
    variables = {"pii_coverage_exclude": ", ".join([*others, *exclude])}
    _, log = run_dbt_and_capture(
        ["run", "--select", "pii_coverage", "--vars", json.dumps(variables)], expect_pass=expect_pass
    )
    return log


def data_test(results: Any, name: str) -> Any:
    """The result of the data test `name` (the results hold the hooks' too)."""
    return next(r for r in results if r.node.name == name)


def write_exceptions(project: Any, text: str) -> None:
    write_file(text, Path(project.project_root) / "seeds" / "erasure" / "pii_coverage_exceptions.csv")
    run_dbt(["seed", "--select", "pii_coverage_exceptions", "--full-refresh"])


class TestPiiCoverage:
    def test_findings_statuses_and_the_data_test(self, project: Any, spark: Any, lake: Any) -> None:
        """Each finding, in the whitelist and outside it; never a registered side table, a view, the
        id table or a downstream node tagged with one of pii_coverage_exempt_tags.  With the audit
        off, the downstream findings are those of the last invocation the audit loaded, and the
        model warns so, naming it."""
        schema = project.test_schema.lower()
        run_dbt(["seed"])
        # builds the downstream models; the audit hooks record this invocation's lineage
        run_dbt(
            [
                "run",
                "--select",
                "guest_rollup",
                "guest_rollup_top",
                "guest_totals",
                "--vars",
                "{audit_enabled: true}",
            ]
        )
        results = json.loads((Path(project.project_root) / "target" / "run_results.json").read_text())
        lineage_invocation = results["metadata"]["invocation_id"]
        log = build_coverage(spark, project)  # the audit off, as the project's vars say
        assert "pii_coverage_exclude: " in log
        assert (
            "pii_coverage: the audit is off (var audit_enabled), so this project's dbt commands do not"
            " refresh the lineage: the downstream_of_onboarded findings of other projects' tables are as of"
            f" the last invocation the audit loaded ({lineage_invocation}). Turn the audit on to keep them"
            " current." in log
        )

        found = coverage(spark, project)
        assert sorted(found) == sorted(
            [
                "cov_outside.campaign_hits:pii_column_without_descriptor",
                "cov_outside.loyalty:onboarded_outside_whitelist",
                "cov.visits:pii_column_without_descriptor",
                "cov.sessions:pii_column_without_descriptor",
                "cov.orders:pii_column_without_descriptor",
                "cov.contacts:pii_column_without_descriptor",
                "cov.excepted_guests:pii_column_without_descriptor",
                "cov.delta_visits:pii_column_without_descriptor",
                f"{schema}.guest_rollup:downstream_of_onboarded",
                f"{schema}.guest_rollup_top:downstream_of_onboarded",
                f"{schema}.guest_rollup_unbuilt:downstream_of_onboarded",
            ]
        )
        matched = {k: v["matched_columns"] for k, v in found.items()}
        assert matched["cov.visits:pii_column_without_descriptor"] == "GuestId"
        assert matched["cov.sessions:pii_column_without_descriptor"] == "device.owner.guestid"
        assert matched["cov.orders:pii_column_without_descriptor"] == "items[].guestid"
        assert matched["cov.contacts:pii_column_without_descriptor"] == "contact_email"
        assert matched["cov.delta_visits:pii_column_without_descriptor"] == "visitor.guestid"
        # outside the whitelist: found all the same, by name and by descriptor
        assert matched["cov_outside.campaign_hits:pii_column_without_descriptor"] == "guestid"
        assert matched["cov_outside.loyalty:onboarded_outside_whitelist"] == "member.guestid"
        assert (
            "Make purge_whitelist select it"
            in found["cov_outside.loyalty:onboarded_outside_whitelist"]["action"]
        )
        assert matched[f"{schema}.guest_rollup:downstream_of_onboarded"] is None
        # never built: judged from the manifest, its columns unknown until it is
        assert not spark.catalog.tableExists(f"{schema}.guest_rollup_unbuilt")
        assert found[f"{schema}.guest_rollup_unbuilt:downstream_of_onboarded"]["matched_columns"] is None
        for name in ("guest_rollup", "guest_rollup_top", "guest_rollup_unbuilt"):
            row = found[f"{schema}.{name}:downstream_of_onboarded"]
            assert row["upstream_tables"] == "cov.onboarded_events"
            assert (row["database_name"], row["table_name"], row["table_id"]) == (
                schema,
                name,
                f"{schema}.{name}",
            )

        statuses = {k: v["status"] for k, v in found.items()}
        assert statuses.pop("cov.excepted_guests:pii_column_without_descriptor") == "excepted"
        assert set(statuses.values()) == {"onboarded_needed"}
        excepted = found["cov.excepted_guests:pii_column_without_descriptor"]
        assert excepted["exception_pattern"] == "cov.excepted_guests"
        assert excepted["exception_reason"].startswith("a frozen extract")
        assert excepted["action"] is None
        visits = found["cov.visits:pii_column_without_descriptor"]
        assert visits["exception_reason"] is None and visits["checked_at"] is not None
        assert (
            "dbt run-operation onboard --args '{table: cov.visits, identifier: GuestId}'" in visits["action"]
        )
        # table and field names only, never a value (the onboarded table holds ids 0..2)
        assert all(not str(v).isdigit() for row in found.values() for v in row.values())

        # the data test fails, naming each un-excepted table, what matched and what to do
        results, log = run_dbt_and_capture(
            ["test", "--select", "assert_pii_coverage_complete"], expect_pass=False
        )
        failed = data_test(results, "assert_pii_coverage_complete")
        assert failed.status == "fail" and failed.failures == 10
        for table, what in [
            ("cov_outside.campaign_hits", "fields guestid"),
            ("cov.visits", "fields GuestId"),
            ("cov.sessions", "fields device.owner.guestid"),
            ("cov.orders", "fields items[].guestid"),
            ("cov.contacts", "fields contact_email"),
            ("cov.delta_visits", "fields visitor.guestid"),
            (f"{schema}.guest_rollup", "downstream of cov.onboarded_events"),
            (f"{schema}.guest_rollup_top", "downstream of cov.onboarded_events"),
            (f"{schema}.guest_rollup_unbuilt", "downstream of cov.onboarded_events"),
        ]:
            line = next(x for x in log.splitlines() if f"pii_coverage: {table} (" in x)
            assert what in line and "dbt run-operation onboard" in line and "pii_coverage_exceptions" in line
        assert "pii_coverage: cov_outside.loyalty (onboarded_outside_whitelist)" in log
        assert "pii_coverage: cov.excepted_guests" not in log

        # onboard what holds the id, except what cannot be onboarded: coverage is complete
        for table, field in [
            ("cov.visits", "GuestId"),
            ("cov.sessions", "device.owner.guestid"),
            ("cov.delta_visits", "visitor.guestid"),  # a Delta table: the descriptor goes to its log
        ]:
            run_dbt(["run-operation", "onboard", "--args", json.dumps({"table": table, "identifier": field})])
        # the Delta table's descriptor is a commit of its log, where Delta's readers see it
        properties = dict(spark.sql("show tblproperties cov.delta_visits").collect())
        assert properties["dataset.descriptor"] == DESCRIPTOR % "visitor.guestid"
        (operation,) = spark.sql("describe history cov.delta_visits limit 1").select("operation").first()
        assert operation == "SET TBLPROPERTIES"
        write_exceptions(
            project,
            EXCEPTIONS
            + "cov.orders,ids only inside items[]: rewritten by the producer erasure job\n"
            + "cov.contacts,business contacts (email only) - no guest data\n"
            + f"{schema}.guest_rollup*,per-guest counts rebuilt daily from the purged source\n",
        )
        # the database outside the whitelist, left out on purpose: its findings go
        build_coverage(spark, project, exclude=("cov_outside",))
        found = coverage(spark, project)
        assert sorted(found) == sorted(
            [
                "cov.orders:pii_column_without_descriptor",
                "cov.contacts:pii_column_without_descriptor",
                "cov.excepted_guests:pii_column_without_descriptor",
                f"{schema}.guest_rollup:downstream_of_onboarded",
                f"{schema}.guest_rollup_top:downstream_of_onboarded",
                f"{schema}.guest_rollup_unbuilt:downstream_of_onboarded",
            ]
        )
        assert {v["status"] for v in found.values()} == {"excepted"}
        assert found[f"{schema}.guest_rollup_top:downstream_of_onboarded"]["exception_pattern"] == (
            f"{schema}.guest_rollup*"
        )
        results = run_dbt(["test", "--select", "assert_pii_coverage_complete"])
        assert data_test(results, "assert_pii_coverage_complete").status == "pass"

    def test_an_exception_needs_a_reason(self, project: Any, spark: Any, lake: Any) -> None:
        write_exceptions(project, EXCEPTIONS + "cov.orders,\n")
        results = run_dbt(
            ["test", "--select", "assert_pii_coverage_exceptions_have_reasons"], expect_pass=False
        )
        failed = data_test(results, "assert_pii_coverage_exceptions_have_reasons")
        assert failed.status == "fail" and failed.failures == 1
        # a row without a reason excepts nothing
        build_coverage(spark, project)
        assert (
            coverage(spark, project)["cov.orders:pii_column_without_descriptor"]["status"]
            == "onboarded_needed"
        )
        write_exceptions(project, EXCEPTIONS)
        run_dbt(["test", "--select", "assert_pii_coverage_exceptions_have_reasons"])

    def test_a_delta_table_whose_log_cannot_be_read_fails_coverage(
        self, project: Any, spark: Any, lake: Any
    ) -> None:
        """Its columns are unknown, so coverage cannot say it holds no identifier: the model fails,
        naming the table, instead of leaving it out."""
        spark.sql("create table cov.delta_broken (guestid bigint) using delta")
        (location,) = spark.sql("describe detail cov.delta_broken").select("location").first()
        warehouse_fs.delete(spark, f"{location}/_delta_log")
        try:
            log = build_coverage(spark, project, expect_pass=False)
            assert (
                "cov.delta_broken: the columns of this Delta Lake table cannot be read from its log" in log
            ), log[-3000:]
            assert "Repair the table, or drop it if it is abandoned." in log
        finally:
            metastore.session_catalog(spark).externalCatalog().dropTable("cov", "delta_broken", True, True)


def onboard(table: str, identifier: str, expect_pass: bool = True, **more: Any) -> str:
    arguments = json.dumps({"table": table, "identifier": identifier, **more})
    _, log = run_dbt_and_capture(["run-operation", "onboard", "--args", arguments], expect_pass=expect_pass)
    return log


class TestIdentifierStatistics:
    """Onboarding with `statistics: false` keeps a Delta Lake or Iceberg table's metadata free of
    its identifier's file statistics (so a purged id is not left there as a bound), and coverage
    flags such a table once they come back."""

    GUEST = 7001

    def test_onboarding_keeps_the_identifier_out_of_the_metadata(
        self, project: Any, spark: Any, lake: Any
    ) -> None:
        spark.sql(
            "create table cov.delta_stats (guestid bigint, page string, n int, ds string) using delta partitioned by (ds)"
        )
        spark.sql(
            "create table iceberg.cov.ice_stats (guestid bigint, page string) using iceberg tblproperties ('format-version' = '2')"
        )
        said = onboard("cov.delta_stats", "guestid", statistics=False)
        assert (
            "and no file statistics of its identifier in its metadata (compliance.identifier_statistics = none,"
            " delta.dataSkippingStatsColumns = page,n)"
        ) in said, said[-2000:]
        said = onboard("cov.ice_stats", "guestid", statistics=False)
        assert "write.metadata.metrics.column.guestid = none" in said, said[-2000:]
        # the settings are the formats' own, where their writers read them
        delta = {r.key: r.value for r in spark.sql("show tblproperties cov.delta_stats").collect()}
        assert (
            delta["delta.dataSkippingStatsColumns"] == "page,n" and "guestid" in delta["dataset.descriptor"]
        )
        iceberg = {r.key: r.value for r in spark.sql("show tblproperties iceberg.cov.ice_stats").collect()}
        assert iceberg["write.metadata.metrics.column.guestid"] == "none"
        # run again, nothing changes
        assert "1 table(s): 0 added, 0 changed, 1 unchanged" in onboard(
            "cov.delta_stats", "guestid", statistics=False
        )

        spark.sql(f"insert into cov.delta_stats values ({self.GUEST}, 'a', 1, 'd1'), (3, 'b', 2, 'd1')")
        spark.sql(f"insert into iceberg.cov.ice_stats values ({self.GUEST}, 'a'), (3, 'b')")
        # the bytes: no statistic of guestid in Delta's log, no bound with its encoding in a manifest
        location = spark.sql("describe detail cov.delta_stats").first().location
        stats = []
        for path in warehouse_fs.files(spark, f"{location}/_delta_log"):
            if path.endswith(".json"):
                for line in warehouse_fs.read_bytes(spark, path).decode("utf-8").splitlines():
                    add = json.loads(line).get("add")
                    if add and add.get("stats"):
                        stats.append(json.loads(add["stats"]))
        assert stats and all("guestid" not in s["minValues"] and "page" in s["minValues"] for s in stats), (
            stats
        )
        bounds = warehouse_fs.manifest_bounds(spark, "iceberg.cov.ice_stats")
        assert (
            bounds
            and (self.GUEST).to_bytes(8, "little") not in bounds
            and (self.GUEST).to_bytes(4, "little") not in bounds
        )
        # and coverage has nothing to say about either
        build_coverage(spark, project)
        found = coverage(spark, project)
        assert not [f for f in found if f.startswith(("cov.delta_stats:", "cov.ice_stats:"))], found.keys()

    def test_coverage_flags_a_table_whose_identifier_gets_statistics_again(
        self, project: Any, spark: Any, lake: Any
    ) -> None:
        spark.sql(
            "alter table cov.delta_stats set tblproperties ('delta.dataSkippingStatsColumns' = 'guestid,page')"
        )
        spark.sql(
            "alter table iceberg.cov.ice_stats set tblproperties ('write.metadata.metrics.column.guestid' = 'full')"
        )
        build_coverage(spark, project)
        found = coverage(spark, project)
        delta = found["cov.delta_stats:identifier_statistics_kept"]
        iceberg = found["cov.ice_stats:identifier_statistics_kept"]
        assert (delta["status"], delta["matched_columns"]) == ("onboarded_needed", "guestid")
        assert "(delta.dataSkippingStatsColumns lists guestid)" in delta["action"]
        assert "(write.metadata.metrics.column.guestid is full)" in iceberg["action"]
        assert (
            "dbt run-operation onboard --args '{table: cov.ice_stats, identifier: guestid, statistics: false}'"
            in iceberg["action"]
        )
        # the command the finding gives turns them off again, and the finding goes
        onboard("cov.delta_stats", "guestid", statistics=False)
        onboard("cov.ice_stats", "guestid", statistics=False)
        build_coverage(spark, project)
        assert not [f for f in coverage(spark, project) if f.endswith(":identifier_statistics_kept")]

    def test_a_sort_column_keeps_its_bounds_whatever_the_default(
        self, project: Any, spark: Any, lake: Any
    ) -> None:
        """Without the column's own setting, `write.metadata.metrics.default = none` keeps no file
        statistic, except of a column of the table's sort order: Iceberg still writes its bounds,
        and coverage says so; once the table is unsorted it keeps none, and coverage is silent."""
        table = "iceberg.cov.ice_stats"
        spark.sql(f"alter table {table} unset tblproperties ('write.metadata.metrics.column.guestid')")
        spark.sql(f"alter table {table} set tblproperties ('write.metadata.metrics.default' = 'none')")
        spark.sql(f"alter table {table} write ordered by guestid")
        guest = self.GUEST + 1
        spark.sql(f"insert into {table} values ({guest}, 'sorted')")
        # the bytes: the manifest of the sorted write holds the id as a bound
        assert guest.to_bytes(8, "little") in warehouse_fs.manifest_bounds(spark, table)
        build_coverage(spark, project)
        kept = coverage(spark, project)["cov.ice_stats:identifier_statistics_kept"]
        assert "guestid is in the table's sort order" in kept["action"], kept["action"]

        spark.sql(f"alter table {table} write unordered")
        spark.sql(f"insert into {table} values ({guest + 1}, 'unsorted')")
        bounds = warehouse_fs.manifest_bounds(spark, table)
        assert (guest + 1).to_bytes(8, "little") not in bounds and guest.to_bytes(8, "little") in bounds
        build_coverage(spark, project)
        assert "cov.ice_stats:identifier_statistics_kept" not in coverage(spark, project)
        # as onboarding leaves it
        spark.sql(f"alter table {table} unset tblproperties ('write.metadata.metrics.default')")
        onboard("cov.ice_stats", "guestid", statistics=False)

    def test_a_table_without_metadata_statistics_and_a_bad_value_are_refused(
        self, project: Any, spark: Any, lake: Any
    ) -> None:
        said = onboard("cov.metrics", "n", expect_pass=False, statistics=False)
        assert (
            "cov.metrics is a parquet table: statistics: false is for Delta Lake and Iceberg tables" in said
        ), said[-2000:]
        said = onboard("cov.delta_stats", "guestid", expect_pass=False, statistics="maybe")
        assert 'cov.delta_stats: statistics is "maybe"; give true (the default) or false' in said, said[
            -2000:
        ]
        properties = {r.key for r in spark.sql("show tblproperties cov.metrics").collect()}
        assert "dataset.descriptor" not in properties and "compliance.identifier_statistics" not in properties
