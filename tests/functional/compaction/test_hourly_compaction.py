"""Hourly dedup compaction, its time window, completeness, late data and the daily roll-up, on Spark.

One class-scoped project; the tests run in order and each builds on the warehouse state the
previous one left, like successive scheduled runs.  Every hour of the staging table holds six
records: event 1 landed twice byte for byte, event 2 re-sent with a later event_ts, event 3
re-sent with the same event_ts and a later ingested_at (a tie on the ordering column).
"""

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import repo_files

NOW = "2024-01-10 12:00:00"
LIMIT = "spark.sql.optimizer.windowGroupLimitThreshold"
LATER = "2024-01-10 12:20:00"

HOURS = {
    ("2024-01-10", 10): 6,  # inside the window
    ("2024-01-10", 11): 6,  # started exactly min_time_ago (1h) before now: inside
    ("2024-01-10", 12): 6,  # too recent
    ("2024-01-07", 12): 6,  # started exactly max_time_ago (3d) before now: outside
    ("2024-01-07", 13): 6,  # just inside
    ("2024-01-10", 9): 10,  # incomplete, still within the completeness timeout: held
    ("2024-01-08", 0): 10,  # incomplete and timed out
}


def hour_rows(ds, hr):
    at = f"{ds} {hr:02d}"
    rows = [
        (1, "a", f"{at}:00:01", f"{at}:30:00"),
        (1, "a", f"{at}:00:01", f"{at}:30:00"),
        (2, "b", f"{at}:00:02", f"{at}:30:00"),
        (2, "b2", f"{at}:00:05", f"{at}:40:00"),
        (3, "c", f"{at}:00:03", f"{at}:31:00"),
        (3, "c-tie", f"{at}:00:03", f"{at}:45:00"),
    ]
    return rows


def values(rows, ds, hr):
    return ", ".join(
        f"({event_id}, 7, '{page}', timestamp'{ts}', timestamp'{ingested}', '{ds}', {hr})"
        for event_id, page, ts, ingested in rows
    )


def hourly_model(meta):
    return (
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite',"
        " partition_by=['ds', 'hr'], meta={'compaction': " + repr(meta) + "},"
        f" session_conf={{'{LIMIT}': '-1'}},"
        ' pre_hook="{{ compliance.prepare_hourly_compaction() }}",'
        ' post_hook="{{ compliance.finish_hourly_compaction() }}") }}\n'
        "-- depends_on: {{ source('raw', 'page_view_staging') }}\n"
        "-- depends_on: {{ source('raw', 'ingestion_counts') }}\n"
        "{{ compliance.hourly_compaction_sql() }}\n"
    )


def daily_model(daily_type):
    return (
        "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['ds'],"
        f" meta={{'compaction': {{'daily_type': {daily_type}, 'dedup': 'key', 'key': ['event_id'],"
        " 'order_by': 'event_ts', 'tie_breakers': ['ingested_at desc']}}) }}\n"
        "{{ compliance.daily_compaction_sql(ref('page_view_hourly')) }}\n"
    )


SOURCES = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: page_view_staging
      - name: ingestion_counts
"""


class TestHourlyCompaction:
    @pytest.fixture(scope="class")
    def models(self):
        key_meta = {
            "dataset": "page_view",
            "source": "raw.page_view_staging",
            "expected_counts": "raw.ingestion_counts",
            "dedup": "key",
            "key": ["event_id"],
            "order_by": "event_ts",
            "tie_breakers": ["ingested_at desc"],
            "completeness_timeout_action": "skip",
        }
        all_meta = {
            "dataset": "page_view_all",
            "source": "raw.page_view_staging",
            "expected_counts": "raw.ingestion_counts",
            "dedup": "all",
            "late_data_policy": "recompact",
        }
        return {
            "sources.yml": SOURCES,
            "page_view_hourly.sql": hourly_model(key_meta),
            "page_view_hourly_all.sql": hourly_model(all_meta),
            "page_view_daily.sql": daily_model(2),
            "page_view_daily_concat.sql": daily_model(1),
        }

    @pytest.fixture(scope="class")
    def staging(self, project, spark):
        schema = project.test_schema
        spark.sql(
            f"create table {schema}.page_view_staging (event_id bigint, member_id bigint, page string,"
            " event_ts timestamp, ingested_at timestamp, ds string, hr int) using parquet partitioned by (ds, hr)"
        )
        spark.sql(
            f"create table {schema}.ingestion_counts (ds string, hr int, expected_count bigint) using parquet"
        )
        for (ds, hr), expected in HOURS.items():
            spark.sql(f"insert into {schema}.page_view_staging values {values(hour_rows(ds, hr), ds, hr)}")
            spark.sql(f"insert into {schema}.ingestion_counts values ('{ds}', {hr}, {expected})")
        return schema

    @staticmethod
    def hours(spark, table):
        return sorted((r.ds, int(r.hr)) for r in spark.sql(f"select distinct ds, hr from {table}").collect())

    @staticmethod
    def compact(now):
        """Both hourly models (key and all-fields dedup), as if it were `now`."""
        run_dbt(
            [
                "run",
                "--select",
                "page_view_hourly",
                "page_view_hourly_all",
                "--vars",
                f"{{compaction_now: '{now}'}}",
            ]
        )

    @staticmethod
    def pages(spark, table, ds, hr):
        rows = spark.sql(f"select event_id, page from {table} where ds = '{ds}' and hr = {hr}").collect()
        return sorted((r.event_id, r.page) for r in rows)

    def test_window_dedup_and_completeness(self, project, spark, staging):
        # the models' session_conf holds for their statements; the session's own value comes back
        spark.conf.set(LIMIT, "500")
        try:
            self.compact(NOW)
            assert spark.conf.get(LIMIT) == "500"
        finally:
            spark.conf.unset(LIMIT)
        key_table, all_table = f"{staging}.page_view_hourly", f"{staging}.page_view_hourly_all"
        # window [now - 3d, now - 1h], complete hours only; the timed-out hour: skipped (key), published (all)
        assert self.hours(spark, key_table) == [("2024-01-07", 13), ("2024-01-10", 10), ("2024-01-10", 11)]
        assert self.hours(spark, all_table) == [
            ("2024-01-07", 13),
            ("2024-01-08", 0),
            ("2024-01-10", 10),
            ("2024-01-10", 11),
        ]
        # key mode: one row per event, the latest event_ts, the tie broken by the latest ingested_at
        assert self.pages(spark, key_table, "2024-01-10", 10) == [(1, "a"), (2, "b2"), (3, "c-tie")]
        # all-fields mode: only the byte-for-byte duplicate goes
        assert self.pages(spark, all_table, "2024-01-10", 10) == [
            (1, "a"),
            (2, "b"),
            (2, "b2"),
            (3, "c"),
            (3, "c-tie"),
        ]
        marks = spark.sql(
            f"select `partition`, rows_in, rows_out, cast(compaction_started_at as string) as started"
            f" from {staging}.compaction_watermarks where dataset = 'page_view' order by 1"
        ).collect()
        assert [(m.partition, m.rows_in, m.rows_out, m.started) for m in marks] == [
            ("ds=2024-01-07/hr=13", 6, 3, NOW),
            ("ds=2024-01-10/hr=10", 6, 3, NOW),
            ("ds=2024-01-10/hr=11", 6, 3, NOW),
        ]
        log = {
            (r.dataset, r.ds, r.hr): (r.action, r.reason)
            for r in spark.sql(f"select * from {staging}.compaction_log").collect()
        }
        assert log[("page_view", "2024-01-10", "9")] == ("hold", "incomplete: 6 of 10 expected rows")
        assert log[("page_view", "2024-01-08", "0")][0] == "skip"
        assert "timed out after 24h, skipped for good" in log[("page_view", "2024-01-08", "0")][1]
        assert log[("page_view_all", "2024-01-08", "0")][0] == "compact"
        assert "published anyway" in log[("page_view_all", "2024-01-08", "0")][1]
        # the plan table holds the run's plan (written as a parquet file, not by a query): what it logged
        plan = spark.sql(f"select * from {staging}.page_view_hourly__plan").collect()
        logged = spark.sql(f"select * from {staging}.compaction_log where dataset = 'page_view'").collect()
        assert len(plan) == 5
        assert sorted(tuple(r.asDict().values()) for r in plan) == sorted(
            tuple(v for k, v in r.asDict().items() if k != "logged_at") for r in logged
        )

    def test_skipped_hour_stays_skipped_and_rerun_is_idempotent(self, project, spark, staging):
        # the timed-out hour becomes complete, but it was skipped for good
        spark.sql(f"truncate table {staging}.ingestion_counts")
        for ds, hr in HOURS:
            spark.sql(f"insert into {staging}.ingestion_counts values ('{ds}', {hr}, 6)")
        run_dbt(["run", "--select", "page_view_hourly", "--vars", f"{{compaction_now: '{NOW}'}}"])
        hours = self.hours(spark, f"{staging}.page_view_hourly")
        assert ("2024-01-08", 0) not in hours and ("2024-01-10", 9) in hours  # the held hour: now complete
        assert spark.sql(f"select count(*) from {staging}.page_view_hourly").first()[0] == 3 * 4
        marks = spark.sql(f"select count(*) from {staging}.compaction_watermarks where dataset = 'page_view'")
        assert marks.first()[0] == 4  # the three hours were up to date: no new completion record

    def test_late_rows_copy_late_and_recompact(self, project, spark, staging):
        late = [
            (2, "late-b", "2024-01-10 10:00:09", "2024-01-10 12:10:00"),
            (4, "new", "2024-01-10 10:00:04", "2024-01-10 12:10:00"),
            (4, "new", "2024-01-10 10:00:04", "2024-01-10 12:10:00"),
        ]
        spark.sql(f"insert into {staging}.page_view_staging values {values(late, '2024-01-10', 10)}")
        self.compact(LATER)
        # copy_late (key model): the published hour is untouched, the late rows go to _late, deduplicated
        assert self.pages(spark, f"{staging}.page_view_hourly", "2024-01-10", 10) == [
            (1, "a"),
            (2, "b2"),
            (3, "c-tie"),
        ]
        assert self.pages(spark, f"{staging}.page_view_hourly_late", "2024-01-10", 10) == [
            (2, "late-b"),
            (4, "new"),
        ]
        # recompact (all-fields model): the hour is compacted again from its input
        assert self.pages(spark, f"{staging}.page_view_hourly_all", "2024-01-10", 10) == [
            (1, "a"),
            (2, "b"),
            (2, "b2"),
            (2, "late-b"),
            (3, "c"),
            (3, "c-tie"),
            (4, "new"),
        ]
        marks = {
            (r.dataset, r.action): (r.rows_in, r.rows_out, str(r.compaction_started_at))
            for r in spark.sql(
                f"select * from {staging}.compaction_watermarks where ds = '2024-01-10' and hr = '10'"
            ).collect()
        }
        assert marks[("page_view", "copy_late")] == (3, 2, LATER)
        assert marks[("page_view_all", "recompact")] == (9, 7, LATER)
        # the watermark moved: running again copies nothing twice
        run_dbt(["run", "--select", "page_view_hourly", "--vars", f"{{compaction_now: '{LATER}'}}"])
        assert spark.sql(f"select count(*) from {staging}.page_view_hourly_late").first()[0] == 2

    def test_recompaction_from_output(self, project, spark, staging):
        before = spark.sql(f"select count(*) from {staging}.compaction_watermarks").first()[0]
        run_dbt(
            [
                "run",
                "--select",
                "page_view_hourly",
                "--vars",
                f"{{compaction_now: '{LATER}', recompact_from_output: true}}",
            ]
        )
        assert self.pages(spark, f"{staging}.page_view_hourly", "2024-01-10", 10) == [
            (1, "a"),
            (2, "late-b"),
            (3, "c-tie"),
            (4, "new"),
        ]
        # other hours untouched, and the watermark did not move
        assert self.pages(spark, f"{staging}.page_view_hourly", "2024-01-10", 11) == [
            (1, "a"),
            (2, "b2"),
            (3, "c-tie"),
        ]
        assert spark.sql(f"select count(*) from {staging}.compaction_watermarks").first()[0] == before
        actions = spark.sql(
            f"select action from {staging}.compaction_log where invocation_id = (select max_by(invocation_id, logged_at)"
            f" from {staging}.compaction_log)"
        ).collect()
        assert [a.action for a in actions] == ["recompact_from_output"]
        assert not spark.catalog.tableExists(f"{staging}.page_view_hourly__recompact")

    def test_daily_type_1_concatenates_type_2_deduplicates(self, project, spark, staging):
        run_dbt(
            [
                "run",
                "--select",
                "page_view_daily",
                "page_view_daily_concat",
                "--vars",
                "{compaction_now: '2024-01-11 02:00:00'}",
            ]
        )
        # 2024-01-10 is closed: hours 9, 10 (4 events after recompaction) and 11; event ids repeat across hours
        concat = spark.sql(
            f"select ds, count(*) as n from {staging}.page_view_daily_concat group by ds"
        ).collect()
        assert [(r.ds, r.n) for r in concat] == [("2024-01-10", 3 + 4 + 3)]
        deduped = spark.sql(
            f"select event_id, page, cast(event_ts as string) as ts from {staging}.page_view_daily where ds = '2024-01-10'"
        ).collect()
        # one row per event for the whole day: the latest event_ts over its hours
        assert sorted((r.event_id, r.page, r.ts) for r in deduped) == [
            (1, "a", "2024-01-10 11:00:01"),
            (2, "b2", "2024-01-10 11:00:05"),
            (3, "c-tie", "2024-01-10 11:00:03"),
            (4, "new", "2024-01-10 10:00:04"),
        ]
        assert "hr" not in spark.table(f"{staging}.page_view_daily").columns

    def test_bad_setting_names_model_and_accepted_values(self, project):
        results = run_dbt(
            ["run", "--select", "page_view_hourly", "--vars", "{compaction_min_time_ago: 'one hour'}"],
            expect_pass=False,
        )
        assert "Invalid compaction_min_time_ago 'one hour'" in results[0].message

    def test_a_missing_input_names_itself_and_the_model(self, project, spark, staging):
        spark.sql(f"alter table {staging}.page_view_staging rename to {staging}.page_view_staging_away")
        try:
            results = run_dbt(["run", "--select", "page_view_hourly"], expect_pass=False)
        finally:
            spark.sql(f"alter table {staging}.page_view_staging_away rename to {staging}.page_view_staging")
        assert f"Hourly input {staging}.page_view_staging of model page_view_hourly does not exist" in (
            results[0].message
        )


def test_repo_models_are_onboarding_examples():
    """The shipped hourly model is the one-file onboarding template the docs describe."""
    hourly = repo_files("models", "compaction")["page_view_hourly.sql"]
    assert (
        "compliance.prepare_hourly_compaction()" in hourly and "compliance.hourly_compaction_sql()" in hourly
    )
