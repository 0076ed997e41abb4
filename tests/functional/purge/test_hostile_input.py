"""Hostile input: vars and run-operation args holding SQL or path steps are refused by name.

Each case runs the real command and then checks that nothing changed: every table's type,
location, table properties and partitions' locations in Spark's own catalog, a hash of every file
and directory under the warehouse, and the rows of the database the inputs name.  The matrix is in
docs/safety.md.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests import warehouse_fs
from tests.functional.purge.conftest import onboarded_events, purge

SQL = "x`; drop table h_lake.events; --"


def _items(scala: Any) -> list[Any]:
    """A Scala collection's elements (Spark's catalog objects, read without the product's code)."""
    found, iterator = [], scala.iterator()
    while iterator.hasNext():
        found.append(iterator.next())
    return found


def catalog(spark: Any) -> dict[str, Any]:
    """Every table of every database as Spark's own catalog has it (type, location, properties,
    partitions with their locations), a hash of every file and directory under the warehouse (the
    rows of every table stored there are those bytes), and the rows of the database the hostile
    inputs name (`h_lake`)."""
    found: dict[str, Any] = {
        "warehouse files": warehouse_fs.tree(spark, spark.conf.get("spark.sql.warehouse.dir"))
    }
    external = spark._jsparkSession.sharedState().externalCatalog()
    none = spark._jvm.scala.Option.empty()
    for db in _items(external.listDatabases()):
        for table in _items(external.getTablesByName(db, external.listTables(db))):
            name = f"`{db}`.`{table.identifier().table()}`"
            parts = {}
            if table.partitionColumnNames().nonEmpty():
                for part in _items(external.listPartitions(db, table.identifier().table(), none)):
                    parts[str(part.spec().toString())] = str(part.location())
            props = sorted((str(kv._1()), str(kv._2())) for kv in _items(table.properties()))
            location = table.storage().locationUri()  # a view has none
            where = str(location.get()) if location.isDefined() else None
            found[name] = (str(table.tableType().name()), where, parts, props)
    for row in spark.sql("show tables in h_lake").collect():
        if not row.isTemporary:
            name = f"`h_lake`.`{row.tableName}` rows"
            found[name] = sorted(
                r[0] for r in spark.sql(f"select to_json(struct(*)) from h_lake.{row.tableName}").collect()
            )
    return found


@pytest.fixture(scope="class")
def lake(project, spark, id_table):
    onboarded_events(spark, "h_lake")
    spark.sql("insert into h_lake.events partition (ds = 'a') select id, 'x' from range(1000, 1010)")
    return catalog(spark)


def operation(name: str, args: dict[str, Any]) -> str:
    _, logs = run_dbt_and_capture(["run-operation", name, "--args", json.dumps(args)], expect_pass=False)
    return logs


CASES = {
    "whitelist with SQL": (lambda: purge(SQL, expect_pass=False)[1], "Var purge_whitelist has an entry"),
    "blacklist with SQL": (
        lambda: purge("h_lake", expect_pass=False, purge_blacklist="h_lake.events;--")[1],
        "Var purge_blacklist has an entry",
    ),
    "id table with SQL": (
        lambda: purge("h_lake", expect_pass=False, compliance_id_table="p_ids.ids; drop table x")[1],
        'Var compliance_id_table is "p_ids.ids; drop table x": it must name the id table as db.table',
    ),
    "id column with a backtick": (
        lambda: purge("h_lake", expect_pass=False, compliance_id_column="guestid` from x --")[1],
        'has no column "guestid` from x --"',
    ),
    "dry run that is not a boolean": (
        lambda: purge("h_lake", expect_pass=False, purge_dry_run="maybe")[1],
        'Var purge_dry_run is "maybe": expected true or false',
    ),
    "scan parallelism that is not a number": (
        lambda: purge("h_lake", expect_pass=False, purge_scan_parallelism="4; drop")[1],
        'Var purge_scan_parallelism is "4; drop": expected a whole number of at least 1',
    ),
    "onboard table with SQL": (
        lambda: operation("onboard", {"table": "h_lake.events; drop", "identifier": "guestid"}),
        'onboard: table "h_lake.events; drop" must be given as db.table',
    ),
    "onboard identifier with SQL": (
        lambda: operation("onboard", {"table": "h_lake.events", "identifier": "guestid') --"}),
        "is not a column or struct field of h_lake.events",
    ),
    "restore table with SQL": (
        lambda: operation("restore", {"table": "h_lake.events`; drop", "partition": "ds=a"}),
        "the table does not exist",
    ),
    "restore partition with a path step": (
        lambda: operation("restore", {"table": "h_lake.events", "partition": "ds=.."}),
        "the value '..' of ds is refused",
    ),
    "restore partition with SQL": (
        lambda: operation("restore", {"table": "h_lake.events", "partition": "ds=a') --"}),
        "no backup holds a non-empty copy of it",
    ),
    "restore from a table that is not its backup": (
        lambda: operation("restore", {"table": "h_lake.events", "partition": "ds=a", "backup": "p_ids.ids"}),
        "p_ids.ids: no such backup",
    ),
}


class TestHostileInput:
    @pytest.mark.parametrize("case", list(CASES))
    def test_refused_by_name_and_nothing_changes(self, project, spark, lake, case):
        run, words = CASES[case]
        logs = run()
        assert words in logs, logs[-2000:]
        assert catalog(spark) == lake
