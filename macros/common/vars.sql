{#
    Every boolean var is read here and read the same way: true/false, yes/no, 1/0, in any case,
    as YAML booleans, numbers or strings.  Anything else is an error that names the var, so that
    `purge_dry_run: "ture"` can never run a real purge.
#}
{% macro bool_var(name, default=false) -%}
    {{ return(compliance.parse_bool(var(name, default), 'Var ' ~ name)) }}
{%- endmacro %}

{% macro parse_bool(value, what) -%}
    {%- set text = (value | string | trim | lower) if value is not none else '' -%}
    {%- if value is sameas true or text in ['true', 'yes', '1'] -%}
        {{ return(true) }}
    {%- elif value is sameas false or text in ['false', 'no', '0'] -%}
        {{ return(false) }}
    {%- endif -%}
    {%- do compliance.config_error(
        what ~ " is " ~ tojson(value) ~ ": expected true or false (yes/no and 1/0 are accepted too), "
        ~ "for example --vars '{purge_dry_run: true}'.") -%}
{%- endmacro %}

{#- A whole number >= 1 from a var (a YAML number or its text); anything else is an error naming the var. -#}
{% macro positive_int_var(name, default) -%}
    {%- set value = var(name, default) -%}
    {%- set text = value | string | trim -%}
    {%- if value is not sameas true and value is not sameas false and modules.re.match('^[0-9]+$', text) and text | int >= 1 -%}
        {{ return(text | int) }}
    {%- endif -%}
    {%- do compliance.config_error("Var " ~ name ~ " is " ~ tojson(value) ~ ": expected a whole number of at least 1, for example --vars '{"
        ~ name ~ ": " ~ default ~ "}'.") -%}
{%- endmacro %}

{#-
    A var or argument that is not usable, found while the node or operation runs: a ConfigError,
    which dbt reports as a runtime error of that node (never as a compilation error), with the
    message as given.  Parse-time checks of a macro's own arguments keep raise_compiler_error.
-#}
{% macro config_error(message) -%}
    {%- do adapter.raise_config_error(message) -%}
{%- endmacro %}
