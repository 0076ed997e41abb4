"""Seeds under `method: session`: every cell loads as the value the CSV holds.

dbt-spark's session cursor formats a seed's values into its insert statement wrapped in quotes,
unescaped: an empty cell loaded as the string 'None' and a value holding a quote failed the whole
seed.  The adapter binds them as Spark SQL literals (python_hooks/catalog/literals.py); what a user relies on
is the values and column types read back, whatever the cell holds.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from dbt.tests.util import run_dbt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_hooks.catalog.literals import sql_literal, string_literal

# a quote, a backslash, an empty cell, a doubled CSV quote, a newline, unicode, `%s` (the cursor
# formats with `%`), `${...}` (Spark substitutes variables in a statement's text) and 'None'
CUSTOMERS_CSV = (
    "id,name,note,amount,visited_on,active\n"
    "1,guest's,C:\\temp\\new,10.50,2024-01-02,true\n"
    '2,,"line one\nline two",,2024-01-03,\n'
    "3,Zoë ✓ 100%,${env:HOME} and %s,-3,,false\n"
    '4,None,"say ""hi"" \\\'",0.1,2024-01-04,true\n'
)

SEEDS_YML = """
version: 2
seeds:
  - name: customers
    config:
      column_types:
        id: int
        amount: decimal(10,2)
"""

EXPECTED = {
    1: ("guest's", "C:\\temp\\new", Decimal("10.50"), dt.date(2024, 1, 2), True),
    2: (None, "line one\nline two", None, dt.date(2024, 1, 3), None),
    3: ("Zoë ✓ 100%", "${env:HOME} and %s", Decimal("-3.00"), None, False),
    4: ("None", 'say "hi" \\\'', Decimal("0.10"), dt.date(2024, 1, 4), True),
}


class TestSeedValuesReadBackExactly:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"customers.csv": CUSTOMERS_CSV, "_seeds.yml": SEEDS_YML}

    @pytest.fixture(scope="class")
    def macros(self):
        return {}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        # parquet, as the product's seeds: a Hive text table (Spark's default) splits a value
        # holding a newline into two rows when it is read
        return {"name": "compliance", "seeds": {"+file_format": "parquet"}}

    def test_values_and_types(self, project, spark):
        results = run_dbt(["seed"])
        assert [r.status for r in results] == ["success"]
        table = f"{project.test_schema}.customers"
        rows = spark.sql(f"select * from {table}").collect()
        assert {r.id: (r.name, r.note, r.amount, r.visited_on, r.active) for r in rows} == EXPECTED
        types = {r.col_name: r.data_type for r in spark.sql(f"describe table {table}").collect()}
        assert types == {
            "id": "int",
            "name": "string",
            "note": "string",
            "amount": "decimal(10,2)",
            "visited_on": "date",
            "active": "boolean",
        }
        # a second load (the seed replaced) reads back the same
        run_dbt(["seed", "--full-refresh"])
        rows = spark.sql(f"select * from {table}").collect()
        assert {r.id: (r.name, r.note, r.amount, r.visited_on, r.active) for r in rows} == EXPECTED


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
def test_any_text_reads_back_as_itself(spark, text):
    assert spark.sql(f"select {string_literal(text)} as v").collect()[0].v == text


@pytest.mark.parametrize(
    ("value", "cast", "expected"),
    [
        (None, "int", None),
        (True, "boolean", True),
        (
            Decimal("12345678901234567890.123456789"),
            "decimal(38,9)",
            Decimal("12345678901234567890.123456789"),
        ),
        (Decimal("1E+2"), "bigint", 100),
        (Decimal("1" * 40), "double", float("1" * 40)),
        (2.5e-7, "double", 2.5e-7),
        (float("nan"), "double", None),  # checked below: NaN is not equal to itself
        (float("-inf"), "double", float("-inf")),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 678901), "timestamp", dt.datetime(2024, 1, 2, 3, 4, 5, 678901)),
        (dt.date(2024, 2, 29), "date", dt.date(2024, 2, 29)),
    ],
)
def test_literals_cast_back_to_the_value(spark, value, cast, expected):
    got = spark.sql(f"select cast({sql_literal(value)} as {cast}) as v").collect()[0].v
    if isinstance(value, float) and value != value:
        assert got != got
    else:
        assert got == expected
