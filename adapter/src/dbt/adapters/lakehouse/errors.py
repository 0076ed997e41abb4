"""The one error type of the adapter and of the project's Python hooks."""

from __future__ import annotations

from dbt_common.exceptions import DbtRuntimeError


class LakehouseError(DbtRuntimeError):
    """An operation that cannot be done as asked; the message names the input and what to do.

    Filesystem operations, the run lock, restore, retention's safety rules, the audit load and
    the workflow graph's selection all raise this one type.
    """
