"""A Python model runs in the local session and feeds a SQL model, with the same configs."""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

PY_MODEL = """
from pyspark.sql import functions as F


def model(dbt, spark):
    dbt.config(materialized="table", partition_by=["day"], tblproperties={"owner.team": "compliance"})
    return spark.range(10).select(
        F.col("id").alias("order_id"),
        (F.col("id") * 1.5).alias("amount"),
        F.when(F.col("id") < 4, F.lit("2024-01-01")).otherwise(F.lit("2024-01-02")).alias("day"),
    )
"""

PANDAS_MODEL = """
import pandas as pd


def model(dbt, spark):
    upstream = dbt.ref("py_orders").toPandas()
    return pd.DataFrame({"n": [len(upstream)]})
"""

# pandas-on-Spark: the upstream model's rows grouped by the pandas API, the index kept as a column
PANDAS_ON_SPARK_MODEL = """
def model(dbt, spark):
    orders = dbt.ref("py_orders").pandas_api()
    return orders.groupby("day")["amount"].sum().reset_index()
"""

# what the session held while the model ran, for the test to read back
CONF_MODEL = """
def model(dbt, spark):
    dbt.config(
        materialized="table",
        session_conf={"spark.sql.optimizer.windowGroupLimitThreshold": -1, "spark.sql.shuffle.partitions": "3"},
    )
    if spark.conf.get("spark.sql.shuffle.partitions") != "3":
        raise ValueError("session_conf was not applied")
    if dbt.config.get("fail_on_purpose", False):
        raise ValueError("failing on purpose")
    return spark.createDataFrame(
        [(spark.conf.get("spark.sql.optimizer.windowGroupLimitThreshold"), spark.conf.get("spark.sql.shuffle.partitions"))],
        "group_limit string, shuffle_partitions string",
    )
"""

SQL_MODEL = """
with orders as (select * from {{ ref('py_orders') }})
select day, count(*) as orders, sum(amount) as amount from orders group by day
"""


class TestPythonModelFeedsSql:
    @pytest.fixture(scope="class")
    def models(self):
        return {"py_orders.py": PY_MODEL, "daily_orders.sql": SQL_MODEL, "py_count.py": PANDAS_MODEL}

    def test_python_then_sql(self, project, spark):
        results = run_dbt(["run"])
        assert sorted(r.status for r in results) == ["success"] * 3
        schema = project.test_schema
        daily = {
            r.day: (r.orders, r.amount) for r in spark.sql(f"select * from {schema}.daily_orders").collect()
        }
        assert daily == {"2024-01-01": (4, 9.0), "2024-01-02": (6, 58.5)}
        # the Python model honoured partition_by and tblproperties, like a SQL model would
        partitions = [r[0] for r in spark.sql(f"show partitions {schema}.py_orders").collect()]
        assert partitions == ["day=2024-01-01", "day=2024-01-02"]
        props = dict(spark.sql(f"show tblproperties {schema}.py_orders").collect())
        assert props["owner.team"] == "compliance"
        assert spark.sql(f"select n from {schema}.py_count").collect()[0].n == 10

    def test_session_conf_holds_for_the_model_alone(self, project, spark):
        limit, partitions = "spark.sql.optimizer.windowGroupLimitThreshold", "spark.sql.shuffle.partitions"
        shuffle = spark.conf.get(partitions)
        Path(project.project_root, "models", "py_conf.py").write_text(CONF_MODEL)
        spark.conf.set(limit, "700")
        try:
            run_dbt(["run", "--select", "py_conf"])
            seen = spark.sql(f"select * from {project.test_schema}.py_conf").collect()[0]
            assert (seen.group_limit, seen.shuffle_partitions) == ("-1", "3")
            # put back as the session had them: one set, one set by the profile
            assert (spark.conf.get(limit), spark.conf.get(partitions)) == ("700", shuffle)
            # an unset setting is unset again, and a model that fails puts its settings back too
            spark.conf.unset(limit)
            Path(project.project_root, "models", "py_conf.py").write_text(
                CONF_MODEL.replace('materialized="table",', 'materialized="table", fail_on_purpose=True,')
            )
            results = run_dbt(["run", "--select", "py_conf"], expect_pass=False)
            assert "py_conf failed: failing on purpose" in results[0].message
            assert spark.conf.get(limit, None) is None and spark.conf.get(partitions) == shuffle
        finally:
            spark.conf.unset(limit)
            Path(project.project_root, "models", "py_conf.py").unlink()

    def test_python_error_names_the_model(self, project):
        broken = PY_MODEL.replace(
            "return spark.range(10)", "raise ValueError('bad input 42')\n    return spark.range(10)"
        )
        Path(project.project_root, "models", "py_orders.py").write_text(broken)
        results = run_dbt(["run", "--select", "py_orders"], expect_pass=False)
        assert "py_orders failed: bad input 42" in results[0].message


class TestPandasOnSparkModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"py_orders.py": PY_MODEL, "py_daily.py": PANDAS_ON_SPARK_MODEL}

    def test_a_pandas_on_spark_dataframe_is_written(self, project, spark):
        results = run_dbt(["run"])
        assert sorted(r.status for r in results) == ["success"] * 2
        rows = spark.sql(f"select day, amount from {project.test_schema}.py_daily").collect()
        assert {r.day: r.amount for r in rows} == {"2024-01-01": 9.0, "2024-01-02": 58.5}

    def test_another_return_type_is_named(self, project):
        Path(project.project_root, "models", "py_daily.py").write_text(
            "def model(dbt, spark):\n    return [1, 2]\n"
        )
        results = run_dbt(["run", "--select", "py_daily"], expect_pass=False)
        assert "<class 'list'> is not a supported return type" in results[0].message
        assert "pandas-on-Spark" in results[0].message
