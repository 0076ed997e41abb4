{#-
    One row per erasure request: its deadline, the live tables purged and verified clean and
    when, the pre-purge copies still held and when retention will delete them, when the last was
    deleted, and a status:
      pending       no purge run has served it cleanly yet (or one failed a table);
      live_clean    live tables hold none of its ids; pre-purge copies remain, scheduled;
      erased        live tables clean and every pre-purge copy deleted (`fully_erased_at`);
      overdue       past its deadline and not erased;
      reintroduced  live rows hold its ids again after it was clean (a restore, a recompaction
                    or a rebuild), until the next purge removes them.
    Counts, dates and run ids only: no id is ever copied here.
-#}
{{ config(materialized='table', enabled=compliance.purge_configured()) }}
-- depends_on: {{ source('compliance', 'id_table') }}

with

ledger as (

    select * from {{ ref('erasure_request_log') }}

),

live as (

    select * from {{ ref('erasure_live_findings') }}

),

copies as (

    select * from {{ ref('erasure_copies') }}

),

events as (

    {{ compliance.erasure_events_sql() }}

),

listed as (

    {{ compliance.erasure_listed_ids_sql() }}

),

-- requests listed in the id table, served or not (none when it has no request_id column)
listed_requests as (

    select
        request_id,
        min(requested_at) as requested_at,
        count(*) as id_count
    from listed
    where request_id is not null
    group by request_id

),

served as (

    select
        request_id,
        min(requested_at) as requested_at,
        max(id_count) as id_count,
        count(*) as purge_runs,
        concat_ws(',', sort_array(collect_set(invocation_id))) as purge_invocation_ids,
        min(purged_at) as first_purged_at,
        min(case when partitions_failed = 0 then purged_at end) as first_clean_run_at,
        max(case when partitions_failed = 0 then purged_at end) as last_clean_run_at
    from ledger
    group by request_id

),

runs as (

    select
        coalesce(served.request_id, listed_requests.request_id) as request_id,
        coalesce(listed_requests.requested_at, served.requested_at) as requested_at,
        coalesce(listed_requests.id_count, served.id_count) as id_count,
        coalesce(served.purge_runs, 0) as purge_runs,
        served.purge_invocation_ids,
        served.first_purged_at,
        served.first_clean_run_at,
        served.last_clean_run_at
    from served
    full outer join listed_requests
        on served.request_id = listed_requests.request_id

),

live_by_request as (

    select
        request_id,
        count(*) as tables_checked,
        sum(case when remaining_rows = 0 then 1 else 0 end) as tables_clean,
        sum(remaining_rows) as live_rows,
        max(checked_at) as live_checked_at
    from live
    group by request_id

),

copies_by_request as (

    select
        request_id,
        count(distinct concat(database_name, '.', table_name)) as tables_purged,
        count(*) as copies_total,
        sum(case when deleted_at is null then 1 else 0 end) as copies_remaining,
        max(deleted_at) as last_copy_deleted_at,
        -- null when a remaining copy has no scheduled deletion
        case
            when sum(case when deleted_at is null and will_delete_at is null then 1 else 0 end) = 0
                then max(case when deleted_at is null then will_delete_at end)
        end as copies_deleted_by
    from copies
    group by request_id

),

-- a restore after the request's last clean purge, of a table or partition that purge swapped
restored as (

    select
        copies.request_id,
        max(events.recorded_at) as restored_at
    from copies
    inner join events
        on
            events.event = 'restore'
            and copies.database_name = events.database_name
            and copies.table_name = events.table_name
            and (events.partition_spec is null or copies.partition_spec <=> events.partition_spec)
            and copies.purged_at <= events.recorded_at
    group by copies.request_id

),

joined as (

    select
        runs.request_id,
        runs.requested_at,
        coalesce(runs.requested_at, runs.first_purged_at)
        + make_dt_interval(0, 0, 0, cast({{ compliance.erasure_deadline_days() }} * 86400 as decimal(18, 6))) as deadline_at,
        runs.id_count,
        runs.purge_runs,
        runs.purge_invocation_ids,
        runs.first_clean_run_at,
        runs.last_clean_run_at,
        coalesce(live_by_request.tables_checked, 0) as tables_checked,
        coalesce(live_by_request.tables_clean, 0) as tables_clean,
        coalesce(live_by_request.live_rows, 0) as live_rows,
        live_by_request.live_checked_at,
        coalesce(copies_by_request.tables_purged, 0) as tables_purged,
        coalesce(copies_by_request.copies_total, 0) as copies_total,
        coalesce(copies_by_request.copies_remaining, 0) as copies_remaining,
        copies_by_request.last_copy_deleted_at,
        copies_by_request.copies_deleted_by,
        case
            when restored.restored_at > coalesce(runs.last_clean_run_at, restored.restored_at)
                then restored.restored_at
        end as restored_after_clean_at
    from runs
    left join live_by_request
        on runs.request_id = live_by_request.request_id
    left join copies_by_request
        on runs.request_id = copies_by_request.request_id
    left join restored
        on runs.request_id = restored.request_id

),

final as (

    select
        request_id,
        requested_at,
        deadline_at,
        id_count,
        purge_runs,
        purge_invocation_ids,
        tables_checked,
        tables_clean,
        tables_purged,
        live_rows,
        case when first_clean_run_at is not null and live_rows = 0 then last_clean_run_at end as live_clean_at,
        copies_total,
        copies_remaining,
        copies_deleted_by,
        case
            when first_clean_run_at is not null and live_rows = 0 and copies_remaining = 0
                then greatest(last_clean_run_at, coalesce(last_copy_deleted_at, last_clean_run_at))
        end as fully_erased_at,
        case
            when first_clean_run_at is not null and (live_rows > 0 or restored_after_clean_at is not null)
                then 'reintroduced'
            when first_clean_run_at is not null and live_rows = 0 and copies_remaining = 0
                then 'erased'
            when current_timestamp() > deadline_at then 'overdue'
            when first_clean_run_at is not null and live_rows = 0 then 'live_clean'
            else 'pending'
        end as status,
        live_checked_at,
        current_timestamp() as evaluated_at
    from joined

)

select * from final
