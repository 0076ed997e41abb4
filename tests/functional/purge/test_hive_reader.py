"""Every table a purge rewrites stays readable by Hive's own reader, and its directories stay its own.

Hadoop's input formats (Hive's reader, and the engines that read a metastore through them) treat
a path whose name starts with `_` or `.` as hidden: a table located at such a directory answers
"Input path does not exist".  A purge writes an unpartitioned table's new files beside its
directory (`<root>__purge_<ts>`, python_hooks/catalog/layout.py); these tests read every purged
table with `spark.sql.hive.convertMetastoreParquet/Orc=false` (Hive's SerDe and input format, not
Spark's reader), move a table left at the old `<L>/_purge_<ts>` layout beside its root, and let
retention delete every backup directory a second purge leaves, and nothing live.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from tests import warehouse_fs
from tests.conftest import repo_files
from tests.functional.purge.conftest import ID_TABLE, descriptor, last_run, location, log_rows, purge
from tests.policies import RETENTION_POLICY_HEADER, RETENTION_POLICY_TYPES, RETENTION_ZERO

DB = "p_hive"
# name -> the DDL after the column list
KINDS = {
    "flat": "stored as parquet",
    "flat_orc": "stored as orc",
    "events": "partitioned by (ds string) stored as parquet",
    "events_orc": "partitioned by (ds string) stored as orc",
}
LEGACY = "legacy"  # an unpartitioned table at the layout before this one: <L>/_purge_<ts>
LEGACY_TS = 1700000000000


@contextmanager
def hive_reader(spark: Any) -> Any:
    """Reads of Hive tables through Hive's SerDes and Hadoop's input formats, not Spark's readers."""
    keys = ("spark.sql.hive.convertMetastoreParquet", "spark.sql.hive.convertMetastoreOrc")
    saved = {key: spark.conf.get(key) for key in keys}
    for key in keys:
        spark.conf.set(key, "false")
    spark.catalog.clearCache()
    try:
        yield
    finally:
        for key, value in saved.items():
            spark.conf.set(key, value)


def counts(spark: Any, table: str) -> tuple[int, int]:
    """(rows, rows holding a listed id) of `table`."""
    spark.catalog.refreshTable(table)
    row = spark.sql(
        f"select count(*), count(listed.guestid) from {table} t left join "
        f"(select distinct guestid from {ID_TABLE}) listed on t.guestid = listed.guestid"
    ).collect()[0]
    return int(row[0]), int(row[1])


def add_rows(spark: Any, table: str, partitioned: bool) -> None:
    """Ten rows, 1000..1009 (three of them listed ids), in two partitions when partitioned."""
    if partitioned:
        spark.sql(
            f"insert into {table} partition (ds) select id, concat('p', id), 'd' || (id % 2) from range(1000, 1010)"
        )
    else:
        spark.sql(f"insert into {table} select id, concat('p', id) from range(1000, 1010)")


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {"purge": repo_files("models", "purge"), "retention": repo_files("models", "retention")}


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"retention": {"retention_policies.csv": RETENTION_POLICY_HEADER}}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet"}},
        "seeds": {"compliance": {"+file_format": "parquet", "+column_types": RETENTION_POLICY_TYPES}},
        "vars": {
            "purge_depends_on": [],
            "purge_whitelist": DB,
            "compliance_id_table": ID_TABLE,
            "compliance_id_column": "guestid",
            "purge_dry_run": False,
            "retention_scope": DB,
        },
    }


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any, id_table: str) -> dict[str, Any]:
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    for name, ddl in KINDS.items():
        spark.sql(f"""create table {DB}.{name} (guestid bigint, payload string) {ddl}
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        add_rows(spark, f"{DB}.{name}", "partitioned" in ddl)
    home = warehouse_fs.qualify(spark, f"{location(spark, DB, 'flat').rsplit('/', 1)[0]}/{LEGACY}")
    spark.sql(f"""create table {DB}.{LEGACY} (guestid bigint, payload string) stored as parquet
        location '{home}/_purge_{LEGACY_TS}'
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    add_rows(spark, f"{DB}.{LEGACY}", False)
    run_dbt(["seed"])
    return {"legacy_home": home}


class TestHiveReader:
    def test_the_old_layout_is_what_hive_cannot_read(self, project, spark, lake):
        """The failure this layout exists for (else the test below could not fail)."""
        with hive_reader(spark), pytest.raises(Exception, match="Input path does not exist"):
            counts(spark, f"{DB}.{LEGACY}")

    def test_every_purged_table_reads_through_hive(self, project, spark, lake):
        purge(DB)
        ts = last_run(log_rows(spark, project, DB))[0].purge_ts
        for name in (*KINDS, LEGACY):
            assert counts(spark, f"{DB}.{name}") == (7, 0), name
            with hive_reader(spark):
                assert counts(spark, f"{DB}.{name}") == (7, 0), f"{name} through Hive's reader"
        flat = location(spark, DB, "flat")
        assert flat.endswith(f"/flat__purge_{ts}"), flat
        assert location(spark, DB, f"flat_backup_{ts}") == flat.removesuffix(f"__purge_{ts}")
        # the table left at <L>/_purge_<ts> is now beside <L>, every reader's
        assert location(spark, DB, LEGACY) == f"{lake['legacy_home']}__purge_{ts}"
        assert location(spark, DB, f"{LEGACY}_backup_{ts}") == f"{lake['legacy_home']}/_purge_{LEGACY_TS}"

    def test_a_second_purge_stays_beside_the_root_and_retention_deletes_the_old_directories(
        self, project, spark, lake
    ):
        first = location(spark, DB, "flat")
        root = first.rsplit("__purge_", 1)[0]
        add_rows(spark, f"{DB}.flat", False)
        purge(DB, **RETENTION_ZERO)  # purge+ runs retention after the purge
        ts = max(r.purge_ts for r in log_rows(spark, project, DB))
        second = location(spark, DB, "flat")
        assert second == f"{root}__purge_{ts}", (first, second)
        with hive_reader(spark):
            assert counts(spark, f"{DB}.flat") == (14, 0)
        # every backup (the first purge's <root>, the second's <root>__purge_<ts1>) expired at zero
        # retention: their directories are gone, the live one is whole, and nothing was refused
        assert not warehouse_fs.files(spark, root), warehouse_fs.files(spark, root)
        assert not warehouse_fs.files(spark, first), warehouse_fs.files(spark, first)
        assert warehouse_fs.data_files(spark, second)
        assert not warehouse_fs.files(spark, f"{lake['legacy_home']}/_purge_{LEGACY_TS}")
        spark.catalog.refreshTable(f"{project.test_schema}.retention_log")
        refused = spark.sql(
            f"select location, failure_reason from {project.test_schema}.retention_log "
            f"where database_name = '{DB}' and failure_reason is not null"
        ).collect()
        assert not refused, json.dumps([r.asDict() for r in refused])
