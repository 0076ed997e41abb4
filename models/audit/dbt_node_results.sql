{#- Rows are appended by the audit run hooks (python_hooks.artifacts); see _audit__models.yml. -#}
{{ compliance.audit_table_definition() }}
