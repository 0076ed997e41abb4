"""Fixtures for the erasure tests: the purge, retention and erasure models over tables made with Spark SQL."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.conftest import repo_files
from tests.functional.purge.conftest import descriptor  # noqa: F401 - the erasure tests import it from here
from tests.policies import RETENTION_POLICY_HEADER, RETENTION_POLICY_TYPES, RETENTION_ZERO

SEED_HEADER = RETENTION_POLICY_HEADER
SEED_TYPES = RETENTION_POLICY_TYPES
ZERO = RETENTION_ZERO


def dbt_log(args: list[str], expect_pass: bool | None = True, callbacks: list[Any] | None = None) -> str:
    """A dbt command's log; when it does not end as expected, the assertion shows the log's end
    (`expect_pass` None: either way).  `callbacks` receive every event (dbtRunner's)."""
    from io import StringIO

    from dbt.cli.main import dbtRunner
    from dbt.flags import get_flags
    from dbt.tests.util import capture_stdout_logs, reset_metadata_vars, stop_capture_stdout_logs

    reset_metadata_vars()
    flags = get_flags()
    args = list(args)
    for option, value in (
        ("--project-dir", getattr(flags, "PROJECT_DIR", None)),
        ("--profiles-dir", getattr(flags, "PROFILES_DIR", None)),
    ):
        if value and option not in args:
            args += [option, value]
    buffer = StringIO()
    capture_stdout_logs(buffer)
    try:
        result = dbtRunner(callbacks=callbacks or []).invoke(args)
    finally:
        stop_capture_stdout_logs()
    log = buffer.getvalue()
    assert expect_pass is None or result.success == expect_pass, (
        f"dbt {' '.join(args[:4])} {'failed' if expect_pass else 'passed'}:\n{log[-6000:]}"
    )
    return log


def purge(whitelist: str, scope: str) -> str:
    """`dbt run --select purge+` (purge, log, verification, retention at its defaults) on `whitelist`."""
    variables = {"purge_whitelist": whitelist, "retention_scope": scope}
    _, log = run_dbt_and_capture(["run", "--select", "purge+", "--vars", json.dumps(variables)])
    return log


def retention_at_zero(scope: str) -> str:
    variables = {"retention_scope": scope, **ZERO}
    _, log = run_dbt_and_capture(["run", "--select", "retention", "--vars", json.dumps(variables)])
    return log


def verify(request_id: str) -> str:
    """`dbt run-operation verify_erasure`; returns its log (it never fails because rows remain)."""
    _, log = run_dbt_and_capture(
        ["run-operation", "verify_erasure", "--args", json.dumps({"request_id": request_id})]
    )
    return log


def latest_verification(spark: Any, schema: str, request_id: str) -> list[Any]:
    """The rows of the latest verification of `request_id` in the result table."""
    spark.catalog.refreshTable(f"{schema}.erasure_verification")
    rows = spark.sql(
        f"select * from {schema}.erasure_verification where request_id = '{request_id}'"
    ).collect()
    latest = max(r.verified_at for r in rows)
    return [r for r in rows if r.verified_at == latest]


def purge_runs(spark: Any, schema: str) -> list[str]:
    spark.catalog.refreshTable(f"{schema}.purge_log")
    return [
        r[0]
        for r in spark.sql(
            f"select invocation_id from {schema}.purge_log where state = 'COMMITTED' "
            "group by invocation_id order by max(ended_at)"
        ).collect()
    ]


def committed(spark: Any, schema: str, invocation_id: str) -> list[Any]:
    return spark.sql(
        f"select * from {schema}.purge_log where state = 'COMMITTED' and invocation_id = '{invocation_id}'"
    ).collect()


def onboarded_outside(spark: Any, databases: set[str]) -> str | None:
    """The onboarded tables of the metastore outside `databases`, as a verification run names them
    in `out_of_scope_tables` (`db.table; ...`, sorted, the first 50 then `... and N more`), read
    from Spark's own catalog: every table but a view with a `dataset.descriptor` that is not
    registered as a side table (`lakehouse.side_table` of a table of its own database, with a
    numeric creation time), a Delta Lake table's read from its log."""
    catalog = spark._jsparkSession.sessionState().catalog().externalCatalog()
    convert = spark._jvm.scala.collection.JavaConverters.seqAsJavaList
    found = []
    for database in (str(d).lower() for d in convert(catalog.listDatabases())):
        if database in databases:
            continue
        for meta in convert(catalog.getTablesByName(database, catalog.listTables(database))):
            props = meta.properties()

            def value(key: str, props: Any = props) -> str:
                return str(props.get(key).get()) if props.contains(key) else ""

            registered = (
                value("lakehouse.side_table") in ("staging", "backup", "trash")
                and value("lakehouse.side_table.of").lower().startswith(f"{database}.")
                and value("lakehouse.side_table.created_at").isdigit()
            )
            name = str(meta.identifier().table()).lower()
            delta = meta.provider().isDefined() and str(meta.provider().get()).lower() == "delta"
            # a Delta table keeps its properties in its log: read through Delta
            onboarded = props.contains("dataset.descriptor") or (
                delta
                and any(
                    r[0] == "dataset.descriptor"
                    for r in spark.sql(f"show tblproperties `{database}`.`{name}`").collect()
                )
            )
            if str(meta.tableType().name()) != "VIEW" and onboarded and not registered:
                found.append((database, str(meta.identifier().table()).lower()))
    names = [f"{database}.{table}" for database, table in sorted(found)]
    more = f"; ... and {len(names) - 50} more" if len(names) > 50 else ""
    return "; ".join(names[:50]) + more if names else None


def fresh_request(
    spark: Any, databases: tuple[str, ...], id_table: str, request: str, ids: list[int]
) -> None:
    """`databases` made anew, and `id_table` (guestid, request_id, requested_at) listing `ids` as
    `request`, requested a day ago."""
    for database in databases:
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    requested = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    spark.sql(
        f"create table {id_table} (guestid bigint, request_id string, requested_at timestamp) using parquet"
    )
    rows = ", ".join(f"({i}, '{request}', timestamp'{requested}')" for i in ids)
    spark.sql(f"insert into {id_table} values {rows}")


def project_config(database: str, id_table: str, **more_vars: Any) -> dict[str, Any]:
    """A test project purging and verifying `database` against `id_table` (column guestid), the
    erasure models tagged as the product tags them, the audit off."""
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet", "erasure": {"+tags": ["erasure"]}}},
        "seeds": {"compliance": {"+column_types": SEED_TYPES}},
        "vars": {
            "purge_whitelist": database,
            "compliance_id_table": id_table,
            "compliance_id_column": "guestid",
            "erasure_verification_scope": database,
            "audit_enabled": False,
            **more_vars,
        },
    }


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {
        "purge": repo_files("models", "purge"),
        "retention": repo_files("models", "retention"),
        # pii_coverage reads the audit's lineage tables and its own seed: tested on its own
        "erasure": {k: v for k, v in repo_files("models", "erasure").items() if k != "pii_coverage.sql"},
    }


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"retention": {"retention_policies.csv": SEED_HEADER}}


__all__ = ["run_dbt"]


def certificate_issued_and_verified(project: Any, request_id: str) -> tuple[dict[str, Any], str]:
    """`erasure_certificate` for the request, then `verify_certificate` of it, which must verify:
    the certificate's JSON and its markdown."""
    import os

    dbt_log(["run-operation", "erasure_certificate", "--args", json.dumps({"request_id": request_id})])
    path = os.path.join(project.project_root, "target", "erasure", f"{request_id}.json")
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    with open(path.replace(".json", ".md"), encoding="utf-8") as handle:
        markdown = handle.read()
    said = dbt_log(
        [
            "run-operation",
            "verify_certificate",
            "--args",
            json.dumps({"file": f"target/erasure/{request_id}.json"}),
        ]
    )
    assert f"verifies: the evidence of request {request_id}" in said, said[-2000:]
    return doc, markdown
