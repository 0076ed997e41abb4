"""The metastore and filesystem primitives every capability uses, behind a public API.

Internal to `python_hooks`: macros reach these only through the adapter's typed entry points
(`dbt.adapters.lakehouse.compliance`).  The adapter's own modules use the leaf primitives too (the
Hadoop FileSystem calls of `filesystem`, the Hive partition specs of `partitions`, `scala_list` of
`scala`, the Spark SQL literals of `literals`); none of them imports the adapter.
"""
