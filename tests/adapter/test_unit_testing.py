"""dbt unit tests (`unit_tests:`) on the lakehouse adapter."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # (SQL value, YAML value): Spark's literals, and its complex types given as SQL
        return [
            ["42", "42"],
            ["cast(3.25 as decimal(5,2))", "3.25"],
            ["'007'", "007"],
            ["'a value'", "a value"],
            ["false", "false"],
            ["date '2024-02-29'", "2024-02-29"],
            ["timestamp '2024-01-02 03:04:05'", "2024-01-02 03:04:05"],
            ["array('a', 'b')", """'array("a", "b")'"""],
            ["map('k', 1, 'l', null)", """'map("k", 1, "l", null)'"""],
            ["named_struct('x', 1, 'y', 'z')", """'named_struct("x", 1, "y", "z")'"""],
        ]


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass
