"""A Docker engine for these tests: the one ``DOCKER_HOST`` names, else the private engine
``scripts/ci_docker.sh start`` brings up (installs, builds the offline base, starts dockerd).

When no engine can be had the tests FAIL with the reason — they never skip: the Docker runner
is only trusted if it ran here.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "ci_docker.sh"


def _reachable() -> str | None:
    from skillci.runners import docker as dr

    dr.client.cache_clear()
    return dr.docker_available()


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[str]:
    """DOCKER_HOST of a working engine whose python:3.11-slim is the offline base."""
    if os.environ.get("DOCKER_HOST") and _reachable() is None:
        yield os.environ["DOCKER_HOST"]
        return
    proc = subprocess.run(
        ["bash", str(SCRIPT), "start"], capture_output=True, text=True, timeout=1800, check=False
    )
    if proc.returncode != 0:
        pytest.fail(
            f"could not start a Docker engine with {SCRIPT} (exit {proc.returncode}):\n"
            f"{proc.stderr[-3000:]}",
            pytrace=False,
        )
    host = proc.stdout.strip().removeprefix("export DOCKER_HOST=")
    mp = pytest.MonkeyPatch()
    mp.setenv("DOCKER_HOST", host)
    why = _reachable()
    if why is not None:
        pytest.fail(f"{SCRIPT} started an engine but it does not answer: {why}", pytrace=False)
    yield host
    mp.undo()
