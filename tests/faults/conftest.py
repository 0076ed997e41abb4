"""Fixtures of the kill tests: each scenario's warehouse is prepared once per session and worker
(the purged lake is a later state of the purge lake's warehouse: one preparation serves both)."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.harness import Lake


@pytest.fixture(scope="session")
def purge_lake() -> Lake:
    lake = Lake("purge")
    scenarios.prepare_purge(lake)
    return lake


@pytest.fixture(scope="session")
def purged_lake(purge_lake: Lake) -> Lake:
    """The purge lake after one purge: its own template of the same warehouse."""
    lake = purge_lake.variant("template-purged")
    scenarios.prepare_purged(purge_lake, lake)
    return lake


@pytest.fixture(scope="session")
def compaction_lake() -> Lake:
    lake = Lake("compaction")
    scenarios.prepare_compaction(lake)
    return lake


@pytest.fixture(scope="session")
def snapshot_lake() -> tuple[Lake, dict[str, list[str]]]:
    lake = Lake("snapshot")
    versions = scenarios.prepare_snapshot(lake)
    return lake, versions
