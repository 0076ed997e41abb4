{#-
    `crm.member_delta_1`, pulled after the snapshot: members 901-1000 changed their email and 1001-1100
    joined (with `demo_member_count` n: the last n/10 changed, n/10 new).  Schema evolution: adds `country`.
-#}
{%- set n = var('demo_member_count', 1000) | int %}
with

members as (
    select id as member_id from range({{ n - n // 10 + 1 }}, {{ n + n // 10 + 1 }})
),

final as (
    select
        member_id,
        concat('member ', member_id) as name,
        concat('m', member_id, '@example.org') as email,
        element_at(array('free', 'basic', 'premium'), cast(member_id % 3 + 1 as int)) as plan,
        element_at(array('US', 'DE', 'IN', 'BR'), cast(member_id % 4 + 1 as int)) as country,
        timestamp '2024-02-01 00:00:00' as updated_at
    from members
)

select * from final
