{#- The 24 hourly partitions of each closed day in the window, rolled into one daily partition. -#}
{{ config(
    materialized='incremental',
    enabled=compliance.hourly_compaction_configured(),
    incremental_strategy='insert_overwrite',
    partition_by=['ds'],
    meta={'compaction': {
        'daily_type': 2,
        'dedup': 'key',
        'key': ['event_id'],
        'order_by': 'event_ts',
        'tie_breakers': ['ingested_at desc'],
    }},
) }}
{{ compliance.daily_compaction_sql(ref('page_view_hourly')) }}
