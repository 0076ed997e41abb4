{#-
    Hourly dedup compaction of var `page_view_hourly_input` (default the source
    `kafka.page_view_hourly_staging`), checked against var `page_view_expected_counts` (Gobblin's
    MapReduce dedup compactor).  Onboarding another hourly dataset is a copy of this file with
    its own meta.

    `session_conf` is set by the pre-hook for the dedup statement and put back by the post-hook:
    no per-key limit before the window's shuffle, which would sort every row twice to drop a few
    duplicates (python_hooks/compaction/session_settings.py).
-#}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['ds', 'hr'],
    meta={'compaction': {
        'dataset': 'page_view',
        'source': var('page_view_hourly_input', 'kafka.page_view_hourly_staging'),
        'expected_counts': var('page_view_expected_counts', 'kafka.ingestion_counts'),
        'dedup': 'key',
        'key': ['event_id'],
        'order_by': 'event_ts',
        'tie_breakers': ['ingested_at desc'],
    }},
    session_conf={'spark.sql.optimizer.windowGroupLimitThreshold': '-1'},
    pre_hook="{{ compliance.prepare_hourly_compaction() }}",
    post_hook="{{ compliance.finish_hourly_compaction() }}",
) }}
-- depends_on: {{ compliance.compaction_input(var('page_view_hourly_input', 'kafka.page_view_hourly_staging')) }}
-- depends_on: {{ compliance.compaction_input(var('page_view_expected_counts', 'kafka.ingestion_counts')) }}
{{ compliance.hourly_compaction_sql() }}
