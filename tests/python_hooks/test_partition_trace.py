"""Partitions read and written, from the lifecycle logs' rows (pure functions, no Spark)."""

from python_hooks.audit import partition_trace


def test_purge_reads_the_old_location_and_writes_the_new():
    rows = [
        {
            "database_name": "tracking",
            "table_name": "event",
            "partition_spec": "datepartition=2024-01-01/is_guest=true",
            "old_location": "file:/wh/tracking.db/event/datepartition=2024-01-01/is_guest=true",
            "new_location": "file:/wh/tracking.db/event/1700/datepartition=2024-01-01/is_guest=true",
        },
        {
            "database_name": "tracking",
            "table_name": "event",
            "partition_spec": "x=1",
            "old_location": None,
            "new_location": None,
        },
    ]
    read, written = partition_trace.purge_partitions(rows)
    assert read == [
        "tracking.event/datepartition=2024-01-01/is_guest=true @ file:/wh/tracking.db/event/datepartition=2024-01-01/is_guest=true"
    ]
    assert written == [
        "tracking.event/datepartition=2024-01-01/is_guest=true @ file:/wh/tracking.db/event/1700/datepartition=2024-01-01/is_guest=true"
    ]


def test_retention_writes_what_it_deleted_and_compaction_what_it_published():
    deleted = [
        {
            "database_name": "tracking",
            "table_name": "event_backup_1",
            "partition_spec": None,
            "location": "/wh/b",
            "succeeded": True,
        },
        {
            "database_name": "tracking",
            "table_name": "event_backup_2",
            "partition_spec": None,
            "location": "/wh/c",
            "succeeded": False,
        },
    ]
    assert partition_trace.retention_partitions(deleted) == ([], ["tracking.event_backup_1 @ /wh/b"])
    published = [
        {"dataset": "page_view_hourly", "partition": "ds=2024-01-01/hr=03"},
        {"dataset": "page_view_hourly", "partition": None},
    ]
    assert partition_trace.compaction_partitions(published) == ([], ["page_view_hourly/ds=2024-01-01/hr=03"])


def test_compaction_models_match_their_watermarks_by_dataset():
    hourly = {"name": "page_view_hourly", "config": {"meta": {"compaction": {"dataset": "page_view"}}}}
    assert partition_trace._dataset_names(hourly) == {"page_view_hourly", "page_view"}
    assert partition_trace._dataset_names({"name": "daily", "meta": {"compaction": {"daily_type": 2}}}) == {
        "daily"
    }
