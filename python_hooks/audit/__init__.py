"""Audit: dbt run metadata, model and column lineage, OpenLineage events, the workflow graph."""
