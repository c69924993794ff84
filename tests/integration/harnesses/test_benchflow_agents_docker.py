"""Real agents through ``eval run --runner benchflow`` offline: OpenCode (design 436), and
BenchFlow's own ACP adapters of Claude Code and Codex at its pins (design 440).

BenchFlow 0.7.11 runs its own ``opencode`` ACP agent in the task's container; skillci bakes
its OpenCode install, the host's node and an offline ``npm`` into the image, so BenchFlow's
install step succeeds with no network. OpenCode's model calls go to BenchFlow's LiteLLM proxy
on the host, whose upstream is skillci's loopback gateway, which calls the route -- the
scripted competent model of tests/fakes/scripted_agents.py. Nothing else is faked: the
agent's tool calls run in the container and the task's verifier decides. A model that cannot
be reached is an ``infra_error`` (exit 4), never a failed trial.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from skillci.cli.main import main
from skillci.runners.benchflow_remote import BAKED_NETWORK_NOTE
from skillci.trace.models import EvalState
from skillci.trace.store import TraceStore
from tests import services
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_agents import solve_cfg_log_level
from tests.integration.agents.helpers import ROUTE_KEY, use_route

ROOT = Path(__file__).resolve().parents[3]
SKILL = ROOT / "skills" / "repo-debugger"
HOST_KEY = "host-gemini-key-not-for-agents-77e1"
#: The tool calls each adapter makes on cfg-log-level, as BenchFlow's ACP trajectory has them:
#: Claude Code's Skill tool (a skill-load event), Codex's read of the SKILL.md it lists (a
#: skill-load event too), then the shell: env, the check, the fix and the check again.
ADAPTER_CALLS = {
    "claude-code": ["load_skill", "run", "run", "run"],
    "codex": ["read_file", "run", "run", "run"],
}


class Job(NamedTuple):
    """What one ``eval run`` on BenchFlow here needs (with ``bench`` and Docker Compose)."""

    tmp_path: Path
    monkeypatch: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]


@pytest.fixture
def job(
    bench: str,
    compose: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Job:
    return Job(tmp_path, monkeypatch, capsys)


def _eval(
    home: Path, capsys: pytest.CaptureFixture[str], agent: str = "opencode"
) -> tuple[int, Any, str]:
    argv = ["eval", "run", "--task", "cfg-log-level", "--root", str(ROOT), "--skill", str(SKILL)]
    argv += ["--agent", agent]
    if agent == "opencode":  # the others: BenchFlow's adapter package at its pin
        argv += ["--agent-version", services.AGENT_VERSIONS["opencode"]]
    argv += ["--runner", "benchflow", "--model", "scripted", "--home", str(home), "--json"]
    code = main(argv)
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


@pytest.mark.docker
@pytest.mark.agents
@pytest.mark.slow  # one bench job: compose up, OpenCode's start, 5 model calls, verifier
def test_opencode_on_benchflow_passes_offline_with_its_own_tool_calls(
    bench: str,
    compose: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    services.need_agent("opencode")
    # a provider key of this machine, by a name BenchFlow passes on to its agents
    monkeypatch.setenv("GEMINI_API_KEY", HOST_KEY)
    with FakeOpenAI([solve_cfg_log_level]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        code, out, err = _eval(tmp_path / "state", capsys)
    assert code == 0, (out, err)
    [trial] = out["trials"]
    assert trial["state"] == "passed", trial
    rec = TraceStore(tmp_path / "state").get(trial["run_id"])
    assert rec.evaluation.state is EvalState.passed
    assert rec.runtime.runner == "benchflow" and rec.runtime.sandbox == "benchflow:docker"
    assert rec.metadata["benchflow_agent"] == "opencode"
    assert rec.metadata["benchflow_agent_version"] == services.AGENT_VERSIONS["opencode"]
    assert rec.runtime.harness_version == services.AGENT_VERSIONS["opencode"]
    # cfg-log-level sets no allow_internet: the record says the agent's sandbox had a network
    assert BAKED_NETWORK_NOTE in rec.warnings
    # the agent's own tool calls, read from BenchFlow's ACP trajectory: its skill tool (a
    # skill-load event), then its shell; the skill tool worked offline (it needs ripgrep)
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert [c.tool for c in calls] == ["load_skill", "run", "run", "run"], rec.events
    results = [e for e in rec.events if e.kind == "tool_result"]
    assert "ripgrep execution failed" not in (results[0].output or ""), results[0]
    assert "repo-debugger" in (results[0].output or "")
    assert [e.kind for e in rec.events].count("skill_load") == 1
    outputs = " ".join(e.output or "" for e in results)
    assert "config/service.ini: ok" in outputs  # the check's own output after the fix
    # the scripted model answered every call; no key of this machine reached the agent
    # (its environment, as `env | sort` printed it in the container)
    assert len(fake.requests) >= 4
    env = next(r.output or "" for r in results if "HOME=" in (r.output or ""))
    assert ROUTE_KEY not in env and HOST_KEY not in env
    assert "GEMINI_API_KEY" not in env and "GOOGLE_API_KEY" not in env, env
    jobs = Path(str(rec.metadata["benchflow_jobs_dir"])).parent
    calls_seen = (jobs / "gateway.jsonl").read_text().splitlines()
    assert len(calls_seen) == len(fake.requests)
    assert rec.cost.model_calls == len(fake.requests)  # the gateway's count (design 440)


@pytest.mark.docker
@pytest.mark.agents
@pytest.mark.slow  # one bench job whose every model call fails
@pytest.mark.parametrize("agent", ["opencode", *sorted(ADAPTER_CALLS)])
def test_a_baked_agent_on_benchflow_with_an_unreachable_model_is_an_infra_error(
    agent: str, job: Job
) -> None:
    tmp_path, monkeypatch, capsys = job
    if agent == "opencode":
        services.need_agent("opencode")
    else:
        services.need_benchflow_agent(agent)
    use_route(tmp_path, monkeypatch, "http://127.0.0.1:9/v1")  # nothing listens there
    started = time.monotonic()
    code, out, err = _eval(tmp_path / "state", capsys, agent)
    took = time.monotonic() - started
    [trial] = out["trials"]
    assert trial["state"] == "infra_error", trial
    assert code == 4, err
    assert "model was unreachable" in trial["error"], trial
    # the bench job is interrupted once the gateway saw the route fail (design 440): not
    # the agent's and BenchFlow's retries to their end (257-276 s for OpenCode before)
    assert took < 200, took
    state = tmp_path / "state" / "benchflow-jobs"
    lines = [x for p in state.glob("*/gateway.jsonl") for x in p.read_text().splitlines()]
    gateway = [json.loads(x) for x in lines]
    assert gateway and all(c["error"] for c in gateway), gateway


@pytest.mark.docker
@pytest.mark.agents
@pytest.mark.slow  # one bench job: compose up, the adapter's start, 5 model calls, verifier
@pytest.mark.parametrize("agent", sorted(ADAPTER_CALLS))
def test_an_acp_adapter_on_benchflow_passes_offline_with_its_own_tool_calls(
    agent: str, job: Job
) -> None:
    tmp_path, monkeypatch, capsys = job
    services.need_benchflow_agent(agent)
    monkeypatch.setenv("GEMINI_API_KEY", HOST_KEY)
    with FakeOpenAI([solve_cfg_log_level]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        code, out, err = _eval(tmp_path / "state", capsys, agent)
    assert code == 0, (out, err)
    [trial] = out["trials"]
    rec = TraceStore(tmp_path / "state").get(trial["run_id"])
    # passed: the fix, and nothing else changed (Claude Code wrote a permission rule to the
    # workspace's .claude/settings.local.json until its layer set bypassPermissions)
    assert trial["state"] == "passed", (trial, rec.evaluation.verifier_output)
    package, version = services.BENCHFLOW_AGENT_PACKAGES[agent]
    assert rec.metadata["benchflow_agent"] == package.rpartition("/")[2]
    assert rec.metadata["benchflow_agent_version"] == version
    assert rec.runtime.harness == package and rec.runtime.harness_version == version
    assert BAKED_NETWORK_NOTE in rec.warnings
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert [c.tool for c in calls] == ADAPTER_CALLS[agent], rec.events
    [load] = [e for e in rec.events if e.kind == "skill_load"]
    results = [e for e in rec.events if e.kind == "tool_result"]
    assert results[0].error is None, results[0]
    if agent == "codex":  # the SKILL.md's own text came back
        assert load.path == "/skills/repo-debugger/SKILL.md"
        assert "# Repo debugger" in (results[0].output or "")
    outputs = " ".join(e.output or "" for e in results)
    assert "config/service.ini: ok" in outputs
    env = next(r.output or "" for r in results if "BENCHFLOW_PROVIDER" in (r.output or ""))
    assert ROUTE_KEY not in env and HOST_KEY not in env, env
    assert "GEMINI_API_KEY" not in env and "GOOGLE_API_KEY" not in env, env
    jobs = Path(str(rec.metadata["benchflow_jobs_dir"])).parent
    calls_seen = (jobs / "gateway.jsonl").read_text().splitlines()
    assert len(calls_seen) == len(fake.requests) >= 4
    # the cost is the gateway's count of the calls, not BenchFlow's LiteLLM's (it saw 1)
    assert rec.cost.model_calls == len(fake.requests)
