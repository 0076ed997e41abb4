"""The hourly compaction's bookkeeping after the overwrite (macros/compaction/hourly_steps.sql)."""
