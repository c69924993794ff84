"""The real external harnesses, each in its own Python >= 3.12 venv: ``$SKILLCI_BENCH`` /
``$SKILLCI_HARBOR`` when set, else the venvs ``scripts/ci_venvs.sh`` left in its cache.

Tests using them are marked ``harness_venvs`` (tests/conftest.py): absent venvs skip them with
the reason, or FAIL them under ``SKILLCI_REQUIRE_SERVICES`` (as ``.ci/run`` sets). The test run
never builds the venvs itself."""

from __future__ import annotations

import pytest

from tests import services


@pytest.fixture(scope="session")
def harness_paths() -> dict[str, str]:
    services.need("harness_venvs")
    found = services.harness_paths()
    assert found is not None
    return found


@pytest.fixture(scope="session")
def bench(harness_paths: dict[str, str]) -> str:
    return harness_paths["SKILLCI_BENCH"]


@pytest.fixture(scope="session")
def harbor(harness_paths: dict[str, str]) -> str:
    return harness_paths["SKILLCI_HARBOR"]
