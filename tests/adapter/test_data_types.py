"""dbt's type macros (`dbt.tests.adapter.utils.data_types`) on the lakehouse adapter."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_float import seeds__expected_csv as float_expected_csv
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_int import seeds__expected_csv as int_expected_csv
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp


def _expected_seed(csv: str, column: str, data_type: str) -> dict[str, str]:
    """The expected seed, its column typed as the macro's type: a seed infers a number as double
    or bigint, and `except` on Spark tells float from double and int from bigint."""
    yml = f"version: 2\nseeds:\n  - name: expected\n    config:\n      column_types:\n        {column}: {data_type}\n"
    return {"expected.csv": csv, "expected.yml": yml}


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


class TestTypeFloat(BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self):
        return _expected_seed(float_expected_csv, "float_col", "float")


class TestTypeInt(BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self):
        return _expected_seed(int_expected_csv, "int_col", "int")


class TestTypeNumeric(BaseTypeNumeric):
    def numeric_fixture_type(self):
        # Spark's decimal needs a precision and scale to hold the fixture's 1.2345
        return "decimal(28,6)"


class TestTypeString(BaseTypeString):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    pass
