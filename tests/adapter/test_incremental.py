"""Incremental models on plain parquet/Hive tables: append, insert_overwrite, microbatch.

`merge` (and with it unique_key upserts, predicates and merge_exclude_columns) needs Delta,
Iceberg or Hudi; those classes are skipped here, as dbt-spark skips them for its session profile.
"""

from __future__ import annotations

import datetime as dt

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt

NEEDS_MERGE = (
    "incremental_strategy 'merge' needs Delta, Iceberg or Hudi; plain parquet/Hive tables have no merge"
)


class TestAppendOnSchemaChange(BaseIncrementalOnSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}

    def test_run_incremental_append_new_columns(self, project):
        # only adding: a model that drops a column while appending fails in dbt-spark's insert,
        # which selects the table's columns from the new rows (as on Delta, see dbt-spark's tests)
        self.run_incremental_append_new_columns(project)

    def test_run_incremental_sync_all_columns(self, project):
        # a plain Spark table cannot drop a column: sync_all_columns is refused, naming the reason
        run_dbt(["run", "--select", "model_a incremental_sync_all_columns", "--full-refresh"])
        results = run_dbt(["run", "--select", "model_a incremental_sync_all_columns"], expect_pass=False)
        failed = [r for r in results if r.status == "error"]
        assert len(failed) == 1
        assert "does not support dropping columns" in failed[0].message


class TestInsertOverwriteOnSchemaChange(TestAppendOnSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+file_format": "parquet",
                "+partition_by": "id",
                "+incremental_strategy": "insert_overwrite",
            }
        }


# Column names that need quoting (a keyword, a dash), added by append_new_columns on the second run
SPECIAL_CHARS_SOURCE_SQL = """
{{ config(materialized='table') }}
select id, concat('v', id) as `select`, id * 111 as `field-with-dash`
from values (1), (2), (3), (4), (5), (6) as source (id)
"""

SPECIAL_CHARS_INCREMENTAL_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
with source as (select * from {{ ref('special_chars_source') }})
{% if is_incremental() %}
select id, `select`, `field-with-dash` from source where id not in (select id from {{ this }})
{% else %}
select id, `select` from source where id <= 3
{% endif %}
"""

# what the incremental model holds after two runs: the new column empty for the first rows
SPECIAL_CHARS_TARGET_SQL = """
{{ config(materialized='table') }}
select
    id,
    `select`,
    case when id <= 3 then null else `field-with-dash` end as `field-with-dash`
from {{ ref('special_chars_source') }}
"""


class TestAppendOnSchemaChangeSpecialChars(BaseIncrementalOnSchemaChangeSetup):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "special_chars_source.sql": SPECIAL_CHARS_SOURCE_SQL,
            "special_chars_incremental.sql": SPECIAL_CHARS_INCREMENTAL_SQL,
            "special_chars_target.sql": SPECIAL_CHARS_TARGET_SQL,
        }

    def test_new_columns_with_special_characters(self, project):
        self.run_twice_and_assert(None, "special_chars_incremental", "special_chars_target", project)


# A model whose second run brings a changed row for day 2 and a new day 3: per strategy, the
# table after both runs.
TWO_RUNS_SQL = """
{{{{ config(materialized='incremental', {config}) }}}}

{{% if not is_incremental() %}}
select cast(1 as bigint) as id, 'first' as msg, '2024-01-01' as day
union all
select cast(2 as bigint) as id, 'first' as msg, '2024-01-02' as day
{{% else %}}
select cast(2 as bigint) as id, 'second' as msg, '2024-01-02' as day
union all
select cast(3 as bigint) as id, 'second' as msg, '2024-01-03' as day
{{% endif %}}
"""

STRATEGIES = {
    "default_append": "",
    "append_parquet": "incremental_strategy='append', file_format='parquet'",
    "overwrite_partitions": "incremental_strategy='insert_overwrite', file_format='parquet', partition_by=['day']",
    "overwrite_table": "incremental_strategy='insert_overwrite', file_format='parquet'",
}

EXPECTED = {
    "default_append": {(1, "first"), (2, "first"), (2, "second"), (3, "second")},
    "append_parquet": {(1, "first"), (2, "first"), (2, "second"), (3, "second")},
    # the days the second run brings are replaced, day 1 is kept
    "overwrite_partitions": {(1, "first"), (2, "second"), (3, "second")},
    # without partitions, insert_overwrite replaces the whole table
    "overwrite_table": {(2, "second"), (3, "second")},
}


class TestIncrementalStrategies:
    @pytest.fixture(scope="class")
    def models(self):
        return {f"{name}.sql": TWO_RUNS_SQL.format(config=config) for name, config in STRATEGIES.items()}

    def test_each_strategy_after_two_runs(self, project):
        assert len(run_dbt(["run"])) == len(STRATEGIES)
        assert len(run_dbt(["run"])) == len(STRATEGIES)
        for name, expected in EXPECTED.items():
            rows = project.run_sql(f"select id, msg from {project.test_schema}.{name}", fetch="all")
            assert {tuple(row) for row in rows} == expected, name


# Configurations the adapter refuses before it writes anything, with the reason in the message.
BAD_CONFIGS = {
    "bad_file_format": ("file_format='something_else'", "Invalid file format provided"),
    "merge_not_delta": (
        "incremental_strategy='merge', file_format='parquet'",
        "You can only choose this strategy",
    ),
    "bad_strategy": (
        "incremental_strategy='something_else', file_format='parquet'",
        "Invalid incremental strategy",
    ),
}


class TestBadIncrementalConfigs:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            f"{name}.sql": TWO_RUNS_SQL.format(config=config) for name, (config, _) in BAD_CONFIGS.items()
        }

    def test_refused_with_a_compilation_error(self, project):
        results = run_dbt(["run"], expect_pass=False)
        assert {r.node.name: r.status for r in results} == {name: "error" for name in BAD_CONFIGS}
        for result in results:
            assert "Compilation Error" in result.message
            assert BAD_CONFIGS[result.node.name][1] in result.message


class TestMicrobatch(BaseMicrobatch):
    # no unique_key: each batch replaces its day's partition (insert_overwrite on parquet)
    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        begin = dt.datetime(2020, 1, 1)
        return (
            "{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',"
            f" batch_size='day', begin=modules.datetime.datetime({begin.year}, {begin.month}, {begin.day}),"
            " partition_by=['date_day'], file_format='parquet') }}\n"
            "select *, cast(event_time as date) as date_day from {{ ref('input_model') }}\n"
        )


@pytest.mark.skip(reason=NEEDS_MERGE)
class TestIncrementalUniqueKey(BaseIncrementalUniqueKey):
    pass


@pytest.mark.skip(reason=NEEDS_MERGE)
class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


@pytest.mark.skip(reason=NEEDS_MERGE)
class TestIncrementalPredicates(BaseIncrementalPredicates):
    pass
