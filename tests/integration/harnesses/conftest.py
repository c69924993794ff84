"""The real external harnesses, each in its own Python >= 3.12 venv: ``$SKILLCI_BENCH`` /
``$SKILLCI_HARBOR`` when set, else the venvs ``scripts/ci_venvs.sh`` left in its cache.

Tests using them are marked ``harness_venvs`` (tests/conftest.py): absent venvs skip them with
the reason, or FAIL them under ``SKILLCI_REQUIRE_SERVICES`` (as ``.ci/run`` sets). The test run
never builds the venvs itself."""

from __future__ import annotations

import shutil
import subprocess

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


def _compose_absent() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return "no docker CLI on PATH"
    proc = subprocess.run([docker, "compose", "version"], capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    if proc.returncode != 0:
        return (
            "Harbor's and BenchFlow's docker sandboxes need the Docker Compose v2 plugin "
            "(`docker compose`) "
            'and this docker CLI has none; install it: eval "$(bash scripts/ci_docker.sh start)"'
        )
    return None


@pytest.fixture
def compose() -> None:
    """The Docker Compose v2 plugin Harbor's and BenchFlow's docker sandboxes drive."""
    if (why := _compose_absent()) is None:
        return
    if "docker" in services.required():
        pytest.fail(f"[docker] required by {services.REQUIRE_ENV} but absent: {why}", pytrace=False)
    pytest.skip(f"[docker] {why}")
