{#-
    Hourly dedup compaction of var `page_view_hourly_input`, checked against var
    `page_view_expected_counts` (Gobblin's MapReduce dedup compactor).  Enabled once the input var
    is set (at the repo root it defaults to the source `kafka.page_view_hourly_staging`, and the
    counts to `kafka.ingestion_counts`: macros/common/capabilities.sql).  Onboarding another
    hourly dataset is a copy of this file with its own meta.

    `session_conf` is set by the pre-hook for the dedup statement and put back by the post-hook:
    no per-key limit before the window's shuffle, which would sort every row twice to drop a few
    duplicates (python_hooks/compaction/session_settings.py).
-#}
{{ config(
    materialized='incremental',
    enabled=compliance.hourly_compaction_configured(),
    incremental_strategy='insert_overwrite',
    partition_by=['ds', 'hr'],
    meta={'compaction': {
        'dataset': 'page_view',
        'source': compliance.compaction_input_var('page_view_hourly_input'),
        'expected_counts': compliance.compaction_input_var('page_view_expected_counts'),
        'dedup': 'key',
        'key': ['event_id'],
        'order_by': 'event_ts',
        'tie_breakers': ['ingested_at desc'],
    }},
    session_conf={'spark.sql.optimizer.windowGroupLimitThreshold': '-1'},
    pre_hook="{{ compliance.prepare_hourly_compaction() }}",
    post_hook="{{ compliance.finish_hourly_compaction() }}",
) }}
-- depends_on: {{ compliance.project_node(compliance.compaction_input_var('page_view_hourly_input')) }}
-- depends_on: {{ compliance.project_node(compliance.compaction_input_var('page_view_expected_counts')) }}
{{ compliance.hourly_compaction_sql() }}
