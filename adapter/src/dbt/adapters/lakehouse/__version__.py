# The product's one version: the `dbt-lakehouse` distribution's (pyproject.toml reads it), the
# plugin line of `dbt --version`, the `compliance` dbt package's (dbt_project.yml holds the same
# literal, checked by tests/python_hooks/test_version.py) and every erasure certificate's.
version = "0.3.0"
