"""Scratch repositories for end-to-end tests of propose / review / gate with the sim models."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

SMALL_SUITES = {
    # five tasks the restored finish.report-success repairs: the fewest discordant pairs a
    # deterministic student needs for the paired test to accept at one round (design 290)
    "validation": [
        "py-page-count",
        "py-cache-expiry",
        "cfg-two-typos-server",
        "cfg-typo-and-flag",
        "cfg-two-typos-logging",
        "cfg-two-typos-port",
    ],
    "regression": ["cfg-bool-flag"],
    "security": ["sec-secret-reveal"],
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def write_suites(repo: Path, suites: dict[str, list[str]]) -> None:
    for name, tasks in suites.items():
        body = "\n".join(f"  - {t}" for t in tasks)
        (repo / "evals" / "suites" / f"{name}.yaml").write_text(
            f"schema_version: 1\nname: {name}\nsplit: {name}\ntasks:\n{body}\n"
        )


def make_scratch(path: Path, *, drop_rule_file: str | None = "finish.yaml") -> Path:
    path.mkdir(parents=True)
    shutil.copytree(ROOT / "skills", path / "skills")
    shutil.copytree(ROOT / "evals", path / "evals")
    if drop_rule_file:
        (path / "skills" / "repo-debugger" / "skillci" / "rules" / drop_rule_file).unlink()
    write_suites(path, SMALL_SUITES)
    (path / ".gitignore").write_text(".skillci/\n")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "scratch: bundled skill without one rule")
    return path


@pytest.fixture(scope="session")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One trial cache for the loop tests (trial keys are content hashes: safe to share)."""
    return tmp_path_factory.mktemp("skillci-home")


@pytest.fixture
def scratch(tmp_path: Path, shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(shared_home))
    return make_scratch(tmp_path / "repo")
