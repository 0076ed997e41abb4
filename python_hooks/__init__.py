"""Python called from the project's dbt hooks and macros (through `adapter.python_hook`).

Modules are named for what they do: `audit_tables` (the audit tables' schemas and bulk writes),
`artifacts` (dbt run metadata into the audit tables), `lineage` (model and column lineage),
`workflow_graph` (graphviz drawing of the DAG), `openlineage_export` (OpenLineage events) and
`manifest_checks` (pre-commit checks over target/manifest.json).
"""
