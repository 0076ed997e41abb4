{#-
    `crm.member_delta_2`, the last pull: members 1051-1150 (half changed, half new).  Schema
    evolution: drops `plan`, adds `tier`.  (Scaled with var `demo_member_count`.)  Member 950 is in it with an OLDER `updated_at` than in
    delta 1 (the two pulls overlapped), which the timestamp merge mode resolves differently.
-#}
{%- set n = var('demo_member_count', 1000) | int %}
with

members as (
    select id as member_id from range({{ n + n // 20 + 1 }}, {{ n + n // 20 + n // 10 + 1 }})
    union all
    select 950 as member_id
),

final as (
    select
        member_id,
        concat('member ', member_id, ' (renamed)') as name,
        concat('m', member_id, '@example.net') as email,
        element_at(array('US', 'DE', 'IN', 'BR'), cast(member_id % 4 + 1 as int)) as country,
        cast(member_id % 5 as int) as tier,
        case
            when member_id = 950 then timestamp '2024-01-15 00:00:00'
            else timestamp '2024-03-01 00:00:00'
        end as updated_at
    from members
)

select * from final
