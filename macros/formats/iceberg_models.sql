{#
    dbt models in Apache Iceberg's catalog.  Iceberg's tables are in the session's catalog
    `iceberg` (docs/formats.md), beside Delta's `spark_catalog`, over the same metastore: the
    metastore database is the model's schema, and only a name with the catalog's part,
    `iceberg.<schema>.<table>`, reaches the table through Iceberg.  dbt-spark's relations have
    two parts (no database), so these macros put the catalog before the schema, as one more part
    of the schema's name (`iceberg.sales` renders `iceberg.sales.clicks`), for the table of an
    Iceberg model (file_format iceberg, materialized table or incremental) and for a table the
    relation cache read from the metastore as one of Iceberg's (`table_type` ICEBERG): in `ref()`,
    the model's `create or replace`, the incremental merge, `describe`, column comments and drops.
    Any other relation is left as it is, and dbt-spark's macro runs unchanged.  In a project
    that installs the product as a package, a `dispatch:` entry that searches `compliance` before
    `dbt`, and a `ref` macro of its own calling iceberg_relation, do the same (docs/formats.md).
#}

{#- The relation in Iceberg's catalog, `iceberg.<schema>.<table>`, when it is an Iceberg model's or table's; else unchanged. -#}
{% macro iceberg_relation(relation) -%}
    {%- if relation.schema is not defined or relation.schema is none or relation.schema.startswith('iceberg.') -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- if 'table_type=ICEBERG' in (relation.information or '') or compliance.iceberg_model_of(relation) -%}
        {{ return(relation.incorporate(path={'schema': 'iceberg.' ~ relation.schema}, is_iceberg=true)) }}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{#- Whether a model of the project builds `relation` as an Iceberg table (table or incremental). -#}
{% macro iceberg_model_of(relation) -%}
    {%- if not execute or graph is not defined -%}
        {{ return(false) }}
    {%- endif -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model'
        and (node.alias or '') | lower == (relation.identifier or '') | lower -%}
        {%- if (node.schema or '') | lower == (relation.schema or '') | lower
            and node.config.file_format == 'iceberg' and node.config.materialized in ['table', 'incremental'] -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{%- endmacro %}

{#- Whether any model of the project builds an Iceberg table. -#}
{% macro project_has_iceberg_models() -%}
    {%- if not execute or graph is not defined -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | map(attribute='config') | selectattr('file_format', 'equalto', 'iceberg') | list | length > 0) }}
{%- endmacro %}

{#- `ref()`: an Iceberg model's table as `iceberg.<schema>.<table>`, any other node as dbt gives it. -#}
{% macro ref() -%}
    {{ return(compliance.iceberg_relation(builtins.ref(*varargs, **kwargs))) }}
{%- endmacro %}

{#- A model's table: an Iceberg model's in Iceberg's catalog (`create or replace`, one commit). -#}
{% macro lakehouse__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {%- if not temporary -%}
        {%- set relation = compliance.iceberg_relation(relation) -%}
    {%- endif -%}
    {{ return(spark__create_table_as(temporary, relation, compiled_code, language)) }}
{%- endmacro %}

{% macro lakehouse__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {{ spark__get_merge_sql(compliance.iceberg_relation(target), source, unique_key, dest_columns, incremental_predicates) }}
{%- endmacro %}

{% macro lakehouse__get_columns_in_relation_raw(relation) -%}
    {{ return(spark__get_columns_in_relation_raw(compliance.iceberg_relation(relation))) }}
{%- endmacro %}

{% macro lakehouse__alter_column_comment(relation, column_dict) -%}
    {{ spark__alter_column_comment(compliance.iceberg_relation(relation), column_dict) }}
{%- endmacro %}

{#-
    An Iceberg model's table is not dropped before its build: the model's `create or replace`
    replaces it in one commit, and its snapshots stay.  Any other of Iceberg's tables (a model's
    that is no longer an Iceberg model) is dropped with its files, through Iceberg's catalog, and
    its emptied directory removed: the metastore's entry alone would leave them where the next
    table's files go.  Which tables are Iceberg's, the metastore says (one read per dropped
    table), in a project that has an Iceberg model: in one that has none (its last Iceberg model
    changed its format), the table is dropped as dbt-spark drops it, its files left where they
    are, and the next build of its model fails on its location, naming it.
-#}
{% macro lakehouse__drop_relation(relation) -%}
    {%- set found = {'exists': false} -%}
    {%- if relation.type == 'table' and relation.schema is not none and not relation.schema.startswith('iceberg.')
        and ('table_type=ICEBERG' in (relation.information or '')
            or (relation.information is none and compliance.project_has_iceberg_models())) -%}
        {%- set found = adapter.describe_table(relation.schema, relation.identifier) -%}
    {%- endif -%}
    {%- if not (found.exists and (found.properties.get('table_type') or '') | upper == 'ICEBERG') -%}
        {{ spark__drop_relation(relation) }}
    {%- elif not compliance.iceberg_model_of(relation) -%}
        {%- call statement('drop_relation', auto_begin=False) -%}
            drop table if exists {{ relation.incorporate(path={'schema': 'iceberg.' ~ relation.schema}) }} purge
        {%- endcall -%}
        {%- if adapter.fs_summary(found.location).files == 0 -%}
            {%- do adapter.fs_delete(found.location) -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
