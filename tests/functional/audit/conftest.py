"""A small project with the audit hooks on: a seed, SQL and Python models, tests, and the audit models."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import repo_files

SEED_CUSTOMERS = """id,name,country
1,ada,DE
2,grace,US
3,linus,FI
"""

STG_ORDERS = """
select
    id as order_id,
    id % 3 + 1 as customer_id,
    id * 1.5 as amount
from range(10)
"""

CUSTOMER_REVENUE = """
with orders as (
    select * from {{ ref('stg_orders') }}
),

customers as (
    select * from {{ ref('customers') }}
),

final as (
    select
        c.id as customer_id,
        upper(c.name) as customer_name,
        sum(o.amount) as revenue,
        count(*) as n_orders,
        'eur' as currency
    from customers as c
    left join orders as o on o.customer_id = c.id
    group by c.id, c.name
)

select * from final
"""

PY_SCORES = """
def model(dbt, spark):
    dbt.config(materialized="table")
    return dbt.ref("customer_revenue").selectExpr("customer_id", "revenue * 2 as score")
"""

# fails while AUDIT_TEST_FAIL=1, for `dbt retry`
FLAKY = """
{% if env_var('AUDIT_TEST_FAIL', '0') == '1' %}
select * from this_table_does_not_exist
{% else %}
select 1 as x
{% endif %}
"""

AFTER_FLAKY = "select x + 1 as y from {{ ref('flaky') }}"

SCHEMA_YML = """
version: 2
models:
  - name: customer_revenue
    columns:
      - name: customer_id
        data_tests: [unique, not_null]
seeds:
  - name: customers
    columns:
      - name: country
        data_tests:
          - accepted_values:
              arguments:
                values: [DE, US]
              config:
                severity: warn
"""

HOOKS = {
    "on-run-start": ["{{ compliance.audit_on_run_start() }}"],
    "on-run-end": ["{{ compliance.audit_on_run_end(results) }}"],
}


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return {
        "name": "compliance",
        **HOOKS,
        "models": {
            "compliance": {
                "+file_format": "parquet",
                "audit": {
                    "+materialized": "incremental",
                    "+incremental_strategy": "append",
                    "+full_refresh": False,
                },
            }
        },
        "seeds": {"compliance": {"+file_format": "parquet"}},
    }


@pytest.fixture(scope="class")
def seeds() -> dict[str, Any]:
    return {"customers.csv": SEED_CUSTOMERS}


@pytest.fixture(scope="class")
def models() -> dict[str, Any]:
    return {
        "audit": repo_files("models", "audit"),
        "stg_orders.sql": STG_ORDERS,
        "customer_revenue.sql": CUSTOMER_REVENUE,
        "py_scores.py": PY_SCORES,
        "flaky.sql": FLAKY,
        "after_flaky.sql": AFTER_FLAKY,
        "schema.yml": SCHEMA_YML,
    }


@pytest.fixture(scope="class")
def macros() -> dict[str, Any]:
    """The audit macros and the common ones they use (independent of the other capabilities)."""
    return {"common": repo_files("macros", "common"), "audit": repo_files("macros", "audit")}
