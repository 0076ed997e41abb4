"""`dbt run --select purge+` on every kind of table the issue lists, created here with Spark SQL."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from tests import warehouse_fs
from tests.conftest import WAREHOUSE
from tests.functional.purge.conftest import (
    PURGED_IDS,
    count,
    descriptor,
    file_codecs,
    identifier_of,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    remaining_ids,
    table_rows,
)

# partition values with a space, a colon and a quote: `show partitions` returns them path-escaped
HOUR_WITH_IDS = [["ds", "2024-01-01 10:00"], ["hr", "o'b"]]
HOUR_CLEAN = [["ds", "2024-01-01 10:00"], ["hr", "x y"]]
DAY_WITH_IDS = [["ds", "2024-01-02"], ["hr", "00"]]
# (table, identifier field): the onboarded tables of every kind; the others must not change at all
PURGED = [
    ("p_kinds.events", "metadata.guestid"),
    ("p_kinds.orc_events", "guestid"),
    ("p_kinds.ds_events", "guestid"),
    ("p_kinds.flat", "guestid"),
]
UNTOUCHED = ["p_kinds.plain", "p_kinds.keep_me", "p_outside.events"]


def partition_of(row: str) -> tuple[str | None, str | None]:
    values = json.loads(row)
    return (values.get("ds"), values.get("hr"))


def make_tables(spark):
    spark.sql("drop database if exists p_kinds cascade")
    spark.sql("drop database if exists p_outside cascade")
    spark.sql("create database p_kinds")
    spark.sql("create database p_outside")
    # Hive parquet, two partition levels, nested identifier
    spark.sql(f"""
        create table p_kinds.events (metadata struct<guestid: bigint, note: string>, payload string)
        partitioned by (ds string, hr string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("metadata.guestid")}', 'parquet.compression' = 'GZIP')""")
    spark.sql("""
        insert into p_kinds.events partition (ds = '2024-01-01 10:00', hr = 'o\\'b')
        select named_struct('guestid', id, 'note', concat('n', id * 7)), concat('p', id) from range(1000, 1010)""")
    spark.sql("""
        insert into p_kinds.events partition (ds = '2024-01-01 10:00', hr = 'x y')
        select named_struct('guestid', id, 'note', concat('m', id)), concat('clean', id) from range(2000, 2005)""")
    spark.sql("""
        insert into p_kinds.events partition (ds = '2024-01-02', hr = '00')
        select named_struct('guestid', case when id = 0 then null else id + 1000 end, 'note', concat('d', id)),
               concat('x', id)
        from range(0, 6)""")
    # Hive ORC, Spark datasource parquet, unpartitioned Hive parquet: top-level identifier
    spark.sql(f"""
        create table p_kinds.orc_events (guestid bigint, payload string, note string) partitioned by (ds string)
        stored as orc tblproperties ('dataset.descriptor' = '{descriptor("guestid")}', 'orc.compress' = 'ZLIB')""")
    spark.sql(
        "insert into p_kinds.orc_events partition (ds = 'a') select id, concat('o', id), concat('n', id % 3) from range(1000, 1004)"
    )
    spark.sql(
        "insert into p_kinds.orc_events partition (ds = 'b') select id, concat('o', id), null from range(3000, 3004)"
    )
    spark.sql(f"""
        create table p_kinds.ds_events (guestid bigint, payload string, note string, ds string) using parquet
        partitioned by (ds) tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(
        "insert into p_kinds.ds_events partition (ds = 'a') select id, concat('s', id), concat('n', -id) from range(1000, 1004)"
    )
    spark.sql(
        "insert into p_kinds.ds_events partition (ds = 'b') select id, concat('s', id), 'n' from range(3000, 3004)"
    )
    # every row of this partition is a listed id: its rewrite is empty
    spark.sql("insert into p_kinds.ds_events partition (ds = 'c') select id, 'x', 'y' from range(1001, 1004)")
    spark.sql(f"""
        create table p_kinds.flat (guestid bigint, payload string, note string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(
        "insert into p_kinds.flat select id, concat('f', id), concat('n', id * 11) from range(999, 1005)"
    )
    # whitelisted without a descriptor; blacklisted; outside the whitelist: all left alone
    spark.sql("create table p_kinds.plain (guestid bigint) stored as parquet")
    spark.sql("insert into p_kinds.plain values (1001)")
    for table in ("p_kinds.keep_me", "p_outside.events"):
        spark.sql(f"""
            create table {table} (guestid bigint) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql(f"insert into {table} values (1001), (5)")


class TestPurgeTables:
    @pytest.fixture(scope="class")
    def first_run(self, project, spark, id_table):
        make_tables(spark)
        before = {
            "hour_loc": location(spark, "p_kinds", "events", HOUR_WITH_IDS),
            "clean_loc": location(spark, "p_kinds", "events", HOUR_CLEAN),
            "flat_loc": location(spark, "p_kinds", "flat"),
            "table_loc": location(spark, "p_kinds", "events"),
            "kept_loc": location(spark, "p_kinds", "keep_me"),
            "outside_loc": location(spark, "p_outside", "events"),
        }
        # a reader that opened the old partition's files before the purge
        reader = spark.read.parquet(before["hour_loc"])
        before["reader_rows"] = reader.count()
        before["rows"] = {table: table_rows(spark, table) for table, _ in PURGED}
        before["untouched"] = {table: table_rows(spark, table) for table in UNTOUCHED}
        # case-insensitive; `p_outsid` (no `*`) is an exact name, so p_outside is not selected
        _, logs = purge("P_KINDS, p_outsid", purge_blacklist="p_kinds.keep*")
        return {"before": before, "logs": logs, "reader": reader}

    def test_ids_are_gone_from_every_kind_of_table(self, project, spark, first_run):
        assert remaining_ids(spark, "p_kinds.events", "metadata.guestid") == 0
        assert remaining_ids(spark, "p_kinds.orc_events") == 0
        assert remaining_ids(spark, "p_kinds.ds_events") == 0
        assert remaining_ids(spark, "p_kinds.flat") == 0
        # only the listed ids went; a NULL identifier (and the NULL id) purge nothing
        assert count(spark, "select count(*) from p_kinds.events") == 10 - 3 + 5 + 6 - 3
        assert count(spark, "select count(*) from p_kinds.events where metadata.guestid is null") == 1
        assert count(spark, "select count(*) from p_kinds.orc_events") == 8 - 3
        assert count(spark, "select count(*) from p_kinds.ds_events") == 8 - 3
        assert count(spark, "select count(*) from p_kinds.flat") == 6 - 3
        assert (
            count(spark, "select count(*) from p_kinds.events where ds = '2024-01-01 10:00' and hr = 'o\\'b'")
            == 7
        )

    def test_every_kept_row_is_unchanged_in_every_column(self, project, spark, first_run):
        """Whole rows, not counts: each table holds exactly its rows before the purge minus the rows
        of the purged ids, every column (nested fields and partition columns included) as it was."""
        wrong = {}
        for table, field in PURGED:
            before = first_run["before"]["rows"][table]
            expected = kept_rows(before, field)
            assert len(expected) < len(before), table  # the purge had something to do here
            after = table_rows(spark, table)
            if after != expected:
                wrong[table] = {
                    "missing": sorted(set(expected) - set(after)),
                    "new": sorted(set(after) - set(expected)),
                }
        for table in UNTOUCHED:
            if table_rows(spark, table) != first_run["before"]["untouched"][table]:
                wrong[table] = "changed"
        assert not wrong

    def test_backups_hold_the_old_rows_of_the_rewritten_partitions(self, project, spark, first_run):
        ts = last_run(log_rows(spark, project, "p_kinds"))[0].purge_ts
        for table, field in PURGED:
            before = first_run["before"]["rows"][table]
            if table == "p_kinds.flat":
                rewritten = before  # unpartitioned: the backup is the whole old table
            else:
                # the partitions that held a purged id, every row of them (purged ones included)
                with_ids = {partition_of(r) for r in before if identifier_of(r, field) in PURGED_IDS}
                rewritten = [r for r in before if partition_of(r) in with_ids]
            assert table_rows(spark, f"{table}_backup_{ts}") == rewritten, table

    def test_rewritten_partitions_are_swapped_to_the_new_location(self, project, spark, first_run):
        before = first_run["before"]
        ts = last_run(log_rows(spark, project, "p_kinds"))[0].purge_ts
        new = location(spark, "p_kinds", "events", HOUR_WITH_IDS)
        assert new == f"{before['table_loc']}/{ts}/ds=2024-01-01 10%3A00/hr=o%27b"
        assert location(spark, "p_kinds", "events", HOUR_CLEAN) == before["clean_loc"]
        # unpartitioned: the rewritten copy sits beside the old directory, not under it, so the
        # backup (at the old location) reads the old rows once, never the purged copy as well
        assert location(spark, "p_kinds", "flat") == f"{before['flat_loc']}__purge_{ts}"
        assert location(spark, "p_kinds", f"flat_backup_{ts}") == before["flat_loc"]
        assert count(spark, f"select count(*) from p_kinds.flat_backup_{ts}") == 6
        # the backup holds the old partition at its old location, the data not moved
        backup = f"p_kinds.events_backup_{ts}"
        assert location(spark, "p_kinds", f"events_backup_{ts}", HOUR_WITH_IDS) == before["hour_loc"]
        assert count(spark, f"select count(*) from {backup} where hr = 'o\\'b'") == 10
        # every side table is registered: what it is, whose it is, when and by which run
        for table in ("events", "orc_events", "ds_events", "flat"):
            props = {
                r.key: r.value
                for r in spark.sql(f"show tblproperties p_kinds.{table}_backup_{ts}").collect()
                if r.key.startswith("lakehouse.side_table")
            }
            assert props["lakehouse.side_table"] == "backup", table
            assert props["lakehouse.side_table.of"] == f"p_kinds.{table}"
            assert props["lakehouse.side_table.created_at"] == str(ts)
            assert len(props["lakehouse.side_table.invocation_id"]) == 36
        assert first_run["reader"].count() == before["reader_rows"] == 10
        # the rewritten files keep the table's format and its declared compression
        assert file_codecs(spark, new, "parquet") == {"GZIP"}
        orc_new = location(spark, "p_kinds", "orc_events", [["ds", "a"]])
        assert orc_new == f"{location(spark, 'p_kinds', 'orc_events')}/{ts}/ds=a"
        assert file_codecs(spark, orc_new, "orc") == {"ZLIB"}
        # a partition whose every row went points at an empty directory, not at nothing
        emptied = location(spark, "p_kinds", "ds_events", [["ds", "c"]])
        assert emptied == f"{location(spark, 'p_kinds', 'ds_events')}/{ts}/ds=c"
        assert warehouse_fs.is_dir(spark, emptied)
        assert count(spark, "select count(*) from p_kinds.ds_events where ds = 'c'") == 0
        tables = {r.tableName for r in spark.sql("show tables in p_kinds").collect() if not r.isTemporary}
        assert not [t for t in tables if "_staging_" in t]
        stale = spark.sql(
            f"select * from {project.test_schema}.stale_data_records where table_name = 'events'"
        ).collect()
        assert before["hour_loc"] in {r.location for r in stale}
        # written by the run that swapped it (one parquet file appended in the background), every field
        record = [r for r in stale if r.location == before["hour_loc"]][0]
        run = {r.invocation_id for r in log_rows(spark, project, "p_kinds") if r.purge_ts == ts}
        assert (record.database_name, record.reason, record.invocation_id in run) == (
            "p_kinds",
            "purge",
            True,
        )
        assert record.partition_spec and record.recorded_at is not None
        # ... by catalog.parquet_append (its files are named `-c000`, Spark's writer's `.c000`)
        directory = location(spark, project.test_schema, "stale_data_records")
        assert [
            name
            for name in warehouse_fs.data_files(spark, directory)
            if name.endswith("-c000.snappy.parquet")
        ]

    def test_tables_outside_the_selection_are_untouched(self, project, spark, first_run):
        before = first_run["before"]
        assert location(spark, "p_kinds", "keep_me") == before["kept_loc"]
        assert location(spark, "p_outside", "events") == before["outside_loc"]
        assert remaining_ids(spark, "p_kinds.keep_me") == 1
        assert remaining_ids(spark, "p_outside.events") == 1
        assert remaining_ids(spark, "p_kinds.plain") == 1
        logs = first_run["logs"]
        assert logs.count("p_kinds.plain is whitelisted but has no dataset.descriptor") == 1
        # the whitelist's `p_outsid` (an exact name that matches nothing) is a warning with the nearest names
        assert "purge_whitelist entry 'p_outsid' matches no table (did you mean p_outside" in logs
        others = [line for line in logs.splitlines() if "p_outsid" not in line]
        assert not [line for line in others if "keep_me" in line or "p_outside" in line]

    def test_purge_log_has_a_row_per_partition_and_no_ids(self, project, spark, first_run):
        rows = last_run(log_rows(spark, project, "p_kinds"))
        by_key = {(r.table_name, r.partition_spec): r for r in rows}
        hour = by_key[("events", "ds=2024-01-01 10%3A00/hr=o%27b")]
        assert (hour.state, hour.rows_before, hour.rows_purged, hour.rows_after) == ("COMMITTED", 10, 3, 7)
        assert hour.old_location == first_run["before"]["hour_loc"]
        assert hour.backup_table == f"p_kinds.events_backup_{hour.purge_ts}"
        assert hour.identifier_field == "metadata.guestid"
        assert hour.started_at <= hour.ended_at
        clean = by_key[("events", "ds=2024-01-01 10%3A00/hr=x y")]
        assert (clean.state, clean.rows_purged, clean.new_location) == ("SKIPPED", 0, clean.old_location)
        # a skipped partition is not read beyond the id scan: its counts are unknown, not 0
        assert (clean.rows_before, clean.rows_after) == (None, None)
        flat = by_key[("flat", None)]
        assert flat.rows_before == flat.rows_after + flat.rows_purged and flat.rows_purged > 0
        assert by_key[("flat", None)].state == "COMMITTED"
        assert {r.state for r in rows} == {"COMMITTED", "SKIPPED"}
        assert len(rows) == 3 + 2 + 3 + 1
        columns = set(rows[0].asDict())
        assert not [c for c in columns if "guestid" in c or c == "id"]
        verified = spark.sql(f"select * from {project.test_schema}.purge_verification").collect()
        assert {(r.table_id, r.remaining_rows) for r in verified} >= {
            ("p_kinds.events", 0),
            ("p_kinds.flat", 0),
        }
        # the verification reads again what the purge wrote, not every partition of every table
        committed = {}
        for r in rows:
            committed[r.table_name] = committed.get(r.table_name, 0) + (r.state == "COMMITTED")
        checked = {
            r.table_name: (r.checked, r.partitions_checked) for r in verified if r.database_name == "p_kinds"
        }
        assert checked["flat"] == ("rewritten table", None)
        assert checked["events"] == ("rewritten partitions", committed["events"]) and committed["events"] < 3
        for table, done in committed.items():
            if not done:
                assert checked[table] == ("purge scan", 0)

    def test_the_purge_node_relation_holds_this_runs_typed_rows(self, project, spark, first_run):
        relation = f"{project.test_schema}.purge"
        types = {r.col_name: r.data_type for r in spark.sql(f"describe {relation}").collect()}
        assert (types["purge_ts"], types["rows_purged"], types["dry_run"], types["started_at"]) == (
            "bigint",
            "bigint",
            "boolean",
            "timestamp",
        )
        rows = spark.sql(f"select * from {relation} where database_name = 'p_kinds'").collect()
        logged = {r.purge_log_id: r for r in last_run(log_rows(spark, project, "p_kinds"))}
        assert {r.purge_log_id for r in rows} == set(logged)
        for row in rows:
            assert row.asDict() == logged[row.purge_log_id].asDict()
            assert isinstance(row.started_at, datetime) and row.ended_at >= row.started_at
            assert abs(row.started_at - datetime.now()) < timedelta(hours=1)
            assert row.dry_run is False and isinstance(row.purge_ts, int) and row.purge_ts > 1_700_000_000_000
        hour = next(r for r in rows if r.partition_spec == "ds=2024-01-01 10%3A00/hr=o%27b")
        assert (hour.rows_before, hour.rows_purged, hour.rows_after, hour.state) == (10, 3, 7, "COMMITTED")
        assert hour.reason is None and hour.backup_table == f"p_kinds.events_backup_{hour.purge_ts}"

    def test_a_second_purge_rewrites_nothing(self, project, spark, first_run):
        # the purge node's relation as an older version left it (parquet, other columns): replaced
        relation = f"{project.test_schema}.purge"
        spark.sql(f"drop table {relation}")
        spark.sql(f"create table {relation} using parquet as select 1 as purge_log_id, 'old' as state")
        locations = {
            "hour": location(spark, "p_kinds", "events", HOUR_WITH_IDS),
            "flat": location(spark, "p_kinds", "flat"),
        }
        _, logs = purge("p_kinds", purge_blacklist="p_kinds.keep*")
        rows = last_run(log_rows(spark, project, "p_kinds"))
        assert {r.state for r in rows} == {"SKIPPED"}
        assert location(spark, "p_kinds", "events", HOUR_WITH_IDS) == locations["hour"]
        assert location(spark, "p_kinds", "flat") == locations["flat"]
        assert "0 committed" in logs
        assert count(spark, "select count(*) from p_kinds.events") == 15
        for table, field in PURGED:
            assert table_rows(spark, table) == kept_rows(first_run["before"]["rows"][table], field), table
        relation_rows = spark.sql(
            f"select state, purge_ts from {relation} where database_name = 'p_kinds'"
        ).collect()
        assert {(r.state, r.purge_ts) for r in relation_rows} == {("SKIPPED", rows[0].purge_ts)}


class TestPartitionListing:
    def test_the_one_call_listing_matches_the_catalog_object_by_object(self, project, spark):
        """metastore.partition_locations (one JVM call, CatalogReads.java) against py4j object by object."""
        from python_hooks.catalog import jvm as catalog_jvm
        from python_hooks.catalog import metastore

        spark.sql("drop database if exists p_listing cascade")
        spark.sql("create database p_listing")
        spark.sql("create table p_listing.t (x int) partitioned by (p string, q int) stored as parquet")
        values = ["a%b", "c#d", "e?f", "g=h", "é ü", "k/l", "m:n'o", "p\\\\q"]
        for number, value in enumerate(values):
            escaped = value.replace("'", "\\'")
            spark.sql(f"insert into p_listing.t partition (p = '{escaped}', q = {number}) values (1)")
        spark.sql("insert into p_listing.t partition (p, q) select 2, cast(null as string), 9")
        # a location outside the table's directory, on the warehouse's filesystem, with a space and an escape
        base = str(spark._jvm.org.apache.hadoop.fs.Path(WAREHOUSE).toUri().toString())
        base = f"file:{base}" if base.startswith("/") else base
        moved = f"{base}/p listing/a%3Ab"
        spark.sql(f"alter table p_listing.t partition (p = 'a%b', q = 0) set location '{moved}'")
        columns = ["p", "q"]
        partitions = metastore.list_partitions(spark, "p_listing", "t")
        slow = sorted(
            (metastore.partition_pairs(part, columns), catalog_jvm.path_string(spark, part.location()))
            for part in partitions
        )
        fast = sorted(metastore.partition_locations(spark, "p_listing", "t", columns))
        assert fast == slow
        # many tables in one call, each answered on its own: a missing one by its error
        many = metastore.partition_locations_of(
            spark, [("p_listing", "t", columns), ("p_listing", "missing", ["p"]), ("p_listing", "t", columns)]
        )
        assert sorted(many[0]) == slow and sorted(many[2]) == slow
        assert isinstance(many[1], str) and "missing" in many[1], many[1]
        with pytest.raises(Exception, match="p_listing.missing could not be listed"):
            metastore.partition_locations(spark, "p_listing", "missing", ["p"])
        assert len(fast) == len(values) + 1
        assert ([("p", "a%b"), ("q", "0")], moved) in fast, [f for f in fast if f[0][0][1] == "a%b"]
        assert any(pairs[0][1] == "__HIVE_DEFAULT_PARTITION__" for pairs, _ in fast)
