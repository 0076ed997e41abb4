{#
    `dbt run-operation restore --args '{table: db.t, partition: "k=v/k2=v2"}'` (optional
    `backup: db.t_backup_<ts>`; default the newest backup that holds a non-empty copy of the
    partition other than the live location).  The partition's current data becomes
    `<table>_trash_<ts>` (deleted by retention after trash_retention_days), the partition points
    at the backup's data, and the old location is recorded as stale data.  The restore is
    recorded in `erasure_events`: the erasure requests that backup served become `reintroduced`.
    Every check runs before the first change (python_hooks/restore/plan.py).
    A Delta Lake table goes back whole to one of its versions instead:
    `dbt run-operation restore --args '{table: db.t, version: 3}'`, by Delta's own RESTORE
    (python_hooks/restore/delta.py), recorded in `erasure_events` as well.
#}
{% macro restore(table, partition=none, backup=none, version=none) -%}
    {%- set plan = adapter.restore_plan(table, partition, backup, var('retention_now', none),
        compliance.bool_var('retention_allow_future_now'), version) -%}
    {%- if plan['format'] in ('delta', 'iceberg') -%}
        {{ return(compliance.restore_delta(plan)) }}
    {%- endif -%}
    {%- if plan['current_location'] -%}
        {%- call statement('restore_create_trash') -%}
            {{ compliance.restore_trash_table_sql(plan['database'], plan['table'], plan['trash_table'],
                compliance.side_table_properties('trash', plan['database'], plan['table'], plan['trash_table'].split('_')[-1])) }}
        {%- endcall -%}
        {%- call statement('restore_trash_untag') -%}
            {{ compliance.restore_untag_sql(plan['database'], plan['trash_table']) }}
        {%- endcall -%}
        {%- call statement('restore_trash_partition') -%}
            {{ compliance.add_partition_sql(plan['database'], plan['trash_table'], plan['pairs'], plan['current_location']) }}
        {%- endcall -%}
        {%- call statement('restore_point_partition') -%}
            {{ compliance.set_location_sql(plan['database'], plan['table'], plan['pairs'], plan['backup_location']) }}
        {%- endcall -%}
        {#- nothing cached in this session may keep serving the replaced files -#}
        {%- call statement('restore_refresh') -%}
            refresh table {{ compliance.table_ref(plan['database'], plan['table']) }}
        {%- endcall -%}
        {%- do compliance.record_stale_location(
            plan['database'], plan['table'], plan['partition_spec'], plan['current_location'], 'restore') -%}
    {%- else -%}
        {%- call statement('restore_add_partition') -%}
            {{ compliance.add_partition_sql(plan['database'], plan['table'], plan['pairs'], plan['backup_location']) }}
        {%- endcall -%}
    {%- endif -%}
    {#- the backup holds the rows a purge removed: the requests it served are reintroduced until the next purge -#}
    {%- do compliance.record_erasure_event('restore', plan['database'], plan['table'], plan['partition_spec'],
        plan['database'] ~ '.' ~ plan['backup_table'], plan['backup_location']) -%}
    {%- do log(
        "Restored " ~ plan['database'] ~ "." ~ plan['table'] ~ " partition " ~ plan['partition_spec']
        ~ " from " ~ plan['database'] ~ "." ~ plan['backup_table'] ~ " (" ~ plan['backup_location'] ~ ")"
        ~ ("; its previous data is kept as " ~ plan['database'] ~ "." ~ plan['trash_table']
           ~ " for trash_retention_days" if plan['current_location'] else "; the partition did not exist, it was added")
        ~ ". The backup holds rows a purge removed: the erasure requests it served are `reintroduced` (model erasure_requests) until `dbt run --select purge+` purges them again.",
        info=true) -%}
    {{ return(plan) }}
{%- endmacro %}

{#- The restore trash: a table like the restored one, holding the replaced partition. -#}
{% macro restore_trash_table_sql(database, table, trash_table, properties={}) -%}
    create table {{ compliance.table_ref(database, trash_table) }} like {{ compliance.table_ref(database, table) }}
    {{ compliance.tblproperties_sql(properties) }}
{%- endmacro %}

{#- Trash must not look onboarded to the purge (create table like copies the descriptor). -#}
{% macro restore_untag_sql(database, table) -%}
    alter table {{ compliance.table_ref(database, table) }} unset tblproperties if exists ('dataset.descriptor')
{%- endmacro %}

{#-
    A Delta Lake table back to a version: Delta's RESTORE, one commit; the versions after it stay in
    the log.  An Iceberg table back to a snapshot: Iceberg's rollback_to_snapshot, likewise.
-#}
{% macro restore_delta(plan) -%}
    {%- if plan['format'] == 'iceberg' -%}
    {%- call statement('restore_iceberg') -%}
        {{ compliance.restore_iceberg_sql(plan['catalog'], plan['database'], plan['table'], plan['version']) }}
    {%- endcall -%}
    {%- do compliance.record_erasure_event('restore', plan['database'], plan['table'], plan['partition_spec'],
        plan['backup_table'], plan['location']) -%}
    {%- do log(
        "Restored " ~ plan['database'] ~ "." ~ plan['table'] ~ " (Apache Iceberg) to snapshot " ~ plan['version']
        ~ ", from snapshot " ~ plan['version_before'] ~ " (the snapshots in between stay until expire_snapshots)."
        ~ " The snapshot may hold rows a purge removed: the erasure requests are `reintroduced`"
        ~ " (model erasure_requests) until `dbt run --select purge+` purges them again.",
        info=true) -%}
    {%- else -%}
    {%- call statement('restore_delta') -%}
        {{ compliance.restore_delta_sql(plan['database'], plan['table'], plan['version']) }}
    {%- endcall -%}
    {%- call statement('restore_refresh') -%}
        refresh table {{ compliance.table_ref(plan['database'], plan['table']) }}
    {%- endcall -%}
    {#- the version holds the rows a purge removed: the requests it served are reintroduced until the next purge -#}
    {%- do compliance.record_erasure_event('restore', plan['database'], plan['table'], plan['partition_spec'],
        plan['backup_table'], plan['location']) -%}
    {%- do log(
        "Restored " ~ plan['database'] ~ "." ~ plan['table'] ~ " (Delta Lake) to version " ~ plan['version']
        ~ ", from version " ~ plan['version_before'] ~ " (RESTORE is a new commit: the versions in between stay in the log"
        ~ " until VACUUM). The version may hold rows a purge removed: the erasure requests are `reintroduced`"
        ~ " (model erasure_requests) until `dbt run --select purge+` purges them again.",
        info=true) -%}
    {%- endif -%}
    {{ return(plan) }}
{%- endmacro %}

{#- `call <catalog>.system.rollback_to_snapshot('<db>.<t>', <snapshot id>)`. -#}
{% macro restore_iceberg_sql(catalog, database, table, snapshot_id) -%}
    call {{ compliance.quote_ident(catalog) }}.system.rollback_to_snapshot(
        table => {{ compliance.sql_string(database ~ '.' ~ table) }}, snapshot_id => {{ snapshot_id | int }}
    )
{%- endmacro %}

{#- `restore table <db>.<t> to version as of <n>`. -#}
{% macro restore_delta_sql(database, table, version) -%}
    restore table {{ compliance.table_ref(database, table) }} to version as of {{ version | int }}
{%- endmacro %}
