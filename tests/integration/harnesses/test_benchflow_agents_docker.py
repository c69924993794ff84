"""A real agent (OpenCode) through ``eval run --runner benchflow`` offline (design 436).

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
from pathlib import Path
from typing import Any

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


def _eval(home: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    argv = ["eval", "run", "--task", "cfg-log-level", "--root", str(ROOT), "--skill", str(SKILL)]
    argv += ["--agent", "opencode", "--agent-version", services.AGENT_VERSIONS["opencode"]]
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


@pytest.mark.docker
@pytest.mark.agents
@pytest.mark.slow  # one bench job whose every model call fails
def test_opencode_on_benchflow_with_an_unreachable_model_is_an_infra_error(
    bench: str,
    compose: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    services.need_agent("opencode")
    use_route(tmp_path, monkeypatch, "http://127.0.0.1:9/v1")  # nothing listens there
    code, out, err = _eval(tmp_path / "state", capsys)
    [trial] = out["trials"]
    assert trial["state"] == "infra_error", trial
    assert code == 4, err
    assert "model was unreachable" in trial["error"], trial
