"""Fixtures for the retention and restore tests: one project (retention models, policy seed) per class."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.conftest import beside_warehouse, repo_files
from tests.policies import RETENTION_POLICY_HEADER, RETENTION_POLICY_TYPES

# Per-table policies of the test seed: most specific row wins.
POLICIES = (
    RETENTION_POLICY_HEADER
    + """r_dates,,,,,,,dp,yyyy-MM-dd,,,,,
r_dates.events,,,,,,,dp,yyyy-MM-dd,,10,,,
r_dates.hourly*,,,,,,,dp,yyyy-MM-dd-HH,,1,,,
r_dates.snap,,,,,,,,,,,dp,2,
r_reap,,,,,2,{backup_dir},,,,,,,
"""
)

SEED_TYPES = RETENTION_POLICY_TYPES


def retention(now: int, expect_pass: bool = True, scope: str = "r_*", **extra: Any) -> tuple[Any, str]:
    """`dbt run --select retention` at time `now` (epoch ms, a day of the tests' lakes in 2030:
    allowed by retention_allow_future_now) limited to the test databases."""
    variables = {"retention_now": now, "retention_scope": scope, "retention_allow_future_now": True, **extra}
    return run_dbt_and_capture(
        ["run", "--select", "retention", "--vars", json.dumps(variables)], expect_pass=expect_pass
    )


def restore(expect_pass: bool = True, now: int | None = None, **args: Any) -> tuple[Any, str]:
    command = ["run-operation", "restore", "--args", json.dumps(args)]
    if now is not None:
        command += ["--vars", json.dumps({"retention_now": now, "retention_allow_future_now": True})]
    return run_dbt_and_capture(command, expect_pass=expect_pass)


def attempts(spark: Any, schema: str, database: str | None = None) -> list[Any]:
    """This pass's rows of retention_log (the latest invocation), optionally for one database."""
    spark.catalog.refreshTable(f"{schema}.retention_log")
    rows = spark.sql(f"select * from {schema}.retention_log").collect()
    if not rows:
        return []
    latest = max(rows, key=lambda r: r.attempted_at).invocation_id
    return [
        r for r in rows if r.invocation_id == latest and (database is None or r.database_name == database)
    ]


@pytest.fixture(scope="class")
def macros() -> dict[str, Any]:
    """The macros retention and restore use (not the other capabilities', which change meanwhile)."""
    return {
        "common": repo_files("macros", "common"),
        "retention": repo_files("macros", "retention"),
        "restore": repo_files("macros", "restore"),
    }


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {
        "retention": repo_files("models", "retention"),
        "purge": {
            "purge.sql": "select 1 as placeholder",
            "purge_log.sql": "select * from {{ ref('purge') }}",
        },
    }


# retention's backup_dir for r_reap: on the warehouse's filesystem, outside the warehouse
REAPED = beside_warehouse("reaped-backups")


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"retention": {"retention_policies.csv": POLICIES.format(backup_dir=REAPED)}}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        "models": {"compliance": {"+file_format": "parquet"}},
        "seeds": {"compliance": {"+file_format": "parquet", "+column_types": SEED_TYPES}},
        "vars": {"retention_scope": "r_*"},
    }


@pytest.fixture(scope="class")
def built(project: Any) -> Any:
    """The project with its seed loaded and one (empty) retention pass, so retention_log exists."""
    run_dbt(["seed"])
    return project
