{#
    dbt snapshots on plain parquet/ORC tables.  dbt-spark's snapshot materialization needs
    `merge into` (Delta, Iceberg, Hudi).  This one computes the whole new SCD2 table, the rows
    dbt's merge would leave, writes it into a NEW directory beside the table, and swaps the
    table's location in one metastore call, so a reader sees the old version or the new one,
    never half of each.  The new directory is handed to `location_swap_planned` before it is
    written and the old one to `location_swapped` after the swap (both dispatched: a project
    records them for its stale-data cleaner, see below).  Failure before the swap leaves the table
    as it was, and its new directory recorded.
#}

{#- Identifiers in backticks (a backtick doubled), literals in single quotes, for Spark SQL. -#}
{% macro lakehouse_quote_ident(name) -%}
    `{{ name | string | replace('`', '``') }}`
{%- endmacro %}

{% macro lakehouse_sql_string(value) -%}
    '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{#-
    Called after this adapter swaps a table's location, with the directory that no longer backs
    it.  The default only logs.  Dispatched without a namespace, so a `lakehouse__location_swapped`
    in the snapshot's own package or in the root project wins: a project that deletes unreferenced
    directories later defines one.  (A namespace would not do: an adapter's own macros cannot be
    found through `dispatch` under their package name.)
-#}
{% macro location_swapped(database, table, old_location, reason) -%}
    {{ return(adapter.dispatch('location_swapped')(database, table, old_location, reason)) }}
{%- endmacro %}

{% macro default__location_swapped(database, table, old_location, reason) -%}
    {{ log(database ~ "." ~ table ~ ": " ~ reason ~ " left " ~ old_location ~ " unreferenced", info=false) }}
{%- endmacro %}

{#-
    Called before this adapter writes a new directory that a swap will point a table at, with the
    table's current location and the new one.  A process killed between the write and the swap
    leaves `new_location` referenced by nothing: a project that deletes unreferenced directories
    later records it here (it is protected once the swap makes it live).  The default only logs.
    Dispatched without a namespace, like `location_swapped`.
-#}
{% macro location_swap_planned(database, table, old_location, new_location, reason) -%}
    {{ return(adapter.dispatch('location_swap_planned')(database, table, old_location, new_location, reason)) }}
{%- endmacro %}

{% macro default__location_swap_planned(database, table, old_location, new_location, reason) -%}
    {{ log(database ~ "." ~ table ~ ": " ~ reason ~ " will write " ~ new_location ~ " to replace " ~ old_location, info=false) }}
{%- endmacro %}

{#- The rows of the new SCD2 table: dbt's snapshot merge (close changed rows, add new ones) as a select. -#}
{% macro lakehouse_snapshot_rewrite_sql(target_relation, staging_relation, target_columns, column_names) -%}
    {%- set scd_id = lakehouse_quote_ident(column_names.dbt_scd_id) -%}
    {%- set valid_to = column_names.dbt_valid_to -%}
    {%- set valid_to_current = config.get('dbt_valid_to_current') if config is defined else none -%}
with

closed as (
    select
        {{ scd_id }} as closed_scd_id,
        {{ lakehouse_quote_ident(valid_to) }} as closed_valid_to
    from {{ staging_relation }}
    where dbt_change_type in ('update', 'delete')
),

kept as (
    select
    {%- for column in target_columns %}
        {%- if column == valid_to %}
        case
            when closed.closed_scd_id is not null then closed.closed_valid_to
            else existing.{{ lakehouse_quote_ident(column) }}
        end as {{ lakehouse_quote_ident(column) }}{{ "," if not loop.last }}
        {%- else %}
        existing.{{ lakehouse_quote_ident(column) }}{{ "," if not loop.last }}
        {%- endif %}
    {%- endfor %}
    from {{ target_relation }} as existing
    left join closed
        on existing.{{ scd_id }} = closed.closed_scd_id
        and (existing.{{ lakehouse_quote_ident(valid_to) }} is null
    {%- if valid_to_current %}
            or existing.{{ lakehouse_quote_ident(valid_to) }} = {{ valid_to_current }}
    {%- endif %})
),

inserted as (
    select
    {%- for column in target_columns %}
        staged.{{ lakehouse_quote_ident(column) }}{{ "," if not loop.last }}
    {%- endfor %}
    from {{ staging_relation }} as staged
    left anti join {{ target_relation }} as existing
        on staged.{{ scd_id }} = existing.{{ scd_id }}
    where staged.dbt_change_type = 'insert'
),

final as (
    select * from kept
    union all
    select * from inserted
)

select * from final
{%- endmacro %}

{#-
    The first version of a snapshot: dbt-spark's `create table ... as`, in the file format the
    rewrites write (parquet unless configured).  `create_table_as` leaves out `using` when
    file_format is unset, which makes a Hive text table that cannot read the rewrite's files.
-#}
{% macro lakehouse_snapshot_create_sql(target_relation, file_format, build_sql) -%}
    create table {{ target_relation }}
    using {{ file_format }}
    {{ options_clause() }}
    {{ tblproperties_clause() }}
    {{ location_clause() }}
    {{ comment_clause() }}
    as
    {{ build_sql }}
{%- endmacro %}

{% macro lakehouse_table_location(relation) -%}
    {%- set rows = run_query('describe table extended ' ~ relation) -%}
    {%- for row in rows if row[0] == 'Location' -%}
        {{ return(row[1]) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("Cannot find the location of " ~ relation ~ " in `describe table extended`") }}
{%- endmacro %}

{% macro lakehouse_snapshot_check_config(name, file_format) -%}
    {%- if file_format not in ['parquet', 'orc'] -%}
    {% do exceptions.raise_compiler_error(
        "Snapshot " ~ name ~ ": file_format '" ~ file_format
        ~ "' is not supported by the lakehouse snapshot materialization; use 'parquet' or 'orc'") %}
  {%- endif -%}
    {%- if config.get('partition_by') -%}
    {% do exceptions.raise_compiler_error(
        "Snapshot " ~ name ~ ": partition_by is not supported on parquet/orc snapshots; remove it") %}
  {%- endif -%}
{%- endmacro %}

{% materialization snapshot, adapter='lakehouse' %}
    {%- set target_table = model.get('alias', model.get('name')) -%}
    {%- set strategy_name = config.get('strategy') -%}
    {%- set file_format = config.get('file_format') or 'parquet' -%}
    {%- set grant_config = config.get('grants') -%}

    {%- do lakehouse_snapshot_check_config(model.schema ~ "." ~ target_table, file_format) -%}

  {% set target_relation_exists, target_relation = get_or_create_relation(
          database=none, schema=model.schema, identifier=target_table, type='table') -%}

    {% if not adapter.check_schema_exists(model.database, model.schema) %}
    {% do create_schema(model.schema) %}
  {% endif %}

    {%- if not target_relation.is_table -%}
    {% do exceptions.relation_wrong_type(target_relation, 'table') %}
  {%- endif -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {% set strategy_macro = strategy_dispatch(strategy_name) %}
    {% set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) %}

    {% if not target_relation_exists %}
      {% set build_sql = build_snapshot_table(strategy, model['compiled_code']) %}
      {% call statement('main') %}
          {{ lakehouse_snapshot_create_sql(target_relation, file_format, build_sql) }}
      {% endcall %}
  {% else %}
      {% set column_names = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() %}
      {{ adapter.valid_snapshot_target(target_relation, column_names) }}

      {% set staging_table = spark_build_snapshot_staging_table(strategy, sql, target_relation) %}
      {% set missing_columns = adapter.get_missing_columns(staging_table, target_relation)
                                   | rejectattr('name', 'in', ['dbt_change_type', 'DBT_CHANGE_TYPE', 'dbt_unique_key', 'DBT_UNIQUE_KEY'])
                                   | list %}
      {% do create_columns(target_relation, missing_columns) %}
      {% set target_columns = adapter.get_columns_in_relation(target_relation) | map(attribute='name') | list %}

      {%- set old_location = lakehouse_table_location(target_relation) -%}
      {%- set new_location = old_location.rstrip('/').rsplit('/', 1)[0] ~ '/' ~ target_table ~ '__v'
          ~ modules.datetime.datetime.utcnow().strftime('%Y%m%d%H%M%S%f') -%}
      {#- recorded before it exists: a kill between the write and the swap leaves nothing unrecorded -#}
      {% do location_swap_planned(model.schema, target_table, old_location, new_location, 'snapshot rewrite') %}
      {% call statement('main') %}
          insert overwrite directory {{ lakehouse_sql_string(new_location) }} using {{ file_format }}
          {{ lakehouse_snapshot_rewrite_sql(target_relation, staging_table, target_columns, column_names) }}
      {% endcall %}
      {#- the swap: one metastore call; readers see the old or the new version -#}
      {% call statement('swap_snapshot_location') %}
          alter table {{ target_relation }} set location {{ lakehouse_sql_string(new_location) }}
      {% endcall %}
      {% call statement('refresh_snapshot') %}
          refresh table {{ target_relation }}
      {% endcall %}
      {% do location_swapped(model.schema, target_table, old_location, 'snapshot rewrite') %}
  {% endif %}

    {% set should_revoke = should_revoke(target_relation_exists, full_refresh_mode) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}

    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {{ adapter.commit() }}

    {% if staging_table is defined %}
      {% do post_snapshot(staging_table) %}
  {% endif %}

    {{ run_hooks(post_hooks, inside_transaction=False) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
