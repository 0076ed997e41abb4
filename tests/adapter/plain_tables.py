"""dbt-tests-adapter's `update_rows` for tables without `update` (plain parquet and Hive tables).

dbt.tests.util.update_rows edits a seed in place with the adapter's `update_column_sql`, an
`update` statement, which Spark runs only on Delta, Iceberg or Hudi tables.  This one computes the
same clause (the adapter's `timestamp_add_sql` / `string_add_sql`) into a copy of the table and
overwrites the table from it.  A test that edits its seed this way (the snapshot tests) uses it in
place of dbt's through `replace_update_rows`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from dbt.tests.util import generate_update_clause, get_connection, relation_from_name


def update_rows(adapter: Any, update_rows_config: dict[str, Any]) -> None:
    """dbt.tests.util.update_rows, with the same config: name, dst_col, clause and where."""
    clause = generate_update_clause(adapter, update_rows_config["clause"])
    where = update_rows_config.get("where")
    column = update_rows_config["dst_col"]
    relation = relation_from_name(adapter, update_rows_config["name"])
    copy = relation.incorporate(path={"identifier": f"{relation.identifier}__updated"})
    value = f"case when {where} then {clause} else {column} end" if where else clause
    with get_connection(adapter):
        names = [c.name for c in adapter.get_columns_in_relation(relation)]
        select = ", ".join(f"{value} as {name}" if name == column else name for name in names)
        adapter.execute(f"create table {copy} as select {select} from {relation}")
        adapter.execute(f"insert overwrite table {relation} select * from {copy}")
        adapter.execute(f"drop table {copy}")


def replace_update_rows(monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> None:
    """Make the base test modules that imported dbt's `update_rows` call this one."""
    for module in modules:
        monkeypatch.setattr(module, "update_rows", update_rows)
