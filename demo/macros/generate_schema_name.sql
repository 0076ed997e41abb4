{#- The product's schema naming (a model's `schema` config is its Hive database) for the demo's models too. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ return(compliance.generate_schema_name(custom_schema_name, node)) }}
{%- endmacro %}
