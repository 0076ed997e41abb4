{#- Rows are appended by the audit run hooks (python_hooks.audit.artifacts); see _audit__models.yml. -#}
{{ audit_table_definition() }}
