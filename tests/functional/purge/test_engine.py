"""The purge engine's promises that no single feature test shows: few crossings between Jinja
and Python, a dry run that writes nothing but its log rows, a table's failure after a swap
isolated and accounted, purge_log completed from the journal after a crash, and a cancellation
that stops at a safe point."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from python_hooks.catalog.journal import Journal
from python_hooks.purge import committing, recovery, results, scanning, table_purge
from python_hooks.purge.plan import PurgePlan, ScannedPlan
from python_hooks.purge.states import State
from tests import warehouse_fs
from tests.conftest import WAREHOUSE, repo_files
from tests.functional.purge.conftest import (
    before_commit_check,
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    remaining_ids,
    table_rows,
)


def make_table(spark: Any, name: str, partitions: int, with_ids: int) -> None:
    """`name` (guestid bigint, payload string) partitioned by ds into `partitions` partitions,
    the listed ids 1001..1003 in the first `with_ids` of them."""
    spark.sql(f"drop table if exists {name}")
    spark.sql(f"""
        create table {name} (guestid bigint, payload string) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"""insert into {name} partition (ds)
        select case when p < {with_ids} and id % 5 = 0 then 1001 + (id % 3) else 10000 + id end,
               concat('x', id), format_string('d%02d', p)
        from (select id, cast(id % {partitions} as int) as p from range(0, {partitions * 10}))""")


def partitioned_and_flat(spark: Any, database: str, flat_rows: str) -> None:
    """A new database with `events` (4 partitions, 2 with ids) and an unpartitioned `flat`."""
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    make_table(spark, f"{database}.events", 4, 2)
    spark.sql(f"""create table {database}.flat (guestid bigint, payload string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {database}.flat values {flat_rows}")


def same_place(location: str) -> str:
    """A location as the catalog may spell it (`file:/x`, `file:///x/`), written one way."""
    return location.replace("file:///", "file:/").rstrip("/")


def partition_locations(spark: Any, table: str) -> dict[str, str]:
    return {
        r.partition: location(spark, *table.split("."), [p.split("=", 1) for p in r.partition.split("/")])
        for r in spark.sql(f"show partitions {table}").collect()
    }


class TestCrossings:
    """At most five calls from the purge node into the product's Python, whatever the number
    of tables and partitions: every method the adapter adds is counted, per node."""

    @pytest.fixture(scope="class")
    def calls(self, project: Any, spark: Any, id_table: str) -> Counter:
        from dbt.adapters.lakehouse.impl import LakehouseAdapter
        from dbt_common.events.contextvars import get_node_info

        spark.sql("drop database if exists p_cross cascade")
        spark.sql("create database p_cross")
        make_table(spark, "p_cross.one", 24, 4)
        for n in range(3):
            make_table(spark, f"p_cross.many_{n}", 6, 2)
        ours = {
            name
            for klass in LakehouseAdapter.__mro__
            if klass.__module__.startswith("dbt.adapters.lakehouse")
            for name, value in vars(klass).items()
            if callable(value) and not name.startswith("_") and name in LakehouseAdapter._available_
        }
        counted: Counter = Counter()
        with pytest.MonkeyPatch.context() as patch:
            for name in ours:
                original = getattr(LakehouseAdapter, name)

                def counting(
                    self: Any, *args: Any, __name: str = name, __f: Any = original, **kwargs: Any
                ) -> Any:
                    node = (get_node_info() or {}).get("unique_id", "")
                    counted[(node, __name)] += 1
                    return __f(self, *args, **kwargs)

                patch.setattr(LakehouseAdapter, name, counting)
            original_scans = scanning.run_scans

            def keeping(spark: Any, plan: Any, *args: Any) -> Any:
                before = copy.deepcopy(plan)
                scanned = original_scans(spark, plan, *args)
                self.scans.append((before, plan, scanned))
                return scanned

            patch.setattr(scanning, "run_scans", keeping)
            purge("p_cross.one", select="purge")
            purge("p_cross.many_*", select="purge")
        assert ours >= {"purge_plan", "purge_scan", "purge_execute", "fs_list", "describe_table"}
        return counted

    scans: list[tuple[Any, Any, Any]] = []

    def test_the_scan_returns_a_new_plan_and_leaves_the_given_one_as_it_was(self, calls: Counter) -> None:
        assert len(self.scans) == 2
        for before, given, scanned in self.scans:
            assert isinstance(given, PurgePlan) and isinstance(scanned, ScannedPlan)
            assert given == before  # not a field of the plan, its tables or partitions changed
            assert all(not t.todo for t in given.tables)
            assert [t.name for t in scanned.tables] == [t.name for t in given.tables]
            assert scanned.rewriting and all(t.todo and t.todo[0].rows_purged > 0 for t in scanned.rewriting)
            assert not {id(t) for t in scanned.tables} & {id(t) for t in given.tables}

    def test_at_most_five_crossings_per_purge_node(self, calls: Counter) -> None:
        per_node = Counter()
        for (node, name), n in calls.items():
            if node.endswith(".purge"):
                per_node[name] += n
        # two purge nodes ran: one table of 24 partitions (4 with ids), then three tables
        # command_selection: whether the command named the purge (a plain `dbt run` is a dry run)
        assert per_node == {"command_selection": 2, "purge_plan": 2, "purge_scan": 2, "purge_execute": 2}, (
            per_node
        )
        assert sum(per_node.values()) / 2 <= 5


def properties(spark: Any, table: str) -> dict[str, str]:
    return {r.key: r.value for r in spark.sql(f"show tblproperties {table}").collect()}


class TestDryRun:
    """`purge+` with purge_dry_run: every file and directory where a purge writes (the purged
    database, the project's schema, the journal) is as it was, apart from the declared log
    appends; tables, their properties, partitions and locations are equal.  (Those directories,
    not the whole warehouse: on the cluster target other test processes share it.)"""

    def test_a_dry_run_writes_nothing_but_its_log_rows(self, project: Any, spark: Any, id_table: str) -> None:
        partitioned_and_flat(spark, "p_dry2", "(1001, 'a'), (5, 'b')")
        purge("p_dry2", select="purge")  # the log tables exist: a dry run appends to them only
        spark.sql("insert into p_dry2.events partition (ds = 'd00') values (1002, 'again')")
        spark.sql("insert into p_dry2.flat values (1003, 'again')")
        walked = [
            spark.catalog.getDatabase("p_dry2").locationUri,
            spark.catalog.getDatabase(project.test_schema).locationUri,
            f"{WAREHOUSE}/_lakehouse_journal",
        ]

        def walk() -> dict[str, str]:
            """Each walked directory's tree, keyed `<n>:<path>`; of the journal, p_dry2's entries only."""
            return {
                f"{n}:{k}": v
                for n, root in enumerate(walked)
                for k, v in warehouse_fs.tree(spark, root).items()
                if n != 2 or "/p_dry2." in f"/{k}"
            }

        before = walk()
        assert any(k.startswith("0:events/") for k in before) and any(k.startswith("2:") for k in before)
        rows = {t: table_rows(spark, f"p_dry2.{t}") for t in ("events", "flat")}
        props = {t: properties(spark, f"p_dry2.{t}") for t in ("events", "flat")}
        places = partition_locations(spark, "p_dry2.events")
        tables = sorted(r.tableName for r in spark.sql("show tables in p_dry2").collect())

        _, logs = purge("p_dry2", purge_dry_run=True)

        assert "p_dry2.events ds=d00: DRY_RUN, would remove 1 of" in logs
        assert "purge (dry run): the statements a purge would run, none of them run:" in logs
        after = walk()
        appended = {"purge_log", "purge", "retention_log", "retention", "purge_verification"}
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        outside_logs = [k for k in changed if not (k.startswith("1:") and k[2:].split("/")[0] in appended)]
        assert not outside_logs, outside_logs
        assert {t: table_rows(spark, f"p_dry2.{t}") for t in ("events", "flat")} == rows
        assert {t: properties(spark, f"p_dry2.{t}") for t in ("events", "flat")} == props
        assert partition_locations(spark, "p_dry2.events") == places
        assert sorted(r.tableName for r in spark.sql("show tables in p_dry2").collect()) == tables
        states = {
            (r.table_name, r.partition_spec): r.state for r in last_run(log_rows(spark, project, "p_dry2"))
        }
        assert states[("events", "ds=d00")] == "DRY_RUN" and states[("flat", None)] == "DRY_RUN"

    def test_a_run_that_does_not_name_the_purge_deletes_nothing_and_says_the_command(
        self, project: Any, spark: Any, id_table: str
    ) -> None:
        """A plain `dbt run` (no --select: every node, the purge too) and one whose selection
        reaches the purge only through a wildcard are dry runs that print the command that purges."""
        spark.sql("drop database if exists p_plain cascade")
        spark.sql("create database p_plain")
        make_table(spark, "p_plain.events", 3, 2)
        table_dir = location(spark, "p_plain", "events")
        before = warehouse_fs.tree(spark, table_dir)
        rows = table_rows(spark, "p_plain.events")
        places = partition_locations(spark, "p_plain.events")
        variables = {"purge_whitelist": "p_plain"}

        for args in (["run"], ["run", "--select", "fqn:*"]):
            _, logs = run_dbt_and_capture([*args, "--vars", json.dumps(variables)])
            assert "purge: not selected by name" in logs, args
            assert "To purge, run `dbt run --select purge+`." in logs, args
            assert "p_plain.events ds=d00: DRY_RUN, would remove" in logs, args
            assert warehouse_fs.tree(spark, table_dir) == before, args
            assert table_rows(spark, "p_plain.events") == rows, args
            assert partition_locations(spark, "p_plain.events") == places, args
            assert not [
                r
                for r in spark.sql("show tables in p_plain").collect()
                if not r.isTemporary and r.tableName != "events"
            ]
            states = {r.state for r in last_run(log_rows(spark, project, "p_plain"))}
            assert states <= {"DRY_RUN", "SKIPPED"}, states
        # named: the purge acts
        _, logs = run_dbt_and_capture(["run", "--select", "purge+", "--vars", json.dumps(variables)])
        assert "not selected by name" not in logs
        assert remaining_ids(spark, "p_plain.events") == 0


class TestSwapsInOneCall:
    """A table's swaps are one metastore call (one transaction) when they are the package's own
    ALTERs; when that call fails, the partitions it did not move are swapped one by one."""

    def test_the_partitions_move_in_one_call(
        self, project: Any, spark: Any, id_table: str, monkeypatch: Any
    ) -> None:
        calls = self.spy(spark, monkeypatch, "p_swap1", fail_after_first=False)
        before = partition_locations(spark, "p_swap1.events")
        purge("p_swap1")
        assert calls == [("p_swap1", "events", 3)]
        self.check_committed(spark, project, "p_swap1", before)

    def test_every_swap_finds_its_backup_in_place(self, project: Any, spark: Any, id_table: str) -> None:
        """Never a swap before its backup: at the moment a table's swaps start, Spark's own catalog
        already has the backup table, with each partition about to move at its old location (the
        unpartitioned table's backup at the table's old location).  That is what a crash right then
        leaves a restore to go back to.  Then every partition is purged as the plan said."""
        from python_hooks.purge import committing, table_purge

        partitioned_and_flat(spark, "p_order", "(1001, 'a'), (5, 'b'), (1003, 'c')")
        rows = {t: table_rows(spark, f"p_order.{t}") for t in ("events", "flat")}
        external = spark._jsparkSession.sharedState().externalCatalog()
        seen: list[str] = []
        wrong: list[str] = []

        def swap(run: Any) -> None:
            table = run.table
            for part in run.ledger.parts(State.CHECKED):
                seen.append(f"{table.name} {part.label}")
                if not external.tableExists(table.database, table.backup):
                    wrong.append(f"{table.name} {part.label}: swapped while {table.backup} did not exist")
                    continue
                if not table.partitioned:
                    backup_at = str(external.getTable(table.database, table.backup).location())
                else:
                    spec = spark._jvm.PythonUtils.toScalaMap(dict(part.pairs))
                    found = external.getPartitionOption(table.database, table.backup, spec)
                    backup_at = str(found.get().location()) if found.isDefined() else None
                if backup_at is None or same_place(backup_at) != same_place(part.location):
                    wrong.append(f"{table.name} {part.label}: swapped while its backup is at {backup_at}")
            committing.swap(run)

        steps = tuple(swap if step is committing.swap else step for step in table_purge.STEPS)
        assert steps != table_purge.STEPS, "table_purge.STEPS no longer runs committing.swap"
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(table_purge, "STEPS", steps)
            purge("p_order")
        assert not wrong, "\n".join(wrong)
        assert sorted(seen) == [
            "p_order.events ds=d00",
            "p_order.events ds=d01",
            "p_order.flat (unpartitioned)",
        ]
        for table in ("events", "flat"):
            assert table_rows(spark, f"p_order.{table}") == kept_rows(rows[table]), table

    def test_a_failed_call_leaves_the_rest_to_one_alter_each(
        self, project: Any, spark: Any, id_table: str, monkeypatch: Any
    ) -> None:
        calls = self.spy(spark, monkeypatch, "p_swap2", fail_after_first=True)
        before = partition_locations(spark, "p_swap2.events")
        _, logs = purge("p_swap2")
        assert calls == [("p_swap2", "events", 3)]
        assert (
            "purge: p_swap2.events: swapping 3 partition(s) in one call failed (the metastore went away);"
            " 2 left to swap one by one"
        ) in logs
        self.check_committed(spark, project, "p_swap2", before)

    def test_a_swap_made_but_not_confirmed_is_never_undone(
        self, project: Any, spark: Any, id_table: str, monkeypatch: Any
    ) -> None:
        """The call moves every partition, then fails, and the catalog cannot be asked where they
        are: they are recorded FAILED, but nothing of theirs is deleted, so the table stays whole."""
        from python_hooks.catalog import metastore
        from python_hooks.purge import committing

        spark.sql("drop database if exists p_swap3 cascade")
        spark.sql("create database p_swap3")
        make_table(spark, "p_swap3.events", 4, 3)
        before_rows = table_rows(spark, "p_swap3.events")
        before = partition_locations(spark, "p_swap3.events")
        real = metastore.set_partition_locations

        def moved_then_failed(spark: Any, db: str, table: str, moves: list[Any]) -> None:
            real(spark, db, table, moves)
            raise RuntimeError("the connection dropped after the commit")

        def unknown(run: Any, parts: Any) -> dict[str, str]:
            raise RuntimeError("the metastore is unreachable")

        monkeypatch.setattr(metastore, "set_partition_locations", moved_then_failed)
        monkeypatch.setattr(committing, "locations_now", unknown)
        _, logs = purge("p_swap3", expect_pass=False)
        monkeypatch.undo()

        now = partition_locations(spark, "p_swap3.events")
        moved = [spec for spec in ("ds=d00", "ds=d01", "ds=d02") if now[spec] != before[spec]]
        assert moved == ["ds=d00", "ds=d01", "ds=d02"]
        # the live rewrites were kept: the table holds exactly the rows it should
        purged = [r for r in before_rows if '"ds":"d03"' not in r]
        expected = [r for r in before_rows if r not in purged] + kept_rows(purged)
        assert table_rows(spark, "p_swap3.events") == sorted(expected)
        assert "recorded FAILED at its swap, but the catalog could not be asked where it is" in logs

    @staticmethod
    def spy(
        spark: Any, monkeypatch: Any, database: str, fail_after_first: bool
    ) -> list[tuple[str, str, int]]:
        """`database`.events, ids in 3 of its 4 partitions; the calls of the one-call swap recorded
        (and, with `fail_after_first`, failing after it moved the first partition)."""
        from python_hooks.catalog import metastore

        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
        make_table(spark, f"{database}.events", 4, 3)
        calls: list[tuple[str, str, int]] = []
        real = metastore.set_partition_locations

        def recorded(spark: Any, db: str, table: str, moves: list[Any]) -> None:
            calls.append((db, table, len(moves)))
            real(spark, db, table, moves[:1] if fail_after_first else moves)
            if fail_after_first:
                raise RuntimeError("the metastore went away")

        monkeypatch.setattr(metastore, "set_partition_locations", recorded)
        return calls

    @staticmethod
    def check_committed(spark: Any, project: Any, database: str, before: dict[str, str]) -> None:
        rows = {r.partition_spec: r for r in last_run(log_rows(spark, project, database))}
        assert {spec: r.state for spec, r in rows.items()} == {
            "ds=d00": "COMMITTED",
            "ds=d01": "COMMITTED",
            "ds=d02": "COMMITTED",
            "ds=d03": "SKIPPED",
        }
        now = partition_locations(spark, f"{database}.events")
        for spec in ("ds=d00", "ds=d01", "ds=d02"):
            assert now[spec] == rows[spec].new_location != before[spec]
        assert now["ds=d03"] == before["ds=d03"]
        assert remaining_ids(spark, f"{database}.events") == 0


# a swap that fails for one partition (the second of the table), after the first was swapped
FAILING_SWAP = """
{% macro lakehouse__purge_swap_location_sql(database, table, partition_pairs, location) %}
    {%- if database ~ '.' ~ table == var('purge_test_bad_swap', '') and partition_pairs and partition_pairs[0][1] == 'd01' -%}
        alter table {{ compliance.table_ref(database, table) }} partition (nope = 'x') set location {{ compliance.sql_string(location) }}
    {%- else -%}
        {{ compliance.default__purge_swap_location_sql(database, table, partition_pairs, location) }}
    {%- endif -%}
{% endmacro %}
"""


class TestFailureAfterASwap:
    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, Any]:
        return {**repo_files("macros"), "failing_swap.sql": FAILING_SWAP}

    def test_the_swapped_partition_is_committed_and_the_other_failed_and_undone(
        self, project: Any, spark: Any, id_table: str
    ) -> None:
        spark.sql("drop database if exists p_iso2 cascade")
        spark.sql("create database p_iso2")
        # ids in d00, d01 and d02; d03 holds none: the partition after the failed one is swapped
        make_table(spark, "p_iso2.events", 4, 3)
        before_rows = table_rows(spark, "p_iso2.events")
        before = partition_locations(spark, "p_iso2.events")

        _, logs = purge("p_iso2", expect_pass=False, purge_test_bad_swap="p_iso2.events")

        rows = {r.partition_spec: r for r in last_run(log_rows(spark, project, "p_iso2"))}
        assert {spec: r.state for spec, r in rows.items()} == {
            "ds=d00": "COMMITTED",
            "ds=d01": "FAILED",
            "ds=d02": "COMMITTED",
            "ds=d03": "SKIPPED",
        }
        assert rows["ds=d01"].reason.startswith("the location swap failed: ")
        # the step that failed it and the state it was in (table_purge.STEPS, states.py)
        assert rows["ds=d01"].reason.endswith("(failed in step swap, from CHECKED)"), rows["ds=d01"].reason
        now = partition_locations(spark, "p_iso2.events")
        for swapped in ("ds=d00", "ds=d02"):
            assert now[swapped] == rows[swapped].new_location != before[swapped]
        assert now["ds=d01"] == before["ds=d01"] and now["ds=d03"] == before["ds=d03"]
        # exact rows: d00 and d02 purged, d01 and d03 as they were
        purged = [r for r in before_rows if '"ds":"d00"' in r or '"ds":"d02"' in r]
        expected = [r for r in before_rows if r not in purged] + kept_rows(purged)
        assert table_rows(spark, "p_iso2.events") == sorted(expected)
        # d01's rewrite was deleted and its backup partition dropped; d00's and d02's backups kept
        staging_root = f"{location(spark, 'p_iso2', 'events')}/{rows['ds=d00'].purge_ts}"
        assert not warehouse_fs.exists(spark, f"{staging_root}/ds=d01")
        assert warehouse_fs.exists(spark, f"{staging_root}/ds=d02")
        backup = spark.sql(f"show partitions {rows['ds=d00'].backup_table}").collect()
        assert sorted(r.partition for r in backup) == ["ds=d00", "ds=d02"]
        assert "p_iso2.events ds=d01: FAILED: the location swap failed" in logs
        # the next run purges what failed
        purge("p_iso2")
        assert remaining_ids(spark, "p_iso2.events") == 0

    def test_a_failed_swap_of_a_partition_another_writer_moved_keeps_all_of_it(
        self, project: Any, spark: Any, id_table: str, monkeypatch: Any
    ) -> None:
        """Another writer points d01 somewhere else just before d01's swap fails: the catalog has
        it neither where the purge found it nor at its rewrite, so what the purge made for it may
        be live to somebody and is kept (its rewrite, its backup partition), and the log says
        where the catalog has it."""
        from python_hooks.purge.table_run import TableRun

        spark.sql("drop database if exists p_iso3 cascade")
        spark.sql("create database p_iso3")
        make_table(spark, "p_iso3.events", 4, 3)
        before = partition_locations(spark, "p_iso3.events")
        elsewhere = before["ds=d01"] + "_moved_by_another_writer"
        real = TableRun.execute

        def moved_first(run: Any, sql: str, step: str) -> list[Any]:
            if run.table.name == "p_iso3.events" and step == "swap ds=d01":
                spark.sql(f"alter table p_iso3.events partition (ds = 'd01') set location '{elsewhere}'")
            return real(run, sql, step)

        monkeypatch.setattr(TableRun, "execute", moved_first)
        _, logs = purge("p_iso3", expect_pass=False, purge_test_bad_swap="p_iso3.events")
        monkeypatch.undo()

        rows = {r.partition_spec: r for r in last_run(log_rows(spark, project, "p_iso3"))}
        assert rows["ds=d01"].state == "FAILED"
        assert rows["ds=d00"].state == rows["ds=d02"].state == "COMMITTED"
        now = partition_locations(spark, "p_iso3.events")
        assert now["ds=d01"] == elsewhere  # the other writer's, untouched
        rewrite = f"{location(spark, 'p_iso3', 'events')}/{rows['ds=d00'].purge_ts}/ds=d01"
        assert (
            f"p_iso3.events ds=d01: recorded FAILED at its swap, but the catalog has it at {elsewhere}:"
            f" its new directory {rewrite}, its backup partition and the staging table's directory are kept"
        ) in logs
        # nothing of d01's was undone: its rewrite and its backup partition are there
        assert warehouse_fs.exists(spark, rewrite)
        backup = spark.sql(f"show partitions {rows['ds=d00'].backup_table}").collect()
        assert sorted(r.partition for r in backup) == ["ds=d00", "ds=d01", "ds=d02"]


class TestJournalRecovery:
    """A purge that dies after its swaps, before purge_log holds them: the next purge node
    completes purge_log from the journal, once, and records the old locations for retention."""

    def test_purge_log_is_completed_from_the_journal(self, project: Any, spark: Any, id_table: str) -> None:
        spark.sql("drop database if exists p_journal cascade")
        spark.sql("create database p_journal")
        make_table(spark, "p_journal.a", 3, 2)
        make_table(spark, "p_journal.b", 3, 1)
        before = {t: partition_locations(spark, f"p_journal.{t}") for t in ("a", "b")}
        stale = f"{project.test_schema}.stale_data_records"

        def crash(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("the process died here")

        with pytest.MonkeyPatch.context() as patch:
            # b's outcome is never written (a crash between its swaps and its outcome), and the
            # node dies before it records anything
            original = Journal.record_outcome
            patch.setattr(
                Journal,
                "record_outcome",
                lambda self, intent, outcome: (
                    crash() if intent.table == "b" else original(self, intent, outcome)
                ),
            )
            patch.setattr(results, "record", crash)
            purge("p_journal", select="purge", expect_pass=False)
        moved = {
            (t, spec): place
            for t in ("a", "b")
            for spec, place in partition_locations(spark, f"p_journal.{t}").items()
            if place != before[t][spec]
        }
        assert len(moved) == 3  # a: 2 partitions, b: 1
        logged = (
            spark.sql(
                f"select * from {project.test_schema}.purge_log where database_name = 'p_journal'"
            ).collect()
            if spark.catalog.tableExists(f"{project.test_schema}.purge_log")
            else []
        )
        assert not logged
        assert [
            e.intent.name
            for e in Journal(spark).read_entries(open_only=True)
            if e.intent.database == "p_journal"
        ] == ["p_journal.a", "p_journal.b"]

        _, logs = purge("p_journal", select="purge")
        assert (
            "completed purge_log from the journal of 2 interrupted table purge(s): 3 partition(s) had been swapped"
            in logs
        )
        rows = spark.sql(
            f"select * from {project.test_schema}.purge_log where database_name = 'p_journal'"
        ).collect()
        committed = Counter((r.table_name, r.partition_spec) for r in rows if r.state == "COMMITTED")
        # every moved partition has exactly one COMMITTED row, with the location it moved to
        assert committed == Counter({key: 1 for key in moved}), committed
        for r in rows:
            if r.state == "COMMITTED":
                assert r.new_location == moved[(r.table_name, r.partition_spec)]
        # the old locations are recorded for retention, once each
        recorded = Counter(r.location for r in spark.sql(f"select location from {stale}").collect())
        assert all(recorded[before[t][spec]] == 1 for (t, spec) in moved)
        assert not [
            e for e in Journal(spark).read_entries(open_only=True) if e.intent.database == "p_journal"
        ]
        # a third run finds nothing to complete and nothing to purge
        _, logs = purge("p_journal", select="purge")
        assert "completed purge_log" not in logs
        assert remaining_ids(spark, "p_journal.a") == 0 and remaining_ids(spark, "p_journal.b") == 0

    def test_a_purge_that_died_before_its_swap_is_put_back_by_the_next(
        self, project: Any, spark: Any, id_table: str
    ) -> None:
        """A purge that dies after its rewrite and backup, before its swap (nothing after the
        death runs: no undo, no outcome, no record): the next purge node finds the journal's
        intent without its mark and puts the partitions back as they were before it plans
        anything (the rewritten copies and the staging table removed, the backup partitions
        that pointed at the live data dropped; every row in place at the old locations), then
        purges them itself.  purge_log accounts for each partition once per run: the dead
        run's FAILED row, this run's COMMITTED one."""
        spark.sql("drop database if exists p_died cascade")
        spark.sql("create database p_died")
        make_table(spark, "p_died.t", 3, 2)
        before = partition_locations(spark, "p_died.t")
        rows_before = table_rows(spark, "p_died.t")
        made: dict[str, Any] = {"rewrites": []}

        def rewritten(session: Any, table: Any, part: Any) -> None:
            made["rewrites"].append(part.new_location)
            made["staging"], made["backup"] = f"p_died.{table.staging}", f"p_died.{table.backup}"
            made["staging_location"] = table.staging_location

        def crash(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("the process died here")

        with pytest.MonkeyPatch.context() as patch:
            before_commit_check(patch, rewritten)
            patch.setattr(committing, "check_commit", crash)
            patch.setattr(table_purge, "abort", lambda run, exc: None)  # a dead process undoes nothing
            patch.setattr(results, "record", crash)
            purge("p_died", select="purge", expect_pass=False)
        # what the death left: the rewrites, the staging table, backup partitions on the live data
        assert len(made["rewrites"]) == 2 and all(warehouse_fs.exists(spark, d) for d in made["rewrites"])
        assert spark.catalog.tableExists(made["staging"])
        assert warehouse_fs.exists(spark, made["staging_location"])
        assert len(spark.sql(f"show partitions {made['backup']}").collect()) == 2
        assert partition_locations(spark, "p_died.t") == before

        seen: dict[str, Any] = {}
        recover = recovery.complete_from_journal

        def recovered_then_seen(session: Any, config: Any) -> Any:
            found = recover(session, config)
            seen.update(
                locations=partition_locations(session, "p_died.t"),
                rows=table_rows(session, "p_died.t"),
                rewrites=[d for d in made["rewrites"] if warehouse_fs.exists(session, d)],
                staging=session.catalog.tableExists(made["staging"]),
                staging_location=warehouse_fs.exists(session, made["staging_location"]),
                backup=[r.partition for r in session.sql(f"show partitions {made['backup']}").collect()],
            )
            return found

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(recovery, "complete_from_journal", recovered_then_seen)
            _, logs = purge("p_died", select="purge")
        assert (
            "completed purge_log from the journal of 1 interrupted table purge(s): 0 partition(s) had been"
            " swapped (COMMITTED), 2 had not (FAILED, undone)"
        ) in logs
        # put back as it was, before this run planned anything
        assert seen["locations"] == before
        assert seen["rows"] == rows_before
        assert seen["rewrites"] == [] and seen["backup"] == []
        assert seen["staging"] is False and seen["staging_location"] is False
        # then purged by this run, and accounted once per run
        assert table_rows(spark, "p_died.t") == kept_rows(rows_before)
        rows = log_rows(spark, project, "p_died")
        assert Counter((r.invocation_id, r.partition_spec) for r in rows).most_common(1)[0][1] == 1
        dead = [r for r in rows if r.state == "FAILED"]
        assert sorted(r.partition_spec for r in dead) == ["ds=d00", "ds=d01"], dead
        assert all("interrupted before its swap; undone" in r.reason for r in dead), dead
        committed = {r.partition_spec: r.new_location for r in last_run(rows) if r.state == "COMMITTED"}
        assert committed == {
            spec: place for spec, place in partition_locations(spark, "p_died.t").items() if spec in committed
        }
        assert sorted(committed) == ["ds=d00", "ds=d01"]


class TestCancellation:
    """A cancellation (what the adapter's SIGINT/SIGTERM handler requests) while the second of
    three tables is being purged: before its safe point, the table is undone (never half-swapped)
    and the third never started; after it, the table's swaps finish.  What was committed stays
    committed and logged, and the node fails saying so, without a traceback."""

    @staticmethod
    def tables(spark: Any) -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
        spark.sql("drop database if exists p_cancel cascade")
        spark.sql("create database p_cancel")
        for name in ("a", "b", "c"):
            make_table(spark, f"p_cancel.{name}", 2, 2)
        before = {t: partition_locations(spark, f"p_cancel.{t}") for t in ("a", "b", "c")}
        return before, {t: table_rows(spark, f"p_cancel.{t}") for t in ("a", "b", "c")}

    @staticmethod
    def cancel() -> None:
        from dbt.adapters.factory import FACTORY

        FACTORY.adapters["lakehouse"].cancellation.request("SIGINT")

    def test_before_the_safe_point_the_table_in_flight_is_undone(
        self, project: Any, spark: Any, id_table: str
    ) -> None:
        before, rows_before = self.tables(spark)
        original = Journal.record_intent

        def intent_then_cancel(journal: Any, intent: Any) -> None:
            original(journal, intent)
            if intent.table == "b":
                self.cancel()  # b's staging, backup and rewrite are made, then the safe point stops it

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Journal, "record_intent", intent_then_cancel)
            results_, logs = purge("p_cancel", expect_pass=False)

        assert "purge: cancelled (SIGINT) after 1 of 3 table(s) to rewrite" in logs
        assert "p_cancel.b was undone before its first swap (its partitions as they were)" in logs
        assert "Traceback" not in logs
        assert {r.node.name: str(r.status) for r in results_}["purge"] == "error"
        rows = {(r.table_name, r.partition_spec): r for r in last_run(log_rows(spark, project, "p_cancel"))}
        assert {k: r.state for k, r in rows.items() if k[0] != "c"} == {
            ("a", "ds=d00"): "COMMITTED",
            ("a", "ds=d01"): "COMMITTED",
            ("b", "ds=d00"): "FAILED",
            ("b", "ds=d01"): "FAILED",
        }
        assert all("cancelled (SIGINT) before its swap" in r.reason for k, r in rows.items() if k[0] == "b")
        assert not [k for k in rows if k[0] == "c"]
        for table in ("b", "c"):
            assert partition_locations(spark, f"p_cancel.{table}") == before[table]
            assert table_rows(spark, f"p_cancel.{table}") == rows_before[table]
        assert remaining_ids(spark, "p_cancel.a") == 0
        # b left nothing behind: no side table, no rewritten copy
        assert sorted(
            r.tableName for r in spark.sql("show tables in p_cancel").collect() if not r.isTemporary
        ) == [
            "a",
            "a_backup_" + str(rows[("a", "ds=d00")].purge_ts),
            "b",
            "c",
        ]
        staging = f"{location(spark, 'p_cancel', 'b')}/{rows[('b', 'ds=d00')].purge_ts}"
        assert not warehouse_fs.exists(spark, staging)
        # the next run finishes the work
        purge("p_cancel")
        assert all(remaining_ids(spark, f"p_cancel.{t}") == 0 for t in ("a", "b", "c"))

    def test_after_the_safe_point_the_swaps_finish(self, project: Any, spark: Any, id_table: str) -> None:
        self.tables(spark)

        def cancel_in_b(spark: Any, table: Any, part: Any) -> None:
            if table.table == "b":
                self.cancel()  # between b's commit check and its swaps: they go ahead

        with pytest.MonkeyPatch.context() as patch:
            before_commit_check(patch, cancel_in_b)
            _, logs = purge("p_cancel", expect_pass=False)

        assert "purge: cancelled (SIGINT) after 2 of 3 table(s) to rewrite" in logs
        assert "it stopped between two tables" in logs and "undone" not in logs.split("purge: cancelled")[1]
        rows = {
            (r.table_name, r.partition_spec): r.state for r in last_run(log_rows(spark, project, "p_cancel"))
        }
        assert {k: v for k, v in rows.items() if k[0] == "b"} == {
            ("b", "ds=d00"): "COMMITTED",
            ("b", "ds=d01"): "COMMITTED",
        }
        assert not [k for k in rows if k[0] == "c"]
        assert remaining_ids(spark, "p_cancel.b") == 0


__all__ = ["results"]
