"""The layer that bakes a real agent into BenchFlow's task image (design 436): the offline
``npm`` BenchFlow's install command meets (run with ``sh``, as in the image), the entrypoint,
and the build context assembled from an agents-cache install."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skillci.errors import RunnerError
from skillci.runners.benchflow_agents import (
    ENTRYPOINT,
    LAYERS,
    NPM_SHIM,
    context,
    layer_for,
)


def _npm(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    shim = tmp / "npm"
    shim.write_text(NPM_SHIM)
    shim.chmod(0o755)
    return subprocess.run(["sh", str(shim), *args], capture_output=True, text=True, timeout=10)


def test_the_offline_npm_meets_benchflows_install_of_a_preinstalled_package(tmp_path: Path) -> None:
    prefix = tmp_path / "js-agents"
    (prefix / "lib" / "node_modules" / "opencode-ai").mkdir(parents=True)
    (prefix / "lib" / "node_modules" / "@scope" / "acp").mkdir(parents=True)
    assert _npm(tmp_path, "--version").returncode == 0
    ok = _npm(tmp_path, "install", "-g", "--prefix", str(prefix), "opencode-ai@1.18.11")
    assert ok.returncode == 0 and "opencode-ai preinstalled" in ok.stdout, ok
    scoped = _npm(tmp_path, "install", "-g", f"--prefix={prefix}", "@scope/acp@2.0.1")
    assert scoped.returncode == 0 and "@scope/acp preinstalled" in scoped.stdout, scoped
    # what is not in the image fails loudly: there is no registry to fetch it from
    missing = _npm(tmp_path, "install", "-g", "--prefix", str(prefix), "@zed/codex-acp@1")
    assert missing.returncode == 1 and "not preinstalled" in missing.stderr
    other = _npm(tmp_path, "view", "opencode-ai")
    assert other.returncode == 1 and "only 'install'" in other.stderr


def test_the_entrypoint_names_the_gateway_once_and_runs_the_containers_command(
    tmp_path: Path,
) -> None:
    # the script is run against a copy of a hosts file: run as root on the host, the real
    # /etc/hosts would be changed (it was, once, on a machine that lacked the name)
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    entry = tmp_path / "entry"
    entry.write_text(ENTRYPOINT.replace("/etc/hosts", str(hosts)))
    assert "/etc/hosts" not in entry.read_text()
    for _ in range(2):
        proc = subprocess.run(["sh", str(entry), "echo", "ran"], capture_output=True,
                              text=True, timeout=30)  # fmt: skip
        assert proc.stdout.strip().splitlines()[-1] == "ran"
    gateway = any(
        f[1] == "00000000" and int(f[3], 16) & 2
        for f in (line.split() for line in Path("/proc/net/route").read_text().splitlines()[1:])
    )
    named = hosts.read_text().count("host.docker.internal")
    assert named == (1 if gateway and shutil.which("python3") else 0), hosts.read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="the layer copies the host's node")
def test_the_build_context_holds_node_the_agent_and_the_shims_at_benchflows_paths(
    tmp_path: Path,
) -> None:
    layer = LAYERS["opencode"]
    install = tmp_path / "opencode-1.0.0"
    exe = install / "node_modules" / layer.executable
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"\x7fELF not really")
    (install / "node_modules" / layer.package / "package.json").write_text('{"version":"1"}')
    ctx = context(layer, install, "skillci-task/x:1", tmp_path / "ctx")
    opt = ctx / "opt"
    assert (opt / "js-agents" / "bin" / "opencode").read_bytes() == b"\x7fELF not really"
    assert (opt / "js-agents" / "lib" / "node_modules" / "opencode-ai" / "package.json").is_file()
    assert (opt / "node" / "bin" / "npm").read_text() == NPM_SHIM
    node = subprocess.run([str(opt / "node" / "bin" / "node"), "--version"],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert node.stdout.startswith("v")
    dockerfile = (ctx / "Dockerfile").read_text()
    assert dockerfile.startswith("FROM skillci-task/x:1\nCOPY opt/ /opt/benchflow/\n")
    assert 'ENTRYPOINT ["/opt/benchflow/skillci-entrypoint"]' in dockerfile


def test_an_install_without_the_agents_executable_is_a_runner_error(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="missing from skillci's opencode install"):
        context(LAYERS["opencode"], tmp_path / "empty", "base", tmp_path / "ctx")
    assert layer_for("gemini") is None  # BenchFlow still installs it from npm


@pytest.mark.skipif(shutil.which("node") is None, reason="the layer copies the host's node")
def test_a_node_agents_whole_npm_tree_is_baked_with_its_bin_and_claude_codes_settings(
    tmp_path: Path,
) -> None:
    """Claude Code's ACP adapter is a node script: its npm tree goes under BenchFlow's
    ``lib/node_modules`` (its dependencies resolve as siblings), ``bin/claude-agent-acp``
    links to the script its package.json names, and the image gets Claude Code's
    machine-wide settings (bypassPermissions: no permission rule written to the workspace)."""
    layer = LAYERS["claude-agent-acp"]
    install = tmp_path / "benchflow-claude-agent-acp-0.73.0"
    pkg = install / "node_modules" / layer.package
    (pkg / "dist").mkdir(parents=True)
    (pkg / "dist" / "index.js").write_text("#!/usr/bin/env node\nrequire('dep')\n")
    (pkg / "package.json").write_text('{"bin": {"claude-agent-acp": "./dist/index.js"}}')
    dep = install / "node_modules" / "dep"
    dep.mkdir()
    (dep / "index.js").write_text("module.exports = 1\n")
    ctx = context(layer, install, "skillci-task/x:1", tmp_path / "ctx")
    js = ctx / "opt" / "js-agents"
    bin_ = js / "bin" / "claude-agent-acp"
    assert bin_.is_symlink() and bin_.resolve() == (
        js / "lib" / "node_modules" / layer.package / "dist" / "index.js"
    )
    assert (js / "lib" / "node_modules" / "dep" / "index.js").is_file()
    dockerfile = (ctx / "Dockerfile").read_text()
    [(dest, text)] = layer.files
    assert f"COPY file-0 {dest}\n" in dockerfile and (ctx / "file-0").read_text() == text
    assert dest == "/etc/claude-code/managed-settings.json" and "bypassPermissions" in text
    assert dict(layer.env) == {"IS_SANDBOX": "1"}  # else Claude Code refuses bypass as root


def test_a_node_agent_missing_from_the_cache_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillci.runners.benchflow_agents import _installed

    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path))
    with pytest.raises(RunnerError) as exc:
        _installed(LAYERS["codex-acp"], None)
    assert "@agentclientprotocol/codex-acp@2.0.1 is not in" in exc.value.message
    want = f"npm install --prefix {tmp_path}/benchflow-codex-acp-2.0.1 @agentclientprotocol/"
    assert want in str(exc.value.hint)


def test_a_baked_agents_cost_is_what_skillcis_gateway_answered() -> None:
    """BenchFlow's LiteLLM proxy counted 1 call of 600/300 tokens on a run whose gateway
    answered 6: the record's cost is the gateway's (failed calls cost nothing)."""
    from skillci.providers.gateway import GatewayCall
    from skillci.runners.benchflow_agents import gateway_cost
    from skillci.trace.models import Cost

    def call(i: int, **kw: object) -> GatewayCall:
        return GatewayCall.model_validate(
            {"api": "chat", "model": "m", "started": i, "latency_sec": 0.1, **kw}
        )

    calls = [call(i, input_tokens=100, output_tokens=10, usd=0.5) for i in range(5)]
    calls += [call(5, input_tokens=7, cached=True), call(6, error="RouteDown: x")]
    before = Cost(input_tokens=600, output_tokens=300, model_calls=1, tool_calls=4, usd=None)
    cost = gateway_cost(before, calls)
    assert (cost.model_calls, cost.cached_model_calls) == (6, 1)
    assert (cost.input_tokens, cost.output_tokens, cost.usd) == (507, 50, 2.5)
    assert cost.tool_calls == 4  # the agent's, from the trajectory
    assert gateway_cost(before, [call(0, error="RouteDown: x")]).usd is None
