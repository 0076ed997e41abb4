{#-
    The inputs of `member_merged`, in merge order: the snapshot (var `member_snapshot`), then the
    deltas of var `member_deltas` in pull order.  Each entry is a model name or
    `source_name.table_name`; resolving them here, in SQL, gives dbt the dependencies.
-#}
{%- set names = [var('member_snapshot', 'demo_member_snapshot')] + var('member_deltas', ['demo_member_delta_1', 'demo_member_delta_2']) -%}
with

inputs as (
    {%- for name in names %}
    select
        {{ loop.index0 }} as position,
        {{ compliance.sql_string('snapshot' if loop.first else 'delta') }} as role,
        {{ compliance.sql_string(name) }} as input_name,
        {{ compliance.sql_string(compliance.compaction_input(name) | string) }} as relation_name
    {{ "union all" if not loop.last }}
    {%- endfor %}
),

final as (
    select * from inputs
)

select * from final
