"""Snapshot + delta merge (member_merged) and the parquet SCD2 snapshot of it, on Spark."""

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import repo_files

SNAPSHOT = """
select * from values
    (1, 'a', 'a@x', 'free', timestamp'2024-01-01 00:00:00'),
    (2, 'b', 'b@x', 'free', timestamp'2024-01-01 00:00:00'),
    (3, 'c', 'c@x', 'basic', timestamp'2024-01-01 00:00:00')
    as t(member_id, name, email, plan, updated_at)
"""
# adds `country`
DELTA_1 = """
select * from values
    (2, 'b1', 'b1@x', 'basic', 'US', timestamp'2024-02-01 00:00:00'),
    (4, 'd', 'd@x', 'free', 'DE', timestamp'2024-02-01 00:00:00')
    as t(member_id, name, email, plan, country, updated_at)
"""
# drops `plan`, adds `tier`; member 2 comes with an OLDER updated_at than in delta 1
DELTA_2 = """
select * from values
    (2, 'b2', 'b2@x', 'FR', 1, timestamp'2024-01-15 00:00:00'),
    (4, 'd2', 'd2@x', 'IN', 2, timestamp'2024-03-01 00:00:00'),
    (5, 'e', 'e@x', 'BR', 3, timestamp'2024-03-01 00:00:00')
    as t(member_id, name, email, country, tier, updated_at)
"""
DELTA_3 = """
select * from values
    (6, 'f', 'f@x', 'US', 1, timestamp'2024-04-01 00:00:00')
    as t(member_id, name, email, country, tier, updated_at)
"""
MERGED_YML = """
version: 2
models:
  - name: member_merged
    config:
      merge_key: member_id
      member_merge_mode: "{{ var('member_merge_mode', 'delta_order') }}"
      timestamp_column: updated_at
"""
COLUMNS = ["member_id", "name", "email", "country", "tier", "updated_at"]


class TestMemberMergeAndSnapshot:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "name": "compliance",
            "models": {"compliance": {"+file_format": "parquet"}},
            "snapshots": {"compliance": {"+file_format": "parquet"}},
            "vars": {"member_snapshot": "crm_snapshot", "member_deltas": ["crm_delta_1", "crm_delta_2"]},
        }

    @pytest.fixture(scope="class")
    def models(self):
        compaction = repo_files("models", "compaction")
        return {
            "crm_snapshot.sql": SNAPSHOT,
            "crm_delta_1.sql": DELTA_1,
            "crm_delta_2.sql": DELTA_2,
            "crm_delta_3.sql": DELTA_3,
            "member_merge_inputs.sql": compaction["member_merge_inputs.sql"],
            "member_merged.py": compaction["member_merged.py"],
            "merged.yml": MERGED_YML,
        }

    @pytest.fixture(scope="class")
    def snapshots(self):
        return repo_files("snapshots")

    @staticmethod
    def merged(project, spark):
        table = spark.table(f"{project.test_schema}.member_merged")
        return table.columns, {r.member_id: tuple(r)[1:] for r in table.collect()}

    def test_later_delta_wins_with_the_last_deltas_schema(self, project, spark):
        run_dbt(["run"])
        columns, rows = self.merged(project, spark)
        assert columns == COLUMNS  # `plan` (not in the last delta) dropped, `country`, `tier` added
        assert rows[1][:4] == ("a", "a@x", None, None)  # only in the snapshot: new columns null
        assert rows[2][:4] == ("b2", "b2@x", "FR", 1)  # delta 2 beats delta 1 beats the snapshot
        assert rows[3][:2] == ("c", "c@x")
        assert rows[4][:4] == ("d2", "d2@x", "IN", 2)
        assert sorted(rows) == [1, 2, 3, 4, 5]
        order = spark.sql(
            f"select input_name from {project.test_schema}.member_merge_inputs order by position"
        )
        assert [r.input_name for r in order.collect()] == ["crm_snapshot", "crm_delta_1", "crm_delta_2"]

    def test_timestamp_mode_keeps_the_latest_row(self, project, spark):
        run_dbt(["run", "--select", "member_merged", "--vars", "{member_merge_mode: latest_timestamp}"])
        _, rows = self.merged(project, spark)
        assert rows[2][:4] == ("b1", "b1@x", "US", None)  # delta 1's row is newer than delta 2's
        assert rows[4][:2] == ("d2", "d2@x")

    def test_snapshot_on_parquet_insert_update_unchanged(self, project, spark):
        schema = project.test_schema
        run_dbt(["run", "--select", "member_merged"])
        run_dbt(["snapshot"])
        first = spark.sql(f"describe table extended {schema}.member_history").collect()
        first_location = next(r.data_type for r in first if r.col_name == "Location")
        assert (
            spark.sql(f"select count(*) from {schema}.member_history where dbt_valid_to is null").first()[0]
            == 5
        )

        # member 2 changes (timestamp mode), member 6 arrives (delta 3), the others stay the same
        run_dbt(
            [
                "run",
                "--select",
                "member_merge_inputs",
                "member_merged",
                "--vars",
                "{member_merge_mode: latest_timestamp, member_deltas: [crm_delta_1, crm_delta_2, crm_delta_3]}",
            ]
        )
        run_dbt(["snapshot"])
        history = spark.sql(
            f"select member_id, name, dbt_valid_from, dbt_valid_to from {schema}.member_history"
        ).collect()
        versions = {}
        for row in history:
            versions.setdefault(row.member_id, []).append(row)
        assert sorted(versions) == [1, 2, 3, 4, 5, 6]
        assert all(len(versions[m]) == 1 and versions[m][0].dbt_valid_to is None for m in (1, 3, 4, 5, 6))
        old, new = sorted(versions[2], key=lambda r: r.dbt_valid_from)
        assert (old.name, new.name) == ("b2", "b1")
        assert old.dbt_valid_to == new.dbt_valid_from and new.dbt_valid_to is None
        assert versions[6][0].dbt_valid_from == new.dbt_valid_from

        # rewritten into a new directory and swapped; the old one recorded for the stale-data cleaner
        second = spark.sql(f"describe table extended {schema}.member_history").collect()
        second_location = next(r.data_type for r in second if r.col_name == "Location")
        assert second_location != first_location and "member_history__v" in second_location
        stale = spark.sql(
            f"select location, reason from {schema}.stale_data_records where table_name = 'member_history'"
        ).collect()
        # before anything was written, the new directory and the one it replaces (a kill at any
        # step leaves both recorded); after the swap, the replaced one again (its grace period)
        assert sorted((r.location, r.reason.split(":")[0]) for r in stale) == sorted(
            [
                (second_location, "snapshot rewrite"),
                (first_location, "snapshot rewrite"),
                (first_location, "snapshot rewrite"),
            ]
        )
        assert sum(r.reason == "snapshot rewrite" for r in stale) == 1

    def test_snapshot_without_changes_keeps_the_history(self, project, spark):
        run_dbt(["snapshot"])
        counts = spark.sql(
            f"select count(*) as versions, count_if(dbt_valid_to is null) as current"
            f" from {project.test_schema}.member_history"
        ).first()
        assert (counts.versions, counts.current) == (7, 6)


ONE_ROW = "select 1 as member_id, 'a' as name"
FORMAT_SNAPSHOTS = """
snapshots:
  - name: as_json
    relation: ref('one_row')
    config: {unique_key: member_id, strategy: check, check_cols: all, file_format: json}
  - name: partitioned
    relation: ref('one_row')
    config: {unique_key: member_id, strategy: check, check_cols: all, file_format: parquet, partition_by: name}
"""


class TestSnapshotRefusesWhatItCannotSwap:
    """The snapshot materialization rewrites parquet/ORC into a new directory and swaps the
    location: another format or partition_by is refused before anything is written, by name."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"one_row.sql": ONE_ROW}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshots.yml": FORMAT_SNAPSHOTS}

    def test_another_format_or_partition_by_is_refused_by_name(self, project, spark):
        run_dbt(["run"])
        results = run_dbt(["snapshot"], expect_pass=False)
        messages = {r.node.name: r.message for r in results}
        schema = project.test_schema
        assert f"Snapshot {schema}.as_json: file_format 'json' is not supported" in messages["as_json"]
        assert "use 'parquet' or 'orc'" in messages["as_json"]
        assert f"Snapshot {schema}.partitioned: partition_by is not supported" in messages["partitioned"]
        tables = {r.tableName for r in spark.sql(f"show tables in {schema}").collect()}
        assert not tables & {"as_json", "partitioned"}  # nothing was created
