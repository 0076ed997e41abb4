"""Python models on the lakehouse adapter: they run in the dbt process's Spark session.

dbt-spark skips every Python model class for its `spark_session` profile (its submission methods
need Databricks); the lakehouse adapter's `session` submission method runs them in place.
"""

from __future__ import annotations

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
)
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt

CITIES = {"Buenos Aires", "Brasilia", "Santiago", "Bogota", "Caracas"}


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncrementalModel(BasePythonIncrementalTests):
    # the default strategy (append): merge needs Delta; the model filters the new rows itself
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {}


class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPySpark(BasePySparkTests):
    def test_different_dataframes(self, project):
        # a Spark, a pandas and a pandas-on-Spark DataFrame; databricks.koalas (retired, pandas 1
        # only) is not installed, so its model is left out, as dbt-spark leaves it out
        results = run_dbt(["run", "--exclude", "koalas_df"])
        assert sorted(r.node.name for r in results if r.status == "success") == [
            "pandas_df",
            "pandas_on_spark_df",
            "pyspark_df",
        ]
        for name in ("pandas_df", "pandas_on_spark_df", "pyspark_df"):
            rows = project.run_sql(f"select City, Latitude from {project.test_schema}.{name}", fetch="all")
            assert {row[0] for row in rows} == CITIES, name
            assert sorted(row[1] for row in rows) == [-34.58, -33.45, -15.78, 4.6, 10.48], name
