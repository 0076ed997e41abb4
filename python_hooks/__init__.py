"""Python called from the project's dbt hooks and macros, through the adapter's typed `@available`
entry points (`dbt.adapters.lakehouse.compliance`), one per capability step.

One package per capability, named as in `macros/` and `models/`: `purge`, `retention`,
`restore`, `compaction`, `erasure` and `audit` (run metadata, lineage, OpenLineage, the workflow
graph).  They share the internal `catalog` package (the metastore, the filesystem, batched file
facts, the journal) and `errors` (the one typed hierarchy, which the adapter raises too); they do not
import each other (tests/unit/test_layering.py).
"""
