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
