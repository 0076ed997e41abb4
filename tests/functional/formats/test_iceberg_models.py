"""dbt models with file_format 'iceberg' and 'delta' on the session (docs/formats.md, "The formats
in a session"; macros/formats/iceberg_models.sql).

An Iceberg model's table is `iceberg.<schema>.<table>`: a table model is created with `create or
replace` (the replace keeps the older snapshot), an incremental model's second run merges into
the table (its snapshot's parent is the first run's, and the rows the run does not bring stay),
`ref()` from another model reads it through Iceberg's catalog, and the `dataset.descriptor` its
`tblproperties` config sets is in the metastore, where the purge reads it.  Delta models, whose
tables are in the session catalog already, build and merge the same way.  A model that changes
its format from Iceberg to parquet (or back) replaces the table.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from python_hooks.catalog import iceberg, tables
from tests import warehouse_fs
from tests.functional.purge.conftest import descriptor

GUEST = descriptor("id")

TABLE_SQL = """
{{{{ config(materialized='table', file_format='{fmt}', partition_by=['ds'], persist_docs={{'columns': true}},
    tblproperties={{'dataset.descriptor': '{descriptor}'}}) }}}}
select cast(id as bigint) as id, name, ds from values
{{% if var('round', 1) == 1 %}} (1, 'a', 'd1'), (2, 'b', 'd2') {{% else %}} (1, 'a2', 'd1') {{% endif %}}
as t(id, name, ds)
"""

MERGE_SQL = """
{{{{ config(materialized='incremental', file_format='{fmt}', incremental_strategy='merge', unique_key='id',
    tblproperties={{'dataset.descriptor': '{descriptor}'}}) }}}}
{{% if not is_incremental() %}}
select cast(1 as bigint) as id, 'first' as msg union all select cast(2 as bigint) as id, 'first' as msg
{{% else %}}
select id, msg from values (2, 'second'), (3, 'second') as t(id, msg)
where id > (select min(id) from {{{{ {this} }}}})
{{% endif %}}
"""

# a parquet model reading both formats by ref()
READER_SQL = """
{{ config(materialized='table') }}
select m.id, m.msg, t.name, d.msg as delta_msg
from {{ ref('ice_merge') }} as m
left join {{ ref('ice_table') }} as t on m.id = t.id
left join {{ ref('delta_merge') }} as d on m.id = d.id
"""

SWITCH_SQL = """
{{{{ config(materialized='table', file_format=var('{name}', '{first}')) }}}}
select cast(1 as bigint) as id
"""

MODELS_YML = """
version: 2
models:
  - name: ice_table
    columns:
      - name: id
        description: the guest's id
"""


def models() -> dict[str, str]:
    return {
        "ice_table.sql": TABLE_SQL.format(fmt="iceberg", descriptor=GUEST),
        # an Iceberg model reads its own table through Iceberg's catalog
        "ice_merge.sql": MERGE_SQL.format(
            fmt="iceberg", descriptor=GUEST, this="compliance.iceberg_relation(this)"
        ),
        "delta_table.sql": TABLE_SQL.format(fmt="delta", descriptor=GUEST),
        "delta_merge.sql": MERGE_SQL.format(fmt="delta", descriptor=GUEST, this="this"),
        "reader.sql": READER_SQL,
        "leaves_iceberg.sql": SWITCH_SQL.format(name="leaves_format", first="iceberg"),
        "joins_iceberg.sql": SWITCH_SQL.format(name="joins_format", first="parquet"),
        "_models.yml": MODELS_YML,
    }


def rows(spark: Any, table: str, columns: str = "id, msg") -> set[tuple[Any, ...]]:
    return {tuple(r) for r in spark.sql(f"select {columns} from {table}").collect()}


def snapshots(spark: Any, table: str) -> list[Any]:
    return spark.sql(f"select snapshot_id, parent_id from {table}.snapshots order by committed_at").collect()


def metastore_properties(spark: Any, database: str, table: str) -> dict[str, str]:
    """The table's properties as the purge reads them (the metastore, python_hooks/catalog/tables.py)."""
    found = tables.describe_table(spark, database, table)
    assert found["exists"], f"{database}.{table}"
    return found["properties"]


def run(**variables: Any) -> None:
    results = run_dbt(["run", "--vars", json.dumps(variables)])
    assert all(r.status == "success" for r in results), [(r.node.name, r.message) for r in results]


class TestIcebergAndDeltaModels:
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return models()

    @pytest.fixture(scope="class")
    def built(self, project: Any, spark: Any) -> Any:
        yield project.test_schema
        for table in ("ice_table", "ice_merge", "leaves_iceberg", "joins_iceberg"):
            spark.sql(f"drop table if exists iceberg.{project.test_schema}.{table} purge")

    def test_the_first_build_creates_the_iceberg_and_delta_tables(self, project, spark, built):
        run(round=1)
        db = built
        assert rows(spark, f"iceberg.{db}.ice_merge") == {(1, "first"), (2, "first")}
        assert rows(spark, f"iceberg.{db}.ice_table", "id, name, ds") == {(1, "a", "d1"), (2, "b", "d2")}
        assert rows(spark, f"{db}.delta_merge") == {(1, "first"), (2, "first")}
        for table in ("ice_table", "ice_merge", "leaves_iceberg"):
            assert metastore_properties(spark, db, table).get("table_type") == "ICEBERG", table
        for table in ("delta_table", "delta_merge"):
            assert tables.describe_table(spark, db, table)["provider"] == "delta", table
        # partitioned by the config, and the column's description persisted as its comment
        assert iceberg.identity_partitions(iceberg.load(spark, db, "ice_table")) == ["ds"]
        described = spark.sql(f"describe table iceberg.{db}.ice_table").collect()
        assert next(r.comment for r in described if r.col_name == "id") == "the guest's id"

    def test_the_descriptor_onboards_each_table_from_its_config(self, project, spark, built):
        db = built
        expected = json.loads(GUEST)
        for table in (
            "iceberg.{db}.ice_table",
            "iceberg.{db}.ice_merge",
            "{db}.delta_table",
            "{db}.delta_merge",
        ):
            shown = {r.key: r.value for r in spark.sql(f"show tblproperties {table.format(db=db)}").collect()}
            assert json.loads(shown["dataset.descriptor"]) == expected, table
        # an Iceberg table's properties are the metastore's too, where the purge reads them
        for table in ("ice_table", "ice_merge"):
            found = metastore_properties(spark, db, table)["dataset.descriptor"]
            assert tables.descriptor_identifier(found) == "id", table

    def test_the_second_run_merges_into_the_iceberg_table(self, project, spark, built):
        db = built
        before = snapshots(spark, f"iceberg.{db}.ice_merge")
        table_before = snapshots(spark, f"iceberg.{db}.ice_table")
        run(round=2)
        # key 2 updated, key 3 added, key 1 (not in the run's rows) kept
        assert rows(spark, f"iceberg.{db}.ice_merge") == {(1, "first"), (2, "second"), (3, "second")}
        after = snapshots(spark, f"iceberg.{db}.ice_merge")
        assert len(after) == len(before) + 1
        # a merge: the new snapshot's parent is the first run's (a recreated table starts anew)
        assert after[-1].parent_id == before[-1].snapshot_id
        history = spark.sql(f"select is_current_ancestor from iceberg.{db}.ice_merge.history").collect()
        assert all(r.is_current_ancestor for r in history)
        # the table model is replaced, not dropped: its first snapshot is still the table's
        assert rows(spark, f"iceberg.{db}.ice_table", "id, name, ds") == {(1, "a2", "d1")}
        table_after = snapshots(spark, f"iceberg.{db}.ice_table")
        assert [s.snapshot_id for s in table_after[:-1]] == [s.snapshot_id for s in table_before]
        assert json.loads(metastore_properties(spark, db, "ice_table")["dataset.descriptor"])

    def test_the_second_run_merges_into_the_delta_table(self, project, spark, built):
        db = built
        assert rows(spark, f"{db}.delta_merge") == {(1, "first"), (2, "second"), (3, "second")}
        operations = [r.operation for r in spark.sql(f"describe history {db}.delta_merge").collect()]
        assert operations[0] == "MERGE", operations
        assert rows(spark, f"{db}.delta_table", "id, name, ds") == {(1, "a2", "d1")}

    def test_ref_reads_the_iceberg_tables(self, project, spark, built):
        db = built
        assert rows(spark, f"{db}.reader", "id, msg, name, delta_msg") == {
            (1, "first", "a2", "first"),
            (2, "second", None, "second"),
            (3, "second", None, "second"),
        }

    def test_a_model_changing_its_format_replaces_its_table(self, project, spark, built):
        db = built
        location = tables.describe_table(spark, db, "leaves_iceberg")["location"]
        run(leaves_format="parquet", joins_format="iceberg")
        left = tables.describe_table(spark, db, "leaves_iceberg")
        assert left["provider"] == "parquet" and "table_type" not in left["properties"], left
        assert rows(spark, f"{db}.leaves_iceberg", "id") == {(1,)}
        # dropped with its files: no Iceberg metadata is left under the location
        assert left["location"] == location
        assert not [f for f in warehouse_fs.files(spark, location) if "/metadata/" in f]
        assert metastore_properties(spark, db, "joins_iceberg").get("table_type") == "ICEBERG"
        assert rows(spark, f"iceberg.{db}.joins_iceberg", "id") == {(1,)}
