"""``skillci eval triggers --agent``: triggering as the real agent decides it, offline.

The skill under test (repo-debugger) and a distractor (pdf) are installed in the real
agent's workspace; the agent (npm-installed, pinned: tests/services.py) runs headless on
each query against a loopback OpenAI-compatible model scripted per query
(tests/fakes/scripted_agents.py:trigger_model): call the skill tool, read the SKILL.md by
path, load the distractor, or answer in prose that *names* the skill without loading it.
Recall and precision must follow what the agent did — its tool calls — and never its prose.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.trace.store import TraceStore
from tests import services
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_agents import TriggerAction, trigger_model
from tests.integration.agents.helpers import use_route

MANIFEST = "schema_version: 1\nname: {name}\nversion: 0.1.0\ntarget_runtime: {{model_family: sim, agent_harness: builtin}}\n"
QUERIES: dict[str, tuple[str, bool, str | None, TriggerAction]] = {
    # id: (query, should_trigger, near_miss, what the scripted model does)
    "fix-ci": (
        "My pytest run fails in CI, please fix the bug",
        True,
        None,
        ("skill", "repo-debugger"),
    ),
    "fix-trace": (
        "Fix the failing test from this stack trace",
        True,
        None,
        ("read", "repo-debugger"),
    ),
    "tox": (
        "tox reports one failing test, locate the bug",
        True,
        None,
        ("say", "I would use the repo-debugger skill for this: loaded repo-debugger."),
    ),
    "merge-forms": ("Merge these two forms into one file", False, "pdf", ("skill", "pdf")),
    "new-feature": ("Add a new feature to the service", False, None, ("skill", "repo-debugger")),
}


def _skill(root: Path, name: str, description: str, suite: str | None = None) -> Path:
    d = root / "skills" / name
    (d / "skillci" / "evals").mkdir(parents=True)
    body = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n"
    (d / "SKILL.md").write_text(body)
    if suite:  # a skillci package; the others are plain skill folders
        (d / "skillci.yaml").write_text(MANIFEST.format(name=name))
        (d / "skillci" / "evals" / "triggers.yaml").write_text(suite)
    return d


def suite_yaml(ids: list[str]) -> str:
    queries = []
    for qid in ids:
        query, should, near, _ = QUERIES[qid]
        q = {"id": qid, "query": query, "should_trigger": should}
        queries.append(q | ({"near_miss": near} if near else {}))
    return json.dumps({"schema_version": 1, "runs": 1, "queries": queries})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _skill(
        root,
        "repo-debugger",
        "Fix a failing test in a Python repository from a CI log or stack trace.",
        suite_yaml(list(QUERIES)),
    )
    _skill(root, "pdf", "Fill and merge PDF forms.")
    return root


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    plan = {query: action for query, _, _, action in QUERIES.values()}
    with FakeOpenAI([trigger_model(plan, after_load=2.0)]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        yield fake


def run(repo: Path, agent: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    argv += ["--agent", agent, "--agent-version", services.AGENT_VERSIONS[agent]]
    argv += ["--model", "scripted", "--home", str(repo / ".skillci"), "--json", *extra]
    code = main(argv)
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


@pytest.mark.agents  # claude-code 11-20 s, codex 7-10 s, copilot 11 s, gemini 22 s, qwen 86 s (5 runs);
# over ACP: gemini-acp 21-30 s, claude-code-acp 22 s, codex-acp 6 s
@pytest.mark.parametrize(
    "agent",
    [
        "claude-code",
        "codex",
        "copilot",
        *(
            pytest.param(a, marks=pytest.mark.slow)
            for a in ("gemini", "qwen", "gemini-acp", "claude-code-acp", "codex-acp", "copilot-acp")
        ),
    ],
)
def test_trigger_metrics_come_from_what_the_real_agent_loaded(
    agent: str, repo: Path, scripted: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    services.need_agent(agent)
    code, out = run(repo, agent, capsys)
    assert code == 0, out
    assert (out["agent"], out["agent_version"]) == (agent, services.AGENT_VERSIONS[agent])
    assert out["catalogue"] == ["pdf", "repo-debugger"]
    choices = {o["query_id"]: o["choices"] for o in out["outcomes"]}
    assert choices == {
        "fix-ci": ["repo-debugger"],  # its skill tool (Codex: a read of the SKILL.md)
        "fix-trace": ["repo-debugger"],  # a read of the installed SKILL.md by path
        "tox": [None],  # prose that names the skill is not a load
        "merge-forms": ["pdf"],  # the distractor
        "new-feature": ["repo-debugger"],  # a false trigger
    }
    m = out["metrics"]
    assert (m["precision"], m["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert m["confusion"] == {"none": 1} and m["false_triggers"] == {"(unlabelled)": 1}
    assert (out["ran"], out["cached"]) == (5, 0)
    # each decision is a run record holding the agent's own trajectory
    store = TraceStore(repo / ".skillci")
    by_id = {o["query_id"]: o["run_ids"][0] for o in out["outcomes"]}
    rec = store.get(by_id["fix-ci"])
    assert (rec.runtime.harness, rec.runtime.harness_version) == (
        agent,
        services.AGENT_VERSIONS[agent],
    )
    assert rec.evaluation.state == "passed"
    calls = [e for e in rec.events if e.kind == "tool_call"]
    tools = {"claude-code": "Skill", "codex": "command_execution", "gemini": "activate_skill"}
    assert (
        calls[0].tool == (tools | {"qwen": "skill", "copilot": "skill"})[agent.removesuffix("-acp")]
    )
    assert [e.path for e in rec.events if e.kind == "skill_load"] == ["SKILL.md"]
    assert rec.metadata["trigger"]["loaded"] == ["repo-debugger"]
    assert rec.stop_reason == "skill_loaded"  # stopped at the load: the decision was made
    # no load, or a distractor's: the agent runs to its answer (the model's 2 s included)
    for qid in ("tox", "merge-forms"):
        assert store.get(by_id[qid]).stop_reason == "final_answer"
    tox = store.get(by_id["tox"])
    assert "repo-debugger" in (tox.final_output or "")  # it said so, and did not load it
    assert tox.metadata["trigger"]["loaded"] == []
    assert tox.evaluation.state == "failed"
    # the skills were installed for the run only; the route's key never reached the agent
    assert not any(Path(repo, ".skillci", "trigger-trials").rglob("SKILL.md"))
    asked = len(scripted.requests)
    assert asked >= 5
    assert all("route-key-not-for-agents" not in json.dumps(r) for r in scripted.requests)
    # a second run reuses every decision: the agent does not run again
    code, again = run(repo, agent, capsys)
    assert code == 0, again
    assert (again["ran"], again["cached"]) == (0, 5)
    assert again["metrics"] == out["metrics"]
    assert len(scripted.requests) == asked


@pytest.mark.agents
@pytest.mark.slow  # 32 s measured (two runs): OpenCode is slow to start in a fresh HOME
@pytest.mark.parametrize("agent", ["opencode", "opencode-acp"])
def test_trigger_decisions_in_opencode_come_from_its_skill_tool(
    agent: str, tmp_path: Path, scripted: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    services.need_agent(agent)
    root = tmp_path / "two"
    desc = "Fix a failing test in a Python repository from a CI log or stack trace."
    _skill(root, "repo-debugger", desc, suite_yaml(["fix-ci", "tox"]))
    _skill(root, "pdf", "Fill and merge PDF forms.")
    code, out = run(root, agent, capsys)
    assert code == 0, out
    choices = {o["query_id"]: o["choices"] for o in out["outcomes"]}
    assert choices == {"fix-ci": ["repo-debugger"], "tox": [None]}
    rec = TraceStore(root / ".skillci").get(out["outcomes"][0]["run_ids"][0])
    assert [e.tool for e in rec.events if e.kind == "tool_call"][:1] == ["skill"]


@pytest.mark.agents  # 6 s measured
def test_a_model_route_that_fails_is_a_measurement_error_not_a_decision(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAI(["never used"], status=401) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        code, err = run(repo, "codex", capsys)
    assert code == 4, err
    said = " ".join(err.split())
    assert "could not decide trigger query 'fix-ci'" in said
    assert "the model route failed" in said
    # the failed run is recorded as an error, and never reused as a decision
    [row] = TraceStore(repo / ".skillci").query(task_id="trigger/fix-ci")
    rec = TraceStore(repo / ".skillci").get(row.run_id)
    assert rec.evaluation.state == "infra_error"
    assert rec.trial_cache_key is None


def test_an_agent_that_is_not_installed_is_exit_4_before_any_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "none"))
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    code = main([*argv, "--agent", "codex", "--home", str(repo / ".skillci"), "--json"])
    assert code == 4
    assert "skillci agents install codex" in " ".join(capsys.readouterr().err.split())
    assert not (repo / ".skillci").exists()  # nothing ran, nothing written


def test_an_agent_that_cannot_decide_triggers_is_exit_2(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    assert main([*argv, "--agent", "oracle", "--home", str(repo / ".skillci")]) == 2
    assert "unknown real agent 'oracle'" in capsys.readouterr().err


GATE_QUERY = "CI is red: fix the failing pytest test from this log"
GATE_SUITE = f"""schema_version: 1
runs: 1
queries:
- {{id: ci-log, query: "{GATE_QUERY}", should_trigger: true}}
"""


@pytest.mark.agents  # 16 s measured (codex: two trials, two trigger runs)
def test_the_gates_trigger_check_runs_in_the_gates_real_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The skill targets Codex at base; the PR makes its description vague. The scripted
    model loads the skill only while its listed description speaks of a CI failure log:
    Codex stops loading it on head, and the gate rejects on the agent's own decision."""
    from tests.fakes.scripted_agents import solve_cfg_log_level
    from tests.integration.loop.conftest import git, make_scratch, write_suites

    def model(body: dict[str, Any]) -> Any:
        text = json.dumps(body.get("messages") or [])
        if GATE_QUERY not in text:
            return solve_cfg_log_level(body)
        if "CI failure log" in text:
            return trigger_model({GATE_QUERY: ("skill", "repo-debugger")})(body)
        return "I can help with code, repo-debugger or not."

    version = services.AGENT_VERSIONS["codex"]
    repo = make_scratch(tmp_path / "repo", drop_rule_file=None)
    write_suites(repo, {"validation": ["cfg-log-level"]})
    skill = repo / "skills" / "repo-debugger"
    (skill / "skillci" / "evals" / "triggers.yaml").write_text(GATE_SUITE)
    manifest = skill / "skillci.yaml"
    pin = f"  agent: codex\n  agent_version: '{version}'\n  tokenizer:"
    manifest.write_text(manifest.read_text().replace("  tokenizer:", pin, 1))
    git(repo, "commit", "-qam", "target Codex, one trigger query")
    md = skill / "SKILL.md"
    text = md.read_text()
    start = text.index("description:")
    md.write_text(text[:start] + "description: Helps with code." + text[text.index("\n", start) :])
    git(repo, "commit", "-qam", "head: a vague description")
    with FakeOpenAI([model]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        argv = ["gate", "--repo", str(repo), "--base", "main~1", "--head", "main"]
        argv += ["--suites", "validation", "--repeat", "1", "--model", "scripted", "--json"]
        code = main(argv)
    report = json.loads(capsys.readouterr().out)
    assert (code, report["verdict"]) == (1, "reject"), report
    trig = report["triggers"]
    assert (trig["base"]["recall"], trig["head"]["recall"]) == (1.0, 0.0)
    [line] = [c for c in report["checks"] if c["name"] == "triggers"]
    assert not line["passed"]
    from skillci.flows.context import RepoContext

    store = RepoContext.open(repo).store
    rows = store.query(task_id="trigger/ci-log")
    records = [store.get(r.run_id) for r in rows]
    assert sorted(r.metadata["trigger"]["chosen"] or "none" for r in records) == [
        "none",
        "repo-debugger",
    ]
    assert {(r.runtime.harness, r.runtime.harness_version) for r in records} == {("codex", version)}
