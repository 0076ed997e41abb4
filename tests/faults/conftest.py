"""Fixtures of the kill tests: each scenario's warehouse is prepared once per session."""

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
def purged_lake() -> Lake:
    lake = Lake("purged")
    scenarios.prepare_purged(lake)
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
