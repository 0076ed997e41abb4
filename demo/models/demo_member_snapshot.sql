{#- `crm.member_snapshot`: the full pull of the member table (var `demo_member_count` members, default 1000). -#}
{%- set n = var('demo_member_count', 1000) | int %}
with

members as (
    select id as member_id from range(1, {{ n + 1 }})
),

final as (
    select
        member_id,
        concat('member ', member_id) as name,
        concat('m', member_id, '@example.com') as email,
        element_at(array('free', 'basic', 'premium'), cast(member_id % 3 + 1 as int)) as plan,
        timestamp '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, member_id) as updated_at
    from members
)

select * from final
