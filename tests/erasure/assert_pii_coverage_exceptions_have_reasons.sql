{#- Every exception says why: a row of pii_coverage_exceptions without a reason excepts nothing and fails here. -#}
{{ config(tags=['erasure']) }}
with

exceptions as (
    select * from {{ ref(var('pii_coverage_exceptions', 'pii_coverage_exceptions')) }}
),

final as (
    select
        table_pattern,
        reason
    from exceptions
    where reason is null or trim(reason) = ''
)

select * from final
