"""Fixtures for the purge tests: a project with the purge models, tables created with Spark SQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from python_hooks.catalog import tables as catalog_tables
from python_hooks.purge import committing, table_purge
from python_hooks.purge.states import State
from tests.conftest import repo_files

DESCRIPTOR = '{"complianceSpec": {"identifierField": "%s"}}'
ID_TABLE = "p_ids.ids"
PURGED_IDS = {1001, 1002, 1003}  # the non-NULL ids of `id_table`


def descriptor(field: str) -> str:
    return (DESCRIPTOR % field).replace("'", "\\'")


def onboarded_events(spark: Any, database: str) -> str:
    """A fresh database holding `events (guestid bigint, payload string)`, partitioned by ds,
    parquet, onboarded on guestid; its name."""
    spark.sql(f"drop database if exists {database} cascade")
    spark.sql(f"create database {database}")
    spark.sql(f"""
        create table {database}.events (guestid bigint, payload string) partitioned by (ds string)
        stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    return f"{database}.events"


def purge(whitelist: str, expect_pass: bool = True, select: str = "purge+", **extra: Any) -> tuple[Any, str]:
    """`dbt run --select purge+` with the given whitelist; returns (results, captured log)."""
    variables = {"purge_whitelist": whitelist, **extra}
    return run_dbt_and_capture(
        ["run", "--select", select, "--vars", json.dumps(variables)], expect_pass=expect_pass
    )


def location(spark: Any, database: str, table: str, values: list[list[str]] | None = None) -> str | None:
    if values is None:
        return catalog_tables.describe_table(spark, database, table)["location"]
    return catalog_tables.partition_location(spark, database, table, values)


def log_rows(spark: Any, project: Any, database: str | None = None) -> list[Any]:
    where = f"where database_name = '{database}'" if database else ""
    return spark.sql(f"select * from {project.test_schema}.purge_log {where}").collect()


def last_run(rows: list[Any]) -> list[Any]:
    latest = max(r.purge_ts for r in rows)
    return [r for r in rows if r.purge_ts == latest]


def count(spark: Any, sql: str) -> int:
    spark.catalog.clearCache()
    return int(spark.sql(sql).collect()[0][0])


def file_codecs(spark: Any, directory: str, storage_format: str) -> set[str]:
    """The compression codecs of the data files directly in `directory`, read from their footers."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(directory)
    codecs = set()
    for status in path.getFileSystem(conf).listStatus(path):
        if status.isDirectory() or str(status.getPath().getName()).startswith(("_", ".")):
            continue
        if storage_format == "parquet":
            reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
                jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromStatus(status, conf)
            )
            try:
                for block in reader.getFooter().getBlocks():
                    codecs.update(str(column.getCodec()) for column in block.getColumns())
            finally:
                reader.close()
        else:
            options = jvm.org.apache.orc.OrcFile.readerOptions(conf)
            reader = jvm.org.apache.orc.OrcFile.createReader(status.getPath(), options)
            try:
                codecs.add(str(reader.getCompressionKind()))
            finally:
                reader.close()
    return codecs


def table_rows(spark: Any, table: str) -> list[str]:
    """Every row of `table`, every column (partition columns and nested fields included), as
    sorted JSON strings: NULLs are written out, so a column turned NULL shows as well as one changed."""
    spark.catalog.clearCache()
    spark.catalog.refreshTable(table)
    frame = spark.sql(f"select to_json(struct(*), map('ignoreNullFields', 'false')) from {table}")
    return sorted(r[0] for r in frame.collect())


def identifier_of(row: str, field: str) -> Any:
    value: Any = json.loads(row)
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def kept_rows(rows: list[str], field: str = "guestid", ids: set[int] = PURGED_IDS) -> list[str]:
    """The rows a purge of `ids` must leave, computed from the rows before it (not by Spark SQL)."""
    return [r for r in rows if identifier_of(r, field) not in ids]


def remaining_ids(spark: Any, table: str, field: str = "guestid") -> int:
    return count(
        spark, f"select count(*) from {table} a left semi join {ID_TABLE} b on a.{field} = b.guestid"
    )


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {"purge": repo_files("models", "purge")}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet"}},
        "vars": {
            "purge_depends_on": [],
            "purge_whitelist": "",
            "purge_blacklist": "",
            "compliance_id_table": ID_TABLE,
            "compliance_id_column": "guestid",
            "purge_dry_run": False,
        },
    }


@pytest.fixture(scope="class")
def id_table(project: Any, spark: Any) -> str:
    """Ids 1001..1003 and a NULL (which purges nothing)."""
    spark.sql("create database if not exists p_ids")
    spark.sql("drop table if exists p_ids.ids")
    spark.sql("create table p_ids.ids (guestid bigint) using parquet")
    spark.sql("insert into p_ids.ids values (1001), (1002), (1003), (1003), (null)")
    return ID_TABLE


__all__ = [
    "count",
    "descriptor",
    "file_codecs",
    "PURGED_IDS",
    "identifier_of",
    "kept_rows",
    "last_run",
    "location",
    "log_rows",
    "purge",
    "remaining_ids",
    "run_dbt",
    "table_rows",
]


def before_commit_check(patch: pytest.MonkeyPatch, hook: Any) -> None:
    """Run `hook(spark, table, partition)` for each backed-up partition just before the purge's
    commit check lists its files: the test wraps the engine's step in `table_purge.STEPS` (the
    product carries no seam for it)."""

    def check_commit(run: Any) -> None:
        for part in run.ledger.parts(State.BACKED_UP):
            hook(run.spark, run.table, part)
        committing.check_commit(run)

    steps = tuple(check_commit if step is committing.check_commit else step for step in table_purge.STEPS)
    assert steps != table_purge.STEPS, "table_purge.STEPS no longer runs committing.check_commit"
    patch.setattr(table_purge, "STEPS", steps)
