{#
    Identifiers are quoted and literals escaped here and nowhere else: a partition value may
    hold a space, a colon or a quote, and a table name may be a reserved word.
#}
{% macro quote_ident(name) -%}
    `{{ name | string | replace('`', '``') }}`
{%- endmacro %}

{#- `database`.`table`, or with `catalog` (an Iceberg table's) `catalog`.`database`.`table`. -#}
{% macro table_ref(database, table, catalog=none) -%}
    {%- if catalog %}{{ compliance.quote_ident(catalog) }}.{% endif -%}
    {{ compliance.quote_ident(database) }}.{{ compliance.quote_ident(table) }}
{%- endmacro %}

{% macro sql_string(value) -%}
    {%- if value is none -%}
        null
    {%- else -%}
        '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
    {%- endif -%}
{%- endmacro %}

{#- `(k = 'v', k2 = 'v2')` from [[k, v], ...] (unescaped values): a PARTITION clause body. -#}
{% macro partition_clause(pairs) -%}
    ({%- for pair in pairs -%}
        {{ compliance.quote_ident(pair[0]) }} = {{ compliance.sql_string(pair[1]) }}{{ ", " if not loop.last }}
    {%- endfor -%})
{%- endmacro %}

{#-
    `k = 'v' and k2 = 'v2'` from [[k, v], ...], optionally qualified with a table alias.  Hive's
    default partition (`__HIVE_DEFAULT_PARTITION__`) holds the rows whose value is NULL: `k is null`.
-#}
{% macro partition_predicate(pairs, alias=none) -%}
    {%- for pair in pairs -%}
        {{ (alias ~ ".") if alias }}{{ compliance.quote_ident(pair[0]) }}
        {%- if pair[1] == '__HIVE_DEFAULT_PARTITION__' %} is null{% else %} = {{ compliance.sql_string(pair[1]) }}{% endif %}{{ " and " if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
