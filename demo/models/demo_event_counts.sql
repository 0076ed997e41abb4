with

events as (

    select * from {{ ref('demo_tracking_event') }}

),

final as (

    select
        datepartition,
        is_guest,
        count(*) as event_count,
        count(distinct metadata.guestid) as guest_count
    from events
    group by datepartition, is_guest

)

select * from final
