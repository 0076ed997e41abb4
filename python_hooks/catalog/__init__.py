"""The metastore and filesystem primitives every capability uses, behind a public API.

Internal to `python_hooks`: macros reach these only through the adapter's typed entry points
(`dbt.adapters.lakehouse.compliance`).
"""
