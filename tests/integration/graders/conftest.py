"""Shared by the graders' integration tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded() -> None:
    """Import litellm (seconds on a loaded machine; the sim judge's route needs it) once, in
    setup, not in a test's call (as tests/integration/triggers does)."""
    from skillci.providers.client import litellm_module

    litellm_module()
