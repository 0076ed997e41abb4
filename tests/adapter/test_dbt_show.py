"""`dbt show` on the lakehouse adapter."""

from __future__ import annotations

from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # the base test matches the repr of the exception, which pytest shortens to its start and
    # end: the end is Spark's parse error marking the second limit (`limit 1` then `--^^^`)
    DATABASE_ERROR_MESSAGE = "--^^^"
