-- noqa: disable=LT02
{#
    The dataset descriptor: TBLPROPERTIES ('dataset.descriptor' =
    '{"complianceSpec": {"identifierField": "metadata.guestid"}}').  Reading it returns
    {field} or {error}; a bad descriptor fails its own table, not the run.
#}
{% macro purge_descriptor_json(identifier) -%}
    {{ return(tojson({'complianceSpec': {'identifierField': identifier}})) }}
{%- endmacro %}

{% macro purge_identifier_from_descriptor(table_name, descriptor) -%}
    {%- set example = purge_descriptor_json('metadata.guestid') -%}
    {%- set parsed = fromjson(descriptor, none) -%}
    {%- if parsed is not mapping -%}
        {{ return({'error': "Table " ~ table_name ~ ": its dataset.descriptor is not valid JSON: " ~ tojson(descriptor)
            ~ ". Expected for example " ~ example ~ "; fix it with `dbt run-operation onboard --args '{table: "
            ~ table_name ~ ", identifier: <column>}'`. The table was left as it was."}) }}
    {%- endif -%}
    {%- set spec = parsed.get('complianceSpec') -%}
    {%- set field = spec.get('identifierField') if spec is mapping else none -%}
    {%- if field is not string or not (field | trim) -%}
        {{ return({'error': "Table " ~ table_name ~ ": its dataset.descriptor " ~ descriptor
            ~ " has no complianceSpec.identifierField. Expected for example " ~ example
            ~ ". The table was left as it was."}) }}
    {%- endif -%}
    {{ return({'field': field | trim}) }}
{%- endmacro %}

{#- Can Spark compare these two types without a lossy implicit cast? (numbers with numbers, text with text) -#}
{% macro purge_types_comparable(left_type, right_type) -%}
    {%- set numeric = ['tinyint', 'smallint', 'int', 'bigint', 'float', 'double'] -%}
    {%- set l = (left_type or '') | lower -%}
    {%- set r = (right_type or '') | lower -%}
    {%- set l_num = l in numeric or l.startswith('decimal') -%}
    {%- set r_num = r in numeric or r.startswith('decimal') -%}
    {%- set l_text = l == 'string' or l.startswith('varchar') or l.startswith('char') -%}
    {%- set r_text = r == 'string' or r.startswith('varchar') or r.startswith('char') -%}
    {{ return((l_num and r_num) or (l_text and r_text) or (l == r and l != '')) }}
{%- endmacro %}

{#- Tables this project creates around a purged table; never purged themselves (their data is the backup). -#}
{% macro purge_is_working_table(table) -%}
    {{ return(modules.re.match('^.+_(staging|backup|trash)_[0-9]{10,}$', table | lower) is not none) }}
{%- endmacro %}
