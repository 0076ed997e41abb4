{#- Every exemption names its legal basis, an owner and a review date: a row without a basis exempts nothing and fails here. -#}
{{ config(tags=['erasure']) }}
with

exemptions as (
    select * from {{ ref(var('erasure_exemptions', 'erasure_exemptions')) }}
),

final as (
    select
        table_pattern,
        legal_basis,
        owner,
        review_date
    from exemptions
    where
        legal_basis is null or trim(legal_basis) = ''
        or owner is null or trim(owner) = ''
        or review_date is null
)

select * from final
