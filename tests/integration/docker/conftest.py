"""A Docker engine for these tests: the one ``DOCKER_HOST`` (or the default socket) names.

The tests here are marked ``docker`` (tests/conftest.py): without an engine they skip with the
reason, and under ``SKILLCI_REQUIRE_SERVICES`` (set by ``.ci/run`` after
``scripts/ci_docker.sh start``) they FAIL — the Docker runner is only trusted if it ran in CI.
The test run itself never installs or starts an engine.
"""

from __future__ import annotations

import os

import pytest

from tests import services

pytestmark = pytest.mark.docker


@pytest.fixture(scope="session")
def docker_engine() -> str:
    """DOCKER_HOST of a working engine whose python:3.11-slim is the offline base."""
    services.need("docker")
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
