-- noqa: disable=LT02
{#
    `dbt run-operation onboard --args '{table: db.t, identifier: metadata.guestid}'`: write the
    dataset descriptor onto an existing table, after checking that the identifier is a column or
    struct field (and comparable with the id column when the id table exists).
#}
{% macro onboard(table, identifier) %}
    {%- set name = (table or '') | string | trim | lower -%}
    {%- if not modules.re.match('^[a-z0-9_]+\\.[a-z0-9_]+$', name) -%}
        {%- do exceptions.raise_compiler_error("onboard: table " ~ tojson(table) ~ " must be given as db.table (for example tracking.event).") -%}
    {%- endif -%}
    {%- set parts = name.split('.') -%}
    {%- set info = compliance.catalog_describe_table(parts[0], parts[1]) -%}
    {%- if not info.exists -%}
        {%- do exceptions.raise_compiler_error("onboard: table " ~ name ~ " does not exist; create it first (or declare the descriptor in its model's tblproperties).") -%}
    {%- endif -%}
    {%- set field = (identifier or '') | string | trim -%}
    {%- set resolved = compliance.catalog_resolve_field(parts[0], parts[1], field) if field else none -%}
    {%- if resolved is none -%}
        {%- do exceptions.raise_compiler_error("onboard: " ~ tojson(field) ~ " is not a column or struct field of " ~ name
            ~ " (columns: " ~ (info.columns.keys() | list | join(', ')) ~ "). Give the identifier as a column or a dotted path such as metadata.guestid.") -%}
    {%- endif -%}
    {%- set field = resolved.path | join('.') -%}
    {%- set id_table = (var('compliance_id_table', '') | string | trim | lower).split('.') -%}
    {%- if id_table | length == 2 and var('compliance_id_column', '') -%}
        {%- set id_info = compliance.catalog_describe_table(id_table[0], id_table[1]) -%}
        {%- set id_type = id_info.columns.get(var('compliance_id_column')) if id_info.exists else none -%}
        {%- set field_type = resolved.type -%}
        {%- if id_type and not compliance.purge_types_comparable(field_type, id_type) -%}
            {%- do exceptions.raise_compiler_error("onboard: " ~ name ~ "." ~ field ~ " is " ~ field_type ~ " but the id column "
                ~ var('compliance_id_table') ~ "." ~ var('compliance_id_column') ~ " is " ~ id_type ~ "; they cannot be compared safely.") -%}
        {%- endif -%}
    {%- endif -%}
    {%- set descriptor = compliance.purge_descriptor_json(field) -%}
    {% call statement('onboard') %}
        alter table {{ compliance.table_ref(parts[0], parts[1]) }}
        set tblproperties ('dataset.descriptor' = {{ compliance.sql_string(descriptor) }})
    {% endcall %}
    {%- do log("onboard: " ~ name ~ " now carries dataset.descriptor " ~ descriptor, info=true) -%}
    {%- set whitelist = compliance.parse_table_patterns(var('purge_whitelist', ''), 'purge_whitelist') -%}
    {%- set blacklist = compliance.parse_table_patterns(var('purge_blacklist', ''), 'purge_blacklist') -%}
    {%- if not compliance.table_selected(parts[0], parts[1], whitelist, blacklist) -%}
        {%- do log("onboard: note: " ~ name ~ " is not selected by purge_whitelist/purge_blacklist; add it to purge_whitelist so the purge picks it up.", info=true) -%}
    {%- endif -%}
{% endmacro %}
