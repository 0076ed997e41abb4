"""dbt-tests-adapter's basic materializations on the lakehouse adapter."""

from __future__ import annotations

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog, test_snapshot_check_cols, test_snapshot_timestamp
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental, BaseIncrementalNotSchemaChange
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_table_materialization import BaseTableMaterialization
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection
from dbt.tests.util import AnyInteger

from tests.adapter.plain_tables import replace_update_rows


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


class TestSingularTests(BaseSingularTests):
    pass


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    pass


class TestIncremental(BaseIncremental):
    pass


class TestIncrementalNotSchemaChange(BaseIncrementalNotSchemaChange):
    pass


class TestGenericTests(BaseGenericTests):
    pass


class TestTableMaterialization(BaseTableMaterialization):
    pass


# Snapshots on plain parquet tables (the adapter's own snapshot materialization; dbt-spark's needs
# Delta).  The seeds are plain tables too, edited by a rewrite instead of `update` (plain_tables.py).
class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(autouse=True)
    def rewrite_instead_of_update(self, monkeypatch):
        replace_update_rows(monkeypatch, test_snapshot_check_cols)


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(autouse=True)
    def rewrite_instead_of_update(self, monkeypatch):
        replace_update_rows(monkeypatch, test_snapshot_timestamp)


class TestAdapterMethod(BaseAdapterMethod):
    pass


class TestValidateConnection(BaseValidateConnection):
    pass


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        # Spark's names for the types (the catalog reads `show table extended`'s schema), the
        # OS user as every relation's owner, and a size for the seed, a table with files
        return expected_catalog.base_expected_catalog(
            project,
            role=getpass.getuser(),
            id_type="long",
            text_type="string",
            time_type="timestamp",
            view_type="view",
            table_type="table",
            model_stats=expected_catalog.no_stats(),
            seed_stats={
                "bytes": {
                    "id": "bytes",
                    "label": "bytes",
                    "value": AnyInteger(),
                    "include": True,
                    "description": None,
                },
                "has_stats": {
                    "id": "has_stats",
                    "label": "Has Stats?",
                    "value": True,
                    "include": False,
                    "description": "Indicates whether there are statistics for this table",
                },
            },
        )
