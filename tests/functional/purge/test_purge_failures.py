"""Bad input, partial failure and rerun, the commit check, dry run, verification and onboarding."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from python_hooks.catalog import metastore
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.filesystem import list_dir
from python_hooks.purge import scanning
from tests import warehouse_fs
from tests.conftest import repo_files
from tests.functional.purge.conftest import (
    count,
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    onboarded_events,
    purge,
    remaining_ids,
    table_rows,
)

# Test-only, through the engine's extension point between the rewrite and the swap: a concurrent
# writer that adds a file to one partition, or a statement that fails in one table.
TOUCH_MACRO = """
{% macro lakehouse__purge_before_swap_sql(database, table, partition_pairs, old_location) %}
    {%- set statements = [] -%}
    {%- if var('purge_test_raise', '') == database ~ '.' ~ table -%}
        {%- do statements.append("select raise_error('injected failure in " ~ database ~ "." ~ table ~ "')") -%}
    {%- endif -%}
    {%- if var('purge_test_touch', '') == database ~ '.' ~ table ~ '/' ~ adapter.partition_path(partition_pairs) -%}
        {%- do statements.append("insert into " ~ compliance.table_ref(database, table) ~ " partition "
            ~ compliance.partition_clause(partition_pairs) ~ " values (4242, 'late')") -%}
    {%- endif -%}
    {{ return(statements) }}
{% endmacro %}
"""

# Test-only: a backup table that cannot be made (its statement runs in the background during the rewrite).
BAD_BACKUP_MACRO = """
{% macro lakehouse__purge_backup_table_sql(database, backup_table, table, location, properties={}) %}
    {%- if (database ~ '.' ~ table) in var('purge_test_bad_backup', '').split(',') -%}
        create table {{ compliance.table_ref(database, backup_table) }} (broken
    {%- else -%}
        {{ compliance.default__purge_backup_table_sql(database, backup_table, table, location, properties) }}
    {%- endif -%}
{% endmacro %}
"""

# A project's own rewrite that loses rows (here every row whose payload is 'lost'): what Gobblin's
# row check is for.  The row check compares the rows the rewrite wrote with the rows before minus
# the rows the scan counted, and refuses the swap.
LOSSY_REWRITE_MACRO = """
{% macro lakehouse__purge_rewrite_many_sql(database, staging_table, table, data_columns, partition_columns, partitions, identifier_path, id_database, id_table, id_column, source=none) %}
    {%- if var('purge_test_lossy', '') == database ~ '.' ~ table -%}
        {%- set source = "(select * from " ~ (source or compliance.table_ref(database, table)) ~ " where payload != 'lost')" -%}
    {%- endif -%}
    {{ compliance.default__purge_rewrite_many_sql(database, staging_table, table, data_columns, partition_columns, partitions, identifier_path, id_database, id_table, id_column, source) }}
{% endmacro %}
"""

A = [["ds", "a"]]
B = [["ds", "b"]]


def make_tables(spark):
    onboarded_events(spark, "p_fail")
    spark.sql("insert into p_fail.events partition (ds = 'a') select id, 'x' from range(1000, 1010)")
    spark.sql("insert into p_fail.events partition (ds = 'b') select id, 'x' from range(1000, 1010)")
    bad = {
        "bad_json": "{not json",
        "bad_path": descriptor("metadata.nope"),
        "bad_spec": '{"complianceSpec": {}}',
    }
    for table, value in bad.items():
        spark.sql(f"""
            create table p_fail.{table} (guestid bigint, metadata struct<g: bigint>) stored as parquet
            tblproperties ('dataset.descriptor' = '{value}')""")
        spark.sql(f"insert into p_fail.{table} values (1001, named_struct('g', 1L))")
    spark.sql(f"""
        create table p_fail.bad_type (guestid string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql("insert into p_fail.bad_type values ('1001')")


class TestPurgeFailures:
    @pytest.fixture(scope="class")
    def macros(self):
        return {
            **repo_files("macros"),
            "purge_test_touch.sql": TOUCH_MACRO,
            "purge_test_bad_backup.sql": BAD_BACKUP_MACRO,
            "purge_test_lossy.sql": LOSSY_REWRITE_MACRO,
        }

    @pytest.fixture(scope="class")
    def tables(self, project, spark, id_table):
        make_tables(spark)
        return {t: location(spark, "p_fail", t) for t in ("bad_json", "bad_path", "bad_spec", "bad_type")}

    def test_missing_id_table_or_column_stops_before_any_table(self, project, spark, tables):
        before = location(spark, "p_fail", "events", A)
        _, logs = purge("p_fail", expect_pass=False, compliance_id_table="p_ids.nope")
        assert "The id table p_ids.nope (var compliance_id_table) does not exist" in logs
        assert "Nothing was purged" in logs
        _, logs = purge("p_fail", expect_pass=False, compliance_id_column="guest_id")
        assert 'The id table p_ids.ids has no column "guest_id"' in logs
        assert "its columns are: guestid" in logs
        assert location(spark, "p_fail", "events", A) == before
        assert remaining_ids(spark, "p_fail.events") == 6

    def test_bad_patterns_and_empty_matches(self, project, spark, tables):
        _, logs = purge("p_fail.events.x", expect_pass=False)
        assert 'Var purge_whitelist has an entry "p_fail.events.x" that is not a table pattern' in logs
        assert "db, db.table, db*, db.table*" in logs

        # a typo fails the node before anything is written, naming the patterns and the databases
        def logged() -> int:
            return (
                len(log_rows(spark, project))
                if spark.catalog.tableExists(f"{project.test_schema}.purge_log")
                else 0
            )

        before = logged()
        results, logs = purge("nothing_here*", expect_pass=False, purge_blacklist="p_fail.bad*")
        assert (
            'purge_whitelist "nothing_here*" minus purge_blacklist "p_fail.bad*" matches no onboarded table'
            in logs
        )
        assert "The databases in the catalog are: " in logs and "p_fail" in logs
        assert "set purge_allow_empty: true" in logs
        assert {r.node.name: str(r.status) for r in results}["purge_verification"] == "skipped"
        assert logged() == before
        # whitelisted tables without a descriptor are not onboarded either
        spark.sql("create table if not exists p_fail.plain (guestid bigint) stored as parquet")
        _, logs = purge("p_fail.plain", expect_pass=False)
        assert 'purge_whitelist "p_fail.plain" matches no onboarded table' in logs
        # purge_allow_empty: true (any of the boolean spellings) makes it a warning
        _, logs = purge("nothing_here*", purge_allow_empty="yes")
        assert "matches no onboarded table" in logs and "a warning only" in logs

    def test_bad_tables_and_a_concurrent_write_fail_alone(self, project, spark, tables):
        _, logs = purge("p_fail", expect_pass=False, purge_test_touch="p_fail.events/ds=a")
        assert "Table p_fail.bad_json: its dataset.descriptor is not valid JSON" in logs
        assert (
            'Table p_fail.bad_path: the identifier "metadata.nope" of its dataset.descriptor is not a column'
            in logs
        )
        assert (
            "Table p_fail.bad_spec: its dataset.descriptor" in logs
            and "has no complianceSpec.identifierField" in logs
        )
        assert (
            "Table p_fail.bad_type: the identifier guestid is string but the id column p_ids.ids.guestid is bigint"
            in logs
        )
        assert "changed between the start of the rewrite and the swap" in logs
        assert "The purge failed for 5 table(s)/partition(s)" in logs
        # the bad tables are as they were
        for table, loc in tables.items():
            assert location(spark, "p_fail", table) == loc
            assert count(spark, f"select count(*) from p_fail.{table}") == 1
        # the touched partition was not swapped; the other one was
        assert location(spark, "p_fail", "events", A).endswith("/p_fail.db/events/ds=a")
        assert "/p_fail.db/events/" in location(spark, "p_fail", "events", B)
        assert not location(spark, "p_fail", "events", B).endswith("/events/ds=b")
        assert count(spark, "select count(*) from p_fail.events where ds = 'b'") == 7
        assert count(spark, "select count(*) from p_fail.events where ds = 'a'") == 11
        # the failed run is in purge_log although dbt skipped the purge_log model
        rows = last_run(log_rows(spark, project, "p_fail"))
        states = {(r.table_name, r.partition_spec): r.state for r in rows}
        assert states[("events", "ds=a")] == "FAILED" and states[("events", "ds=b")] == "COMMITTED"
        assert states[("bad_json", None)] == "FAILED"

    def test_a_rerun_finishes_the_work_without_duplicates(self, project, spark, tables):
        purge("p_fail.events")
        rows = last_run(log_rows(spark, project, "p_fail"))
        states = {r.partition_spec: r.state for r in rows}
        assert states == {"ds=a": "COMMITTED", "ds=b": "SKIPPED"}
        assert remaining_ids(spark, "p_fail.events") == 0
        # 10 + 10 rows, 3 ids in each partition, plus the concurrent writer's row
        assert count(spark, "select count(*) from p_fail.events") == 7 + 7 + 1
        assert count(spark, "select count(distinct guestid, ds) from p_fail.events") == 15
        logged = spark.sql(
            f"select invocation_id, count(*) n from {project.test_schema}.purge_log "
            "where table_name = 'events' and database_name = 'p_fail' group by invocation_id"
        ).collect()
        assert sorted(r.n for r in logged) == [2, 2]

    def test_verification_fails_when_an_id_comes_back(self, project, spark, tables):
        # into ds=a, which the last run rewrote: the verification reads again what the purge wrote
        # (ds=b was found clean by that run's scan and is not read again; the erasure live check is
        # the full scan)
        spark.sql("insert into p_fail.events partition (ds = 'a') values (1002, 'again')")
        _, logs = run_dbt_and_capture(
            [
                "run",
                "--select",
                "purge_verification",
                "--vars",
                json.dumps({"purge_whitelist": "p_fail.events"}),
            ],
            expect_pass=False,
        )
        assert "Purge verification failed" in logs
        assert "p_fail.events: 1 row(s) whose guestid is in p_ids.ids" in logs

    def test_dry_run_changes_nothing_and_says_what_would_go(self, project, spark, tables):
        spark.sql("drop database if exists p_dry cascade")
        spark.sql("create database p_dry")
        spark.sql(f"""
            create table p_dry.events (guestid bigint) partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql("insert into p_dry.events partition (ds = 'a') select id from range(1000, 1010)")
        spark.sql("insert into p_dry.events partition (ds = 'b') select id from range(5000, 5003)")
        before = location(spark, "p_dry", "events", A)
        _, logs = purge("p_dry", purge_dry_run=True)
        assert "p_dry.events ds=a: DRY_RUN, would remove 3 of 10 rows" in logs
        assert "3 row(s) would be removed" in logs
        rows = {r.partition_spec: r for r in last_run(log_rows(spark, project, "p_dry"))}
        assert (rows["ds=a"].state, rows["ds=a"].rows_purged, rows["ds=a"].dry_run) == ("DRY_RUN", 3, True)
        assert rows["ds=b"].state == "SKIPPED"
        assert location(spark, "p_dry", "events", A) == before
        assert remaining_ids(spark, "p_dry.events") == 3
        assert [r.tableName for r in spark.sql("show tables in p_dry").collect() if not r.isTemporary] == [
            "events"
        ]

    def test_onboard_writes_a_checked_descriptor(self, project, spark, tables):
        spark.sql(
            "create table p_dry.visits (metadata struct<GuestId: bigint>, page string) stored as parquet"
        )
        run_dbt(
            [
                "run-operation",
                "onboard",
                "--args",
                json.dumps({"table": "p_dry.visits", "identifier": "metadata.guestid"}),
            ]
        )
        value = spark.sql("show tblproperties p_dry.visits ('dataset.descriptor')").collect()[0].value
        assert json.loads(value) == {"complianceSpec": {"identifierField": "metadata.GuestId"}}
        _, logs = run_dbt_and_capture(
            [
                "run-operation",
                "onboard",
                "--args",
                json.dumps({"table": "p_dry.visits", "identifier": "page.id"}),
            ],
            expect_pass=False,
        )
        assert '"page.id" is not a column or struct field of p_dry.visits (columns: metadata, page)' in logs
        _, logs = run_dbt_and_capture(
            [
                "run-operation",
                "onboard",
                "--args",
                json.dumps({"table": "p_dry.visits", "identifier": "page"}),
            ],
            expect_pass=False,
        )
        assert "p_dry.visits.page is string but the id column p_ids.ids.guestid is bigint" in logs

    def test_old_locations_that_cannot_be_recorded_fail_the_node_after_the_purge(
        self, project, spark, tables
    ):
        # the stale-location records are written in the background; a failed write must not pass silently
        stale = f"{project.test_schema}.stale_data_records"
        saved = metastore.table_exists(spark, project.test_schema, "stale_data_records")
        if saved:
            spark.sql(f"alter table {stale} rename to {project.test_schema}.stale_data_records_saved")
        spark.sql(f"create table {stale} (unrelated int) using parquet")
        try:
            spark.sql("insert into p_fail.events partition (ds = 'a') values (1003, 'again')")
            old = location(spark, "p_fail", "events", A)
            _, logs = purge("p_fail.events", expect_pass=False)
        finally:
            spark.sql(f"drop table {stale}")
            if saved:
                spark.sql(f"alter table {project.test_schema}.stale_data_records_saved rename to {stale}")
        assert "Could not record the old locations of p_fail.events in " in logs
        assert "stale_data_records has the columns unrelated, not recorded_at, invocation_id" in logs
        assert "retention will not delete their old directories" in logs
        # the purge itself was done, and logged
        assert remaining_ids(spark, "p_fail.events") == 0
        assert location(spark, "p_fail", "events", A) != old
        rows = last_run(log_rows(spark, project, "p_fail"))
        states = {r.partition_spec: r.state for r in rows}
        assert states["ds=a"] == "COMMITTED" and set(states.values()) <= {"COMMITTED", "SKIPPED"}
        assert old in {r.old_location for r in rows if r.state == "COMMITTED"}

    def test_a_backup_that_cannot_be_made_stops_every_swap_and_leaves_nothing_behind(
        self, project, spark, tables
    ):
        # two partitions with ids: rewritten together, the backup made in the background meanwhile;
        # and an unpartitioned table, whose swap has no backup partition to wait for
        table = onboarded_events(spark, "p_nobackup")
        for ds in ("a", "b"):
            spark.sql(f"insert into {table} partition (ds = '{ds}') select id, 'x' from range(1000, 1010)")
        flat = "p_nobackup.flat"
        spark.sql(f"""
            create table {flat} (guestid bigint, payload string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql(f"insert into {flat} select id, 'x' from range(1000, 1010)")
        before = {ds: location(spark, "p_nobackup", "events", [["ds", ds]]) for ds in ("a", "b")}
        flat_before = (location(spark, "p_nobackup", "flat"), table_rows(spark, flat))
        rows_before = table_rows(spark, table)
        root = location(spark, "p_nobackup", "events")

        _, logs = purge("p_nobackup", expect_pass=False, purge_test_bad_backup=f"{table},{flat}")

        rows = last_run(log_rows(spark, project, "p_nobackup"))
        assert {(r.table_name, r.partition_spec): r.state for r in rows} == {
            ("events", "ds=a"): "FAILED",
            ("events", "ds=b"): "FAILED",
            ("flat", None): "FAILED",
        }
        for r in rows:
            backup = f"{r.table_name}_backup_{r.purge_ts}"
            assert r.reason.startswith(f"could not create {backup}: "), r.reason
        assert f"p_nobackup.events ds=a: FAILED: could not create events_backup_{rows[0].purge_ts}" in logs
        # the tables are as they were: same locations, every row; the rewritten copies and the side tables are gone
        assert {ds: location(spark, "p_nobackup", "events", [["ds", ds]]) for ds in ("a", "b")} == before
        assert table_rows(spark, table) == rows_before
        assert (location(spark, "p_nobackup", "flat"), table_rows(spark, flat)) == flat_before
        assert sorted(e["name"] for e in list_dir(spark, root) if not e["name"].startswith((".", "_"))) == [
            "ds=a",
            "ds=b",
        ]
        assert sorted(
            r.tableName for r in spark.sql("show tables in p_nobackup").collect() if not r.isTemporary
        ) == ["events", "flat"]
        # the next run purges them
        purge("p_nobackup")
        assert remaining_ids(spark, table) == 0 and remaining_ids(spark, flat) == 0
        assert table_rows(spark, table) == kept_rows(rows_before)
        assert table_rows(spark, flat) == kept_rows(flat_before[1])

    def test_an_error_in_one_table_fails_that_table_alone(self, project, spark, tables):
        spark.sql("drop database if exists p_iso cascade")
        spark.sql("create database p_iso")
        for table in ("a", "b", "c"):
            spark.sql(f"""
                create table p_iso.{table} (guestid bigint, payload string) partitioned by (ds string)
                stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
            spark.sql(f"insert into p_iso.{table} partition (ds = 'a') select id, 'x' from range(1000, 1010)")
        before_b = location(spark, "p_iso", "b", A)
        _, logs = purge("p_iso", expect_pass=False, purge_test_raise="p_iso.b")
        line = next(
            line for line in logs.splitlines() if "Table p_iso.b: the purge stopped with an error:" in line
        )
        assert "injected failure in p_iso.b" in line and line.endswith("; it was left as it was"), line
        assert "The purge failed for 1 table(s)/partition(s)" in logs
        # the tables before and after it were purged, and their rows reached purge_log
        rows = last_run(log_rows(spark, project, "p_iso"))
        states = {(r.table_name, r.partition_spec): r.state for r in rows}
        assert states == {("a", "ds=a"): "COMMITTED", ("b", None): "FAILED", ("c", "ds=a"): "COMMITTED"}
        assert remaining_ids(spark, "p_iso.a") == 0 and remaining_ids(spark, "p_iso.c") == 0
        # the failed table is as it was: same location, every row
        assert location(spark, "p_iso", "b", A) == before_b
        assert count(spark, "select count(*) from p_iso.b") == 10 and remaining_ids(spark, "p_iso.b") == 3
        # the next run finishes it
        purge("p_iso")
        assert remaining_ids(spark, "p_iso.b") == 0 and count(spark, "select count(*) from p_iso.b") == 7

    def test_a_delta_or_iceberg_table_fails_alone_and_is_left_byte_for_byte(self, project, spark, tables):
        """A swap of locations would cut a Delta table off its transaction log, so the purge refuses
        one registered as plain parquet (`_delta_log` under its location, as a Delta table exposed
        to Hive readers is); a metastore entry marked as Iceberg's (`table_type`) goes to Iceberg's
        catalog, which cannot read this one (no metadata): each fails alone, named, and not one of
        its files changes; the Hive table beside them is purged."""
        spark.sql("drop database if exists p_fmt cascade")
        spark.sql("create database p_fmt")
        onboarded = f"tblproperties ('dataset.descriptor' = '{descriptor('guestid')}'"
        spark.sql(f"create table p_fmt.hive (guestid bigint, payload string) stored as parquet {onboarded})")
        spark.sql(
            f"create table p_fmt.exposed (guestid bigint, payload string) stored as parquet {onboarded})"
        )
        spark.sql(
            f"create table p_fmt.ice (guestid bigint, payload string) stored as parquet {onboarded},"
            " 'table_type' = 'ICEBERG')"
        )
        for table in ("hive", "exposed", "ice"):
            spark.sql(f"insert into p_fmt.{table} select id, 'x' from range(1000, 1010)")
        log = f"{location(spark, 'p_fmt', 'exposed')}/_delta_log/00000000000000000000.json"
        warehouse_fs.write_bytes(spark, log, b'{"commitInfo": {"operation": "WRITE"}}\n')
        before = {t: warehouse_fs.tree(spark, location(spark, "p_fmt", t)) for t in ("exposed", "ice")}

        _, logs = purge("p_fmt", expect_pass=False)
        assert (
            "purge: p_fmt.exposed: FAILED: p_fmt.exposed is a Delta Lake table, which this purge does not"
            " rewrite (a swap of locations would cut it off its transaction log): it was not purged and"
            ' nothing was changed. Blacklist it (var purge_blacklist: "p_fmt.exposed")'
        ) in logs, logs[-3000:]
        # Iceberg's catalog is in the session: it is asked, and this entry has no metadata
        assert (
            "purge: p_fmt.ice: FAILED: Apache Iceberg: table p_fmt.ice: Iceberg could not read it: " in logs
        ), logs[-3000:]
        for table in ("exposed", "ice"):
            assert warehouse_fs.tree(spark, location(spark, "p_fmt", table)) == before[table], table
            assert remaining_ids(spark, f"p_fmt.{table}") == 3
        states = {(r.table_name, r.state) for r in last_run(log_rows(spark, project, "p_fmt"))}
        assert states == {("hive", "COMMITTED"), ("exposed", "FAILED"), ("ice", "FAILED")}
        assert remaining_ids(spark, "p_fmt.hive") == 0
        side_tables = [
            str(n) for n in metastore.table_names(spark, "p_fmt") if str(n).startswith(("exposed_", "ice_"))
        ]
        assert side_tables == []

        # blacklisted, as the message says: the run passes and leaves them as they are
        _, logs = purge("p_fmt", purge_blacklist="p_fmt.exposed, p_fmt.ice")
        assert "FAILED" not in logs
        assert remaining_ids(spark, "p_fmt.exposed") == 3 and remaining_ids(spark, "p_fmt.ice") == 3
        # a metastore entry marked as Iceberg's that Iceberg cannot read would fail a later test's
        # retention over the whole (shared) metastore
        spark.sql("drop database if exists p_fmt cascade")

    def test_a_rewrite_that_loses_rows_is_never_swapped(self, project, spark, tables):
        """Gobblin's row check: a rewrite that wrote fewer rows than the partition held minus the
        rows the scan found is not swapped (FAILED, with the counts), its copy is deleted, and the
        partition keeps every row; without the lossy rewrite the next run purges it."""
        table = onboarded_events(spark, "p_rows")
        # one file, so the rows it loses are in the file the rewrite reads (a file whose footers
        # rule the ids out is copied unchanged, not rewritten)
        spark.sql(f"""insert into {table} partition (ds = 'a')
            select /*+ COALESCE(1) */ * from values
                (1000L, 'x'), (1001L, 'x'), (1002L, 'x'), (1003L, 'x'), (1004L, 'x'), (1005L, 'x'),
                (1006L, 'x'), (1007L, 'x'), (1008L, 'x'), (1009L, 'x'), (7L, 'lost'), (8L, 'lost')""")
        before, place = table_rows(spark, table), location(spark, "p_rows", "events", A)

        _, logs = purge("p_rows", expect_pass=False, purge_test_lossy=table)

        (row,) = last_run(log_rows(spark, project, "p_rows"))
        assert (row.partition_spec, row.state) == ("ds=a", "FAILED")
        assert row.reason.startswith("the rewrite holds 7 rows, expected 9 (12 minus 3)"), row.reason
        assert "p_rows.events ds=a: FAILED: the rewrite holds 7 rows, expected 9" in logs
        assert location(spark, "p_rows", "events", A) == place
        assert table_rows(spark, table) == before
        root = location(spark, "p_rows", "events")
        assert sorted(e["name"] for e in list_dir(spark, root) if not e["name"].startswith((".", "_"))) == [
            "ds=a"
        ]
        purge("p_rows")
        assert table_rows(spark, table) == kept_rows(before)


class TestPartitionWithASubdirectory:
    """Spark reads a Hive partition's directory at its top level only; its rows are counted so."""

    @pytest.fixture(scope="class")
    def tables(self, project, spark, id_table):
        onboarded_events(spark, "p_nested")
        for ds in ("flat", "nested"):
            spark.sql(
                f"insert into p_nested.events partition (ds = '{ds}') select id, 'x' from range(1000, 1010)"
            )
        nested = location(spark, "p_nested", "events", [["ds", "nested"]])
        # what Hive-on-Tez leaves behind: a sub-directory Spark does not read for this partition
        spark.range(1000, 1005).selectExpr("id as guestid", "'hidden' as payload").write.parquet(
            f"{nested}/HIVE_UNION_SUBDIR_1"
        )
        return nested

    def test_rows_come_from_footers_only_where_spark_reads_every_file(self, project, spark, tables):
        flat = location(spark, "p_nested", "events", [["ds", "flat"]])
        facts = FileFacts(spark)
        listed = facts.list([flat, tables])
        assert listed[tables].subdirectories and not listed[flat].subdirectories
        # the flat partition's rows from its footers; the nested one's counted by Spark, as Spark reads it
        name = ("p_nested", "events")
        assert scanning.count_rows(spark, facts, name, "parquet", [["ds", "flat"]], listed[flat]) == 10
        assert scanning.count_rows(spark, facts, name, "parquet", [["ds", "nested"]], listed[tables]) == 10
        assert listed[tables].fingerprint() != listed[flat].fingerprint()

    def test_the_partition_is_purged_and_counted_as_spark_reads_it(self, project, spark, tables):
        purge("p_nested.events")
        rows = {r.partition_spec: r for r in last_run(log_rows(spark, project, "p_nested"))}
        assert {spec: r.state for spec, r in rows.items()} == {
            "ds=flat": "COMMITTED",
            "ds=nested": "COMMITTED",
        }
        nested = rows["ds=nested"]
        assert (nested.rows_before, nested.rows_purged, nested.rows_after) == (10, 3, 7)
        assert remaining_ids(spark, "p_nested.events") == 0
        assert count(spark, "select count(*) from p_nested.events") == 14
