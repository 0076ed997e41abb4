{# Placeholder until the purge log lands. #}
select * from {{ ref('purge') }}
