"""A real agent on a real small model: Codex against SmolLM2-135M served by llama.cpp on
loopback (the server fixture of tests/integration/runners/test_real_model.py), through
skillci's gateway.

A 135M model cannot do the task; the point is the real path: the agent's own request in
its own wire format (OpenAI Responses) reaches a real inference server through the
gateway, each call is recorded with the server's token counts, and what comes back is a
measured outcome of the agent's run judged by the task's verifier. Codex only: its
request (~5k tokens) fits the server's 8k context; Claude Code's and OpenCode's system
prompts do not, and a 135M model at a larger context only makes the step slower.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.store import TraceStore
from tests import services
from tests.integration.runners.test_real_model import server, use_smollm2  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.llama_server, pytest.mark.agents]
pytestmark += [pytest.mark.timeout(900)]  # a 5k-token prompt on a CPU model: minutes when loaded
ROOT = Path(__file__).resolve().parents[3]


def test_codex_on_a_real_small_model_is_a_measured_run_with_the_servers_tokens(
    server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use_smollm2(tmp_path, monkeypatch, server)
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(services.agents_dir()))
    version = services.AGENT_VERSIONS["codex"]
    argv = ["eval", "run", "--task", "cfg-log-level", "--root", str(ROOT)]
    argv += ["--skill", str(ROOT / "skills" / "repo-debugger"), "--agent", "codex"]
    argv += ["--agent-version", version, "--model", "local/smollm2"]
    code = main([*argv, "--home", str(tmp_path / "state"), "--json"])
    out = json.loads(capsys.readouterr().out)
    [trial] = out["trials"]
    # the agent ran and the verifier judged it: an outcome, not a measurement error
    assert trial["state"] in {"passed", "failed"} and code == 0, trial
    trial_dir = Path(trial["trial_dir"])
    record = json.loads((trial_dir / "record.json").read_text())
    assert (record["runtime"]["harness"], record["runtime"]["harness_version"]) == (
        "codex",
        version,
    )
    assert record["model"]["route"] == "local/smollm2"
    # every call the agent made went through the gateway to the server, and is recorded
    # with the server's own token counts
    gateway = [
        json.loads(line)
        for line in (trial_dir / "logs" / "agent" / "gateway.jsonl").read_text().splitlines()
    ]
    assert len(gateway) == record["cost"]["model_calls"] >= 1
    assert record["cost"]["input_tokens"] > 1000  # Codex's own prompt, counted by llama.cpp
    assert record["cost"]["input_tokens"] == sum(g["input_tokens"] for g in gateway)
    assert {g["api"] for g in gateway} == {"responses"} and not any(g["error"] for g in gateway)
    assert 0 < record["cost"]["output_tokens"] <= 128 * len(gateway)  # the route's max_tokens


def test_a_trigger_decision_of_codex_on_a_real_small_model_comes_from_its_own_run(
    server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``eval triggers --agent codex`` on SmolLM2: whatever the 135M model decides, the
    decision is read from the agent's own run (a load is a skill-load event), the run
    is a measurement (passed or failed, never an infra error), and its calls reached the
    real server through the gateway."""
    from tests.integration.agents.test_agent_triggers import _skill, suite_yaml

    use_smollm2(tmp_path, monkeypatch, server)
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(services.agents_dir()))
    repo = tmp_path / "repo"
    desc = "Fix a failing test in a Python repository from a CI log or stack trace."
    skill = _skill(repo, "repo-debugger", desc, suite_yaml(["fix-ci"]))
    _skill(repo, "pdf", "Fill and merge PDF forms.")
    argv = ["eval", "triggers", "--skill", str(skill), "--root", str(repo), "--agent", "codex"]
    argv += ["--agent-version", services.AGENT_VERSIONS["codex"], "--model", "local/smollm2"]
    code = main([*argv, "--home", str(repo / ".skillci"), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert (out["ran"], out["agent"]) == (1, "codex")
    [outcome] = out["outcomes"]
    rec = TraceStore(repo / ".skillci").get(outcome["run_ids"][0])
    assert rec.evaluation.state in {"passed", "failed"}, rec.evaluation
    trigger = rec.metadata["trigger"]
    assert outcome["choices"] == [trigger["chosen"]] and trigger["decided_by"] == "agent"
    if "repo-debugger" in trigger["loaded"]:  # a load is an event of the agent's own run
        assert any(e.kind == "skill_load" for e in rec.events)
    else:
        assert trigger["chosen"] != "repo-debugger"
    assert rec.cost.model_calls >= 1 and rec.cost.input_tokens > 1000  # counted by llama.cpp


def test_a_gate_in_codex_on_a_real_small_model_does_not_accept_a_change_it_cannot_tell(
    server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``skillci gate`` whose student is Codex on SmolLM2 (the skill's ``target_runtime``
    at base), on a change that adds one harmless line: both sides run in the real agent
    on the real server and are measured (passed or failed, never an error), and one trial
    a side is too little to tell anything — the verdict is ``inconclusive`` (exit 5),
    never an acceptance of whatever the 135M model happened to do."""
    from skillci.flows.context import RepoContext
    from tests.integration.loop.conftest import git, make_scratch, write_suites

    use_smollm2(tmp_path, monkeypatch, server)
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(services.agents_dir()))
    version = services.AGENT_VERSIONS["codex"]
    repo = make_scratch(tmp_path / "repo", drop_rule_file=None)
    write_suites(repo, {"validation": ["cfg-log-level"]})
    manifest = repo / "skills" / "repo-debugger" / "skillci.yaml"
    pin = f"  agent: codex\n  agent_version: '{version}'\n  tokenizer:"
    manifest.write_text(manifest.read_text().replace("  tokenizer:", pin, 1))
    git(repo, "commit", "-qam", "target Codex")
    skill_md = repo / "skills" / "repo-debugger" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nRe-run the failing check after a fix.\n")
    git(repo, "commit", "-qam", "head: one more line")
    argv = ["gate", "--repo", str(repo), "--base", "main~1", "--head", "main"]
    argv += ["--suites", "validation", "--repeat", "1", "--model", "local/smollm2", "--json"]
    code = main(argv)
    report = json.loads(capsys.readouterr().out)
    assert (code, report["verdict"]) == (5, "inconclusive"), report
    assert (report["agent"], report["agent_version"]) == ("codex", version)
    sides = report["evidence"]["cfg-log-level"]
    store = RepoContext.open(repo).store
    for run_id in sides["base"] + sides["head"]:
        record = store.get(run_id)
        assert record.runtime.harness == "codex" and record.model.route == "local/smollm2"
        assert record.evaluation.state in {"passed", "failed"}, record.evaluation
        assert record.cost.model_calls >= 1 and record.cost.input_tokens > 1000  # llama.cpp's
