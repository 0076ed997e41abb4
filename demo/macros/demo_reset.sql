{#
    The demo rebuilds its warehouse from scratch.  On the embedded default scripts/demo.py deletes
    the warehouse and Derby directories; on a shared metastore (the `cluster` target) there is no
    directory to delete, so the demo's own databases are dropped through the metastore and their
    folders (which also hold the purge's external backup and staging data) through Hadoop.
#}
{% macro demo_reset(schemas=none) %}
    {%- set schemas = schemas or ['tracking', 'u_purger', 'kafka', 'crm', target.schema] -%}
    {%- set existing = run_query('show databases').columns[0].values() | map('lower') | list -%}
    {%- for schema in schemas if schema | lower in existing -%}
        {%- set described = run_query('describe database ' ~ adapter.quote(schema)) -%}
        {%- set location = [] -%}
        {%- for row in described.rows if row[0] | lower == 'location' -%}
            {%- do location.append(row[1]) -%}
        {%- endfor -%}
        {%- do adapter.drop_schema(api.Relation.create(schema=schema)) -%}
        {%- if location and adapter.fs_exists(location[0]) -%}
            {%- do adapter.fs_delete(location[0]) -%}
        {%- endif -%}
        {{ log("Dropped the demo database " ~ schema ~ (" and " ~ location[0] if location else ""), info=true) }}
    {%- endfor -%}
{% endmacro %}
