{#-
    Which capabilities a project has configured (docs/adopt.md).  A capability's models, seeds and
    snapshots are enabled only once its inputs are named by vars, as Fivetran's packages enable
    their models (`config(enabled=var(...))`), so that a project that installs this package and
    runs `dbt build` builds, reads and deletes nothing it did not ask for:

      purge, erasure              var compliance_id_table (`db.table`); the purge then acts on the
                                  tables var purge_whitelist selects (blank: none)
      retention                   with the purge, and at the repo root (it acts only on the side
                                  tables purge and restore register, and on policies you set)
      hourly compaction           var page_view_hourly_input
      member merge and snapshot   var member_snapshot
      audit                       always (it only reads dbt's artifacts)

    The sources' yml repeats these rules inline (yml cannot call macros).  When this project is
    the root project (`dbt run` from the repo root), the compaction inputs default to the example
    tables of DESIGN.md (`kafka.*`, `crm.*`): those names are never a default in a project that
    installs the package.
-#}
{% macro purge_configured() -%}
    {{ return((var('compliance_id_table', '') | string | trim) not in ('', 'None')) }}
{%- endmacro %}

{#- [database, table] of var compliance_id_table, or none when it does not name one as `db.table`:
    the one parse of the name (python_hooks/purge/id_table.py `table_name_parts`). -#}
{% macro id_table_name() -%}
    {{ return(adapter.id_table_name(var('compliance_id_table', '') | string)) }}
{%- endmacro %}

{#-
    Retention cleans up after the purge and the restore: enabled with the purge, and when this is
    the root project (the repo root: DESIGN.md's `dbt run --select retention`).
-#}
{% macro retention_configured() -%}
    {{ return(compliance.purge_configured() or project_name == 'compliance') }}
{%- endmacro %}

{#- The value of a compaction input var; the repo root's example tables when the product is the root project. -#}
{% macro compaction_input_var(name) -%}
    {%- set root_defaults = {
        'page_view_hourly_input': 'kafka.page_view_hourly_staging',
        'page_view_expected_counts': 'kafka.ingestion_counts',
        'member_snapshot': 'crm.member_snapshot',
        'member_deltas': ['crm.member_delta_1', 'crm.member_delta_2'],
    } -%}
    {%- if name not in root_defaults -%}
        {%- do exceptions.raise_compiler_error("compaction_input_var: " ~ tojson(name) ~ " is not one of " ~ root_defaults.keys() | list | join(', ') ~ ".") -%}
    {%- endif -%}
    {%- set value = var(name, root_defaults[name] if project_name == 'compliance' else '') -%}
    {{ return('' if value is none or (value is string and value | trim in ('', 'None')) else value) }}
{%- endmacro %}

{% macro hourly_compaction_configured() -%}
    {{ return(compliance.compaction_input_var('page_view_hourly_input') | length > 0) }}
{%- endmacro %}

{% macro member_merge_configured() -%}
    {{ return(compliance.compaction_input_var('member_snapshot') | length > 0) }}
{%- endmacro %}

{#-
    A node named in a var or a model's settings: `source_name.table_name` is a source, a name
    without a dot a model or seed (ref), a blank name none.  The relation, so that
    `-- depends_on:` puts the node in the lineage graph (the purge's inputs, compaction's).
-#}
{% macro project_node(name) -%}
    {%- set name = (name if name is not none else '') | string | trim -%}
    {%- if name == '' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if '.' in name -%}
        {%- set parts = name.split('.', 1) -%}
        {{ return(source(parts[0], parts[1])) }}
    {%- endif -%}
    {{ return(ref(name)) }}
{%- endmacro %}

{#- var purge_depends_on as a list (a comma-separated string is accepted too). -#}
{% macro purge_depends_on() -%}
    {%- set value = var('purge_depends_on', []) -%}
    {%- if value is none -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set names = (value.split(',') if value is string else value) | map('string') | map('trim') | reject('equalto', '') | list -%}
    {{ return(names) }}
{%- endmacro %}

{#-
    Whether the command that runs this node names the compliance job in its own selection
    (python_hooks/purge/command_selection.py): {named, reason, command}.  The purge and retention act
    only when it does; otherwise they run as a dry run that lists what they would do and print
    `command`, the documented command that acts.  A plain `dbt build` never names them.
-#}
{% macro command_selection(command) -%}
    {%- set job_tags = ['purge', 'retention', 'erasure'] -%}
    {%- set job = [] -%}
    {%- for node in graph.nodes.values() -%}
        {#- by tag (dbt_project.yml sets them per folder), or by folder where a project left the tags out -#}
        {%- if node.package_name == 'compliance'
            and ((node.tags | select('in', job_tags) | list | length) > 0 or (node.fqn | length > 2 and node.fqn[1] in job_tags)) -%}
            {%- do job.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(adapter.command_selection(model.unique_id, invocation_args_dict, selected_resources, job, project_name, command)) }}
{%- endmacro %}
