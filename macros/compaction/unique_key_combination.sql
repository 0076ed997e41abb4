{#- Generic test: no two rows share the combination of `columns` (dbt-utils' unique_combination_of_columns). -#}
{% test unique_key_combination(model, columns) -%}
    {%- set column_list -%}
        {%- for column in columns -%}
            {{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}
        {%- endfor -%}
    {%- endset -%}
select
    {{ column_list }},
    count(*) as duplicates
from {{ model }}
group by {{ column_list }}
having count(*) > 1
{%- endtest %}
