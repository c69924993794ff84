from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_SKILLS = sorted(p for p in (ROOT / "skills").iterdir() if (p / "skillci.yaml").is_file())
PLAIN_FIXTURES = ROOT / "tests" / "fixtures" / "plain-skills"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real git in tests, with a pinned identity and no user config."""
    for k, v in {
        "GIT_AUTHOR_NAME": "skillci-test",
        "GIT_AUTHOR_EMAIL": "test@skillci.invalid",
        "GIT_COMMITTER_NAME": "skillci-test",
        "GIT_COMMITTER_EMAIL": "test@skillci.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def repo_debugger() -> Path:
    return ROOT / "skills" / "repo-debugger"
