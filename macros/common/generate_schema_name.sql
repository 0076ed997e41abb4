{#
    A model's `schema` config names its database exactly (`tracking`, `kafka`), the way Hive
    users name databases; without one, the target's schema is used.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
