{#- Generic test: no two rows share the combination of `columns` (dbt-utils' unique_combination_of_columns). -#}
{% test unique_key_combination(model, columns) %}
    select
        {%- for column in columns %}
        {{ compliance.quote_ident(column) }},
        {%- endfor %}
        count(*) as duplicates
    from {{ model }}
    group by {% for column in columns -%}
        {{ compliance.quote_ident(column) }}{{ ", " if not loop.last }}
    {%- endfor %}
    having count(*) > 1
{% endtest %}
