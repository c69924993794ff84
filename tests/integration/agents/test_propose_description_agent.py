"""``skillci propose --target description`` decided by the real agent (design 404).

A scratch git repo holds repo-debugger (a skillci package with a weak description and a
four-query trigger suite, two in each part of the 60/40 split) and a plain distractor
skill (pdf). With a real agent, every query of every step is a headless run of that agent
with the candidate's whole skill installed; the loopback model loads repo-debugger only
when the description the agent lists for it names a word of the query — so the kept
candidate wins on what Codex (or Claude Code) itself loaded, not on the catalogue question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.compile.description import words
from skillci.flows.context import RepoContext
from skillci.skill.triggers import split_of
from tests import services
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_agents import TriggerAction, trigger_model
from tests.integration.agents.test_agent_triggers import use_route
from tests.integration.loop.conftest import git

WEAK = "Repairs Python code."
#: id -> (query, should_trigger); ids chosen so each part of the split has one of each
QUERIES = {
    "fix-ci": ("My pytest run fails in CI, please fix the failing test", True),
    "deploy": ("Deploy the service to staging tonight", False),
    "pytest-fail": ("The failing pytest test in the billing module needs a fix", True),
    "merge-forms": ("Merge these two forms into one file", False),
}
MENTIONS = re.compile(r"Use when the request mentions: ([^.]*)\.")


def make_repo(root: Path, runtime: str = "{model_family: sim, agent_harness: builtin}") -> Path:
    skill = root / "skills" / "repo-debugger"
    (skill / "skillci" / "evals").mkdir(parents=True)
    md = f"---\nname: repo-debugger\ndescription: {WEAK}\n---\n# repo-debugger\n\nSteps.\n"
    (skill / "SKILL.md").write_text(md)
    manifest = (
        f"schema_version: 1\nname: repo-debugger\nversion: 0.1.0\ntarget_runtime: {runtime}\n"
    )
    (skill / "skillci.yaml").write_text(manifest)
    queries = [{"id": i, "query": q, "should_trigger": s} for i, (q, s) in QUERIES.items()]
    suite = {"schema_version": 1, "runs": 1, "queries": queries}
    (skill / "skillci" / "evals" / "triggers.yaml").write_text(json.dumps(suite))
    (root / "other" / "pdf").mkdir(parents=True)
    (root / "other/pdf/SKILL.md").write_text("---\nname: pdf\ndescription: Fill PDF forms.\n---\n")
    (root / ".gitignore").write_text(".skillci/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "scratch")
    return root


def propose(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    argv = ["propose", "--target", "description", "--repo", str(repo), "--iterations", "2"]
    code = main([*argv, *extra])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in extra else out + err)


def test_the_split_gives_each_part_a_query_of_each_kind() -> None:
    parts = {(split_of(i), s) for i, (_, s) in QUERIES.items()}
    assert parts == {("train", True), ("train", False), ("held_out", True), ("held_out", False)}


@pytest.mark.parametrize(
    ("extra", "runtime", "said"),
    [
        (("--agent", "oracle"), None, "agent 'oracle' cannot decide trigger queries"),
        (("--agent", "bogus"), None, "agent 'bogus' cannot decide trigger queries"),
        ((), "{model_family: sim, agent_harness: x, agent: noop}", "agent 'noop' cannot"),
    ],
)
def test_an_agent_that_never_loads_a_skill_is_refused_before_any_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    runtime: str | None,
    said: str,
) -> None:
    repo = make_repo(tmp_path / "r", *([runtime] if runtime else []))
    code, err = propose(repo, capsys, *extra)
    assert code == 2, err
    said_line = " ".join(err.split())
    assert said in said_line
    assert "use --agent builtin (the catalogue question) or a real agent: " in said_line
    assert "codex" in said_line
    assert not (repo / ".skillci").exists()  # nothing decided, nothing written
    assert git(repo, "branch", "--list", "skillci/*") == ""


def test_an_agent_that_is_not_installed_is_exit_4_with_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "none"))
    repo = make_repo(tmp_path / "r", "{model_family: sim, agent_harness: x, agent: codex}")
    code, err = propose(repo, capsys, "--json")
    assert code == 4, err
    assert "skillci agents install codex" in " ".join(err.split())
    assert not (repo / ".skillci").exists()


def test_builtin_keeps_the_catalogue_question_and_says_so_in_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The skill targets Codex, but ``--agent builtin`` is the catalogue stand-in: no agent
    is needed (none is installed under this test's empty agents dir) and the saved search
    says who decided."""
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "none"))
    repo = make_repo(tmp_path / "r", "{model_family: sim, agent_harness: x, agent: codex}")
    code, out = propose(repo, capsys, "--agent", "builtin", "--dry-run", "--json")
    assert code == 0, out
    found = out["search"]
    assert found["schema_version"] == 2
    assert (found["decided_by"], found["agent"], found["agent_version"]) == (
        "catalogue",
        None,
        None,
    )
    assert found["model"] == "sim/student"
    # the human output is today's: no line naming an agent
    code, text = propose(repo, capsys, "--agent", "builtin", "--dry-run")
    assert code == 0, text
    assert text.startswith("iteration 0: train ")
    assert "decided in" not in text
    store = RepoContext.open(repo).store
    [row, *_] = store.query(suite="triggers")
    assert store.get(row.run_id).runtime.harness != "codex"


def relevance_model(requests: list[str]) -> Callable[[dict[str, Any]], Any]:
    """Loads repo-debugger for a should-trigger query only when the description the agent
    listed ends in ``Use when the request mentions: …`` naming a word of the query; any
    other query gets prose (no load). ``requests`` collects each planned query's text."""

    def model(body: dict[str, Any]) -> Any:
        text = json.dumps(body.get("messages") or [])
        for query, should in QUERIES.values():
            if json.dumps(query)[1:-1] not in text:
                continue
            requests.append(text)
            listed = {w.strip() for m in MENTIONS.findall(text) for w in m.split(",")}
            load = should and bool(listed & set(words(query)))
            action: TriggerAction = ("skill", "repo-debugger") if load else ("say", "On it.")
            return trigger_model({query: action})(body)
        return "No plan for this conversation."

    return model


@pytest.mark.agents  # 8 decisions (2 steps x 4 queries): codex 10-14 s measured
@pytest.mark.parametrize(
    "agent",
    ["codex", pytest.param("claude-code", marks=pytest.mark.slow)],  # 21-24 s measured
)
def test_each_candidate_is_decided_by_what_the_agent_loaded(
    agent: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    version = services.AGENT_VERSIONS[agent]
    pin = f"{{model_family: sim, agent_harness: x, agent: {agent}, agent_version: '{version}'}}"
    repo = make_repo(tmp_path / "r", pin)  # no --agent: the target runtime names the agent
    seen: list[str] = []
    with FakeOpenAI([relevance_model(seen)]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        code, out = propose(repo, capsys, "--model", "scripted", "--json")
    assert code == 0, out
    found = out["search"]
    assert (found["decided_by"], found["agent"], found["agent_version"]) == (
        "agent",
        agent,
        version,
    )
    steps = found["steps"]
    assert [s["held_out"]["queries_held"] for s in steps] == [1, 2]
    assert [s["train"]["queries_held"] for s in steps] == [1, 2]
    assert found["best"] == 1 and out["action"] == "opened"
    kept = steps[1]["description"]
    assert kept.startswith(WEAK + " Use when the request mentions: ")
    # the candidate was listed by the agent itself: its text is in what the model was sent
    assert any(kept in t for t in seen) and "request mentions" not in seen[0]
    after = git(repo, "show", f"{out['branch']}:skills/repo-debugger/SKILL.md")
    assert json.dumps(kept) in after
    # eight decisions, each a run record of the agent with that step's skill installed
    store = RepoContext.open(repo).store
    recs = [store.get(r.run_id) for r in store.query(suite="triggers")]
    assert len(recs) == 8
    assert {(r.runtime.harness, r.runtime.harness_version) for r in recs} == {(agent, version)}
    assert len({r.runtime.skill.content_hash for r in recs if r.runtime.skill}) == 2
    loaded = sorted(
        r.metadata["trigger"]["query_id"] for r in recs if r.metadata["trigger"]["chosen"]
    )
    assert loaded == ["fix-ci", "pytest-fail"]  # only with the candidate, only should-trigger
    body = RepoContext.open(repo).forge.get_pr(out["pr"]).body
    assert f"with `scripted` in `{agent}@{version}` (its own skill loads decided)" in body
    saved = store.get_blob_json("description-search", out["patch_id"])
    assert (saved["schema_version"], saved["decided_by"], saved["agent"]) == (2, "agent", agent)


@pytest.mark.agents  # 1.5-2 s measured
def test_a_model_route_that_fails_is_exit_4_with_no_branch_or_search_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "r")
    with FakeOpenAI(["never used"], status=401) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        argv = ["--agent", "codex", "--agent-version", services.AGENT_VERSIONS["codex"]]
        code, err = propose(repo, capsys, *argv, "--model", "scripted", "--json")
    assert code == 4, err
    said = " ".join(err.split())
    assert "could not decide trigger query" in said and "the model route failed" in said
    assert git(repo, "branch", "--list", "skillci/*") == ""
    store = RepoContext.open(repo).store
    assert store.list_blobs("description-search") == []
    [row] = store.query(suite="triggers")
    assert store.get(row.run_id).evaluation.state == "infra_error"
