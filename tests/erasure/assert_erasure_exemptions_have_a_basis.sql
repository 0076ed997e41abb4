{#-
    Every exemption names its legal basis, an owner and a review date that has not passed: a row
    missing one of them, or past its review date (the run's UTC date), exempts nothing
    (macros/erasure/requests.sql, erasure_exemption_problem) and fails here, with the problem.
-#}
{{ config(tags=['erasure']) }}
with

exemptions as (
    select * from {{ ref(var('erasure_exemptions', 'erasure_exemptions')) }}
),

judged as (
    select
        table_pattern,
        legal_basis,
        owner,
        review_date,
        case
            when legal_basis is null or trim(legal_basis) = '' then 'no legal_basis'
            when owner is null or trim(owner) = '' then 'no owner'
            when review_date is null or trim(cast(review_date as string)) = '' then 'no review_date'
            when to_date(cast(review_date as string)) is null then 'the review_date is not a date (YYYY-MM-DD)'
            when to_date(cast(review_date as string)) < {{ compliance.erasure_today() }}
                then 'the review date has passed: review the exemption and renew review_date, or remove the row'
        end as problem
    from exemptions
),

final as (
    select * from judged
    where problem is not null
)

select * from final
