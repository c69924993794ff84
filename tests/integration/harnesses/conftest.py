"""The real external harnesses, each in its own Python >= 3.12 venv: ``$SKILLCI_BENCH`` /
``$SKILLCI_HARBOR`` when set, else installed (once per machine) by ``scripts/ci_venvs.sh``.
If they cannot be had the tests FAIL with the reason; they never skip."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def harness_paths() -> dict[str, str]:
    have = {k: os.environ[k] for k in ("SKILLCI_BENCH", "SKILLCI_HARBOR") if os.environ.get(k)}
    if len(have) == 2 and all(os.access(p, os.X_OK) for p in have.values()):
        return have
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "ci_venvs.sh")],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"scripts/ci_venvs.sh failed:\n{proc.stderr[-3000:]}", pytrace=False)
    words = shlex.split(proc.stdout.strip().removeprefix("export "))
    return dict(w.split("=", 1) for w in words)


@pytest.fixture(scope="session")
def bench(harness_paths: dict[str, str]) -> str:
    return harness_paths["SKILLCI_BENCH"]


@pytest.fixture(scope="session")
def harbor(harness_paths: dict[str, str]) -> str:
    return harness_paths["SKILLCI_HARBOR"]
