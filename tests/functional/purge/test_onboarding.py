"""Onboarding many tables in one command: a yml or csv list, checked whole before any write,
idempotent, with a dry run and a report of what it changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests.functional.purge.conftest import descriptor, purge, remaining_ids

TABLES = 12
# a user's table named like a side table (`<table>_backup_<ts>`), onboarded: a live table, purged
LOOKALIKE = "p_onb.t0_backup_202401151200"


def descriptor_of(spark, table: str) -> dict | None:
    rows = [r for r in spark.sql(f"show tblproperties {table}").collect() if r.key == "dataset.descriptor"]
    return json.loads(rows[0].value) if rows else None


def onboard_tables(args: dict, expect_pass: bool = True) -> str:
    _, logs = run_dbt_and_capture(
        ["run-operation", "onboard_tables", "--args", json.dumps(args)], expect_pass=expect_pass
    )
    return logs


class TestOnboardTables:
    @pytest.fixture(scope="class")
    def tables(self, project, spark, id_table):
        spark.sql("drop database if exists p_onb cascade")
        spark.sql("create database p_onb")
        for n in range(TABLES):
            spark.sql(
                f"create table p_onb.t{n} (metadata struct<GuestId: bigint>, page string) "
                "partitioned by (ds string) stored as parquet"
            )
            spark.sql(
                f"insert into p_onb.t{n} partition (ds = 'a') values (named_struct('GuestId', 1001L), 'x'), "
                f"(named_struct('GuestId', {2000 + n}L), 'y')"
            )
        # one table already onboarded on the same field, one on another field with an extra key kept
        spark.sql(
            f"alter table p_onb.t0 set tblproperties ('dataset.descriptor' = '{descriptor('metadata.GuestId')}')"
        )
        spark.sql(
            "alter table p_onb.t1 set tblproperties ('dataset.descriptor' = "
            """'{"owner": "growth", "complianceSpec": {"identifierField": "page"}}')"""
        )
        spark.sql(f"create table {LOOKALIKE} like p_onb.t0")
        spark.sql(
            f"insert into {LOOKALIKE} partition (ds = 'a') values (named_struct('GuestId', 1002L), 'x'), "
            "(named_struct('GuestId', 3000L), 'y')"
        )
        spark.sql(
            f"alter table {LOOKALIKE} set tblproperties ('dataset.descriptor' = '{descriptor('metadata.GuestId')}')"
        )
        spark.sql("create view p_onb.v as select * from p_onb.t2")
        spark.sql("create table p_onb.texts (guestid string) stored as parquet")
        return [f"p_onb.t{n}" for n in range(TABLES)]

    def test_a_bad_entry_refuses_the_whole_list_naming_each_problem(self, project, spark, tables):
        path = Path(str(project.project_root)) / "bad_onboarding.yml"
        path.write_text(
            "tables:\n"
            "  - {table: p_onb.t2, identifier: metadata.guestid}\n"
            "  - {table: p_onb.missing, identifier: guestid}\n"
            "  - {table: 'p_onb.t3; drop', identifier: guestid}\n"
            "  - {table: p_onb.t4, identifier: metadata.nope}\n"
            "  - {table: p_onb.v, identifier: metadata.guestid}\n"
            "  - {table: p_onb.texts, identifier: guestid}\n"
            "  - {table: p_onb.t5, identifier: metadata.guestid}\n"
            "  - {table: p_onb.t5, identifier: page}\n"
        )
        logs = onboard_tables({"file": str(path)}, expect_pass=False)
        assert "onboard_tables: 6 of 8 entries refused; nothing was changed" in logs
        assert "entry 2: table p_onb.missing does not exist" in logs
        assert 'entry 3: table "p_onb.t3; drop" must be given as db.table' in logs
        assert (
            'entry 4: "metadata.nope" is not a column or struct field of p_onb.t4 (columns: metadata, page, ds)'
            in logs
        )
        assert "entry 5: p_onb.v is a view" in logs
        assert "entry 6: p_onb.texts.guestid is string but the id column p_ids.ids.guestid is bigint" in logs
        assert (
            'entry 8: p_onb.t5 is listed twice, with "metadata.guestid" (entry 7) and "page" (entry 8)'
            in logs
        )
        # the good entries were not written either
        assert descriptor_of(spark, "p_onb.t2") is None
        assert descriptor_of(spark, "p_onb.t5") is None

    def test_a_missing_file_and_a_bad_header_are_named(self, project, tables):
        assert "onboard_tables: nope.yml: no such file" in onboard_tables(
            {"file": "nope.yml"}, expect_pass=False
        )
        path = Path(str(project.project_root)) / "wrong.csv"
        path.write_text("name,field\np_onb.t2,page\n")
        logs = onboard_tables({"file": str(path)}, expect_pass=False)
        assert "its header is name,field; it needs the columns table,identifier" in logs
        logs = onboard_tables(
            {"tables": [{"table": "p_onb.t2", "identifier": "page"}, "p_onb.t3"]}, expect_pass=False
        )
        assert (
            'onboard_tables: entry 2 is "p_onb.t3", not {table: db.t, identifier: field}. Nothing was changed.'
            in logs
        )

    def test_dry_run_reports_and_writes_nothing(self, project, spark, tables):
        path = Path(str(project.project_root)) / "onboarding.csv"
        path.write_text("table,identifier\n" + "".join(f"{t},metadata.guestid\n" for t in tables))
        logs = onboard_tables({"file": str(path), "dry_run": True})
        assert (
            f"onboard: {TABLES} table(s): {TABLES - 2} added, 1 changed, 1 unchanged (dry run: nothing was written)"
            in logs
        )
        assert "onboard: p_onb.t5 would now carry dataset.descriptor" in logs
        assert "p_onb.t0 would" not in logs
        assert descriptor_of(spark, "p_onb.t5") is None
        assert descriptor_of(spark, "p_onb.t1")["complianceSpec"] == {"identifierField": "page"}

    def test_the_list_is_written_once_then_is_a_no_op(self, project, spark, tables):
        path = Path(str(project.project_root)) / "onboarding.csv"
        logs = onboard_tables({"file": str(path)})
        assert f"onboard: {TABLES} table(s): {TABLES - 2} added, 1 changed, 1 unchanged" in logs
        assert "onboard: p_onb.t1 now carries dataset.descriptor" in logs and "(it was " in logs
        for table in tables:
            assert descriptor_of(spark, table)["complianceSpec"] == {"identifierField": "metadata.GuestId"}
        # another key of an existing descriptor is kept
        assert descriptor_of(spark, "p_onb.t1")["owner"] == "growth"
        # the whitelist does not select them: said once, naming them
        assert "are not selected by purge_whitelist/purge_blacklist" in logs and "p_onb.t11" in logs

        again = onboard_tables({"file": str(path)})
        assert f"onboard: {TABLES} table(s): 0 added, 0 changed, {TABLES} unchanged" in again
        assert "now carries" not in again

    def test_the_purge_sees_the_tables_onboarded_by_the_list(self, project, spark, tables):
        """The tables the list onboarded are purged (Spark's cached relations were dropped: the
        purge reads the new descriptors), and so is an onboarded table only named like a side
        table: a table is the purge's own by its registration, never by its name."""
        _, logs = purge("p_onb.t*")
        assert f"summary: {TABLES + 1} table(s)" in logs
        for table in [*tables, LOOKALIKE]:
            assert remaining_ids(spark, table, "metadata.GuestId") == 0
            assert spark.sql(f"select count(*) from {table}").collect()[0][0] == 1
        assert f"purge: {LOOKALIKE} ds=a: COMMITTED, removed 1 of 2 rows" in logs

    def test_a_yml_mapping_with_another_field_changes_only_that_table(self, project, spark, tables):
        path = Path(str(project.project_root)) / "onboarding_map.yml"
        path.write_text("p_onb.t3: page\np_onb.t4: metadata.GuestId\n")
        logs = onboard_tables({"file": str(path), "dry_run": "no"}, expect_pass=False)
        # page is a string and the ids are bigint: refused, with the single-entry wording of each line
        assert "entry 1: p_onb.t3.page is string but the id column p_ids.ids.guestid is bigint" in logs
        spark.sql("create table p_onb.named (page string, guest_id bigint) stored as parquet")
        path.write_text("p_onb.named: GUEST_ID\np_onb.t4: metadata.GuestId\n")
        logs = onboard_tables({"file": str(path)})
        assert "onboard: 2 table(s): 1 added, 0 changed, 1 unchanged" in logs
        assert descriptor_of(spark, "p_onb.named") == {"complianceSpec": {"identifierField": "guest_id"}}
