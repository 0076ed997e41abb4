"""The adapter conformance suite: dbt-tests-adapter's base classes against a `lakehouse` profile.

Written as every dbt adapter writes its own (dbt-spark's are in dbt-labs/dbt-adapters,
`dbt-spark/tests/functional/adapter`): a test class per base class, overriding only the fixtures
and SQL that Spark or plain parquet tables need.  The profile is the project's session target
(tests/conftest.py: type `lakehouse`, method `session`, one Spark session per pytest process,
reused by every class, over a throwaway warehouse and Derby metastore).

The test projects are dbt-tests-adapter's own: named `test`, with none of this repository's
macros, so each class exercises the adapter and its macros alone.

Every class dbt-spark runs for its `spark_session` profile runs here, and so do most of the
ones it skips there (Python models, snapshots on parquet, incremental strategies, store_failures,
more utils).  A class or test that cannot pass on plain parquet/Hive tables (Delta's `merge`) or
on this dbt-core is skipped with the reason.  `make test-adapter` runs the suite; `make test`
leaves it out.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="class")
def macros() -> dict[str, Any]:
    return {}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {}
