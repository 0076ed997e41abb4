"""The purge: its staging table, commit check and result relation (macros/purge/)."""
