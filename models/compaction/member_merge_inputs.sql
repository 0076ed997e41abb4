{#-
    The inputs of `member_merged`, in merge order: the snapshot (var `member_snapshot`), then the
    deltas of var `member_deltas` in pull order (at the repo root the sources `crm.member_snapshot`,
    `crm.member_delta_1`, `crm.member_delta_2`: macros/common/capabilities.sql).  Each entry is a
    model name or `source_name.table_name`; resolving them here, in SQL, gives dbt the
    dependencies.  Enabled once var `member_snapshot` is set.
-#}
{{ config(enabled=compliance.member_merge_configured()) }}
{%- set deltas = compliance.compaction_input_var('member_deltas') -%}
{#- a comma-separated string is accepted too: `--vars '{member_deltas: "d1,d2"}'` -#}
{%- set deltas = (deltas.split(',') | map('trim') | list) if deltas is string else deltas -%}
{%- set names = [compliance.compaction_input_var('member_snapshot')] + deltas -%}
with

inputs as (
    -- noqa: disable=LT02
    {%- for name in names %}
    select
        {{ loop.index0 }} as position,
        {{ compliance.sql_string('snapshot' if loop.first else 'delta') }} as role,
        {{ compliance.sql_string(name) }} as input_name,
        {{ compliance.sql_string(compliance.project_node(name) | string) }} as relation_name
    {{ "union all" if not loop.last }}
    {%- endfor %}
    -- noqa: enable=LT02
),

final as (
    select * from inputs
)

select * from final
