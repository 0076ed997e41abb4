"""The metastore and filesystem primitives every capability uses, behind a public API.

Internal to `python_hooks`: macros reach these only through `macros/common/python_calls.sql`.
"""
