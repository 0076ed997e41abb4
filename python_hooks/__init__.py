"""Python called from the project's dbt hooks and macros (through `adapter.python_hook`).

One package per capability, named as in `macros/` and `models/`: `purge`, `retention`,
`restore` and `audit` (run metadata, lineage, OpenLineage, the workflow graph).  They share the
internal `catalog` package (the metastore, the filesystem and small statement runners behind a
public API) and `errors` (the one error type and the one result shape for Jinja callers); they
do not import each other (tests/unit/test_layering.py).
"""
