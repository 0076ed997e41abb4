"""Every table the hooks write has its columns defined once, in Python; the yml documents the same.

The purge results (`purge`, and `purge_log` which appends them), the retention attempts
(`retention`, `retention_log`), the audit tables and the erasure verifier's tables: the yml's columns, in order, with the
yml's data_type, are the code's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from python_hooks.audit.audit_tables import SCHEMAS
from python_hooks.erasure.records import TABLES as VERIFICATION_TABLES
from python_hooks.purge.results import RESULT_COLUMNS
from python_hooks.retention.attempts import ATTEMPT_COLUMNS

REPO = Path(__file__).resolve().parents[2]


def _yml_models() -> dict[str, dict]:
    models = {}
    for path in (REPO / "models").rglob("*.yml"):
        for model in yaml.safe_load(path.read_text()).get("models") or []:
            models[model["name"]] = model
    return models


CODE: dict[str, list[tuple[str, str]]] = {
    "purge": RESULT_COLUMNS,
    "purge_log": RESULT_COLUMNS,
    "retention": ATTEMPT_COLUMNS,
    "retention_log": ATTEMPT_COLUMNS,
    **VERIFICATION_TABLES,
    **{
        name: [(field.name, field.dataType.simpleString()) for field in schema.fields]
        for name, schema in SCHEMAS.items()
    },
}


@pytest.mark.parametrize("model", sorted(CODE))
def test_the_yml_documents_the_columns_the_code_writes(model):
    columns = _yml_models()[model].get("columns") or []
    assert [c["name"] for c in columns] == [name for name, _ in CODE[model]]
    assert [(c["name"], c.get("data_type")) for c in columns] == CODE[model]
