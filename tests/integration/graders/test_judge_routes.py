"""The judge on a real OpenAI-compatible route (a loopback server): what it is sent (blinded,
both orders), position bias, an erroring judge making the trial an infrastructure error,
and skill-creator's own evals.json imported and run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from skillci.flows.evalrun import EvalRequest, run_eval
from skillci.flows.graders import export_evals, import_evals
from skillci.graders.models import Rubric
from skillci.providers.routes import ModelRoute
from skillci.runners.base import JudgeSpec
from skillci.runners.grading import ModelJudge
from skillci.trace.store import TraceStore
from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "graded-tasks"
SCHEMAS_MD = ROOT / "tests/fixtures/real-skills/anthropics/skill-creator/references/schemas.md"
RUBRIC = Rubric(id="q", criteria=["The plan states its goal", "The plan has numbered steps"])
TASK = "Write a plan for a --verbose flag."


def _judge(server: FakeOpenAI) -> JudgeSpec:
    route = ModelRoute(
        model="openai/fake-judge", api_base=server.base_url, api_key_env=FAKE_KEY_ENV, timeout=10
    )
    return JudgeSpec(route_name="fake/judge", route=route)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, "not-a-secret")


def test_a_judge_preferring_position_a_wins_nothing(tmp_path: Path) -> None:
    with FakeOpenAI(['{"winner": "A", "reason": "first is best"}']) as server:
        judge = ModelJudge(_judge(server), tmp_path)
        out = judge.compare(TASK, RUBRIC, "Goal: x\n1. step", "nothing")
    assert (out.winner, out.consistent) == ("tie", False)
    assert (out.x_first, out.y_first) == ("A", "A")
    first, second = (r["messages"][-1]["content"] for r in server.requests)
    assert first.index(json.dumps("Goal: x\n1. step")) < first.index(json.dumps("nothing"))
    assert second.index(json.dumps("nothing")) < second.index(json.dumps("Goal: x\n1. step"))
    assert judge.usage.model_calls == 2 and judge.usage.input_tokens == 200


def test_a_consistent_judge_wins_and_its_calls_are_cached(tmp_path: Path) -> None:
    answers = ['{"winner": "A"}', '{"winner": "B"}']
    with FakeOpenAI(answers) as server:
        out = ModelJudge(_judge(server), tmp_path).compare(TASK, RUBRIC, "good", "bad")
        again = ModelJudge(_judge(server), tmp_path)
        assert again.compare(TASK, RUBRIC, "good", "bad").winner == "x"
    assert (out.winner, out.consistent) == ("x", True)
    assert len(server.requests) == 2  # the second judge was served from the cache
    assert again.usage.cached_calls == 2 and again.usage.input_tokens == 0


def _run(repo: Path, **kw: object) -> tuple[object, TraceStore]:
    req = EvalRequest(root=repo, home=repo / ".skillci", **kw)  # type: ignore[arg-type]
    return run_eval(req), TraceStore(repo / ".skillci")


@pytest.mark.parametrize("answer", ["I like it.", '{"verdicts": []}'])
def test_an_erroring_judge_makes_an_infra_error_trial_not_a_failure(
    tmp_path: Path, answer: str
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    with FakeOpenAI([answer]) as server:
        req = EvalRequest(
            root=repo, home=repo / ".skillci", tasks=["plan-json-export"], agent="oracle"
        )
        from skillci.flows.evalrun import plan_eval
        from skillci.runners.scheduler import Scheduler

        specs = [s.model_copy(update={"judge": _judge(server)}) for s in plan_eval(req)]
        (trial,) = Scheduler(parallel=1, store=TraceStore(repo / ".skillci")).run(specs).trials
        sent = server.requests[0]["messages"][-1]["content"]
    assert trial.state == "infra_error" and not trial.passed
    rec = TraceStore(repo / ".skillci").get(trial.run_id or "")
    assert rec.evaluation.failure_class == "judge_error"
    assert "fake/judge" in rec.evaluation.verifier_output
    assert rec.evaluation.details["judge"]["model_calls"] == 1
    # blinded: the judge was sent the task, the rubric and the plan, nothing about who wrote it
    assert "JSON Export Implementation Plan" in sent
    for marker in ("oracle", "skill", "run-", trial.key[:12], "base", "head"):
        assert marker not in sent.replace(json.dumps(sent), "")


def _schemas_md_evals(path: Path) -> Path:
    """skill-creator's own evals.json example (references/schemas.md), as its skill keeps it."""
    text = SCHEMAS_MD.read_text()
    block = re.search(r"## evals\.json.*?```json\n(.*?)```", text, re.DOTALL)
    assert block is not None
    skill = path / "example-skill"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "evals" / "evals.json").write_text(block.group(1))
    (skill / "evals" / "files" / "sample1.pdf").write_bytes(b"%PDF-1.4 sample\n")
    return skill / "evals" / "evals.json"


def test_skill_creators_evals_json_is_imported_run_and_exported(tmp_path: Path) -> None:
    evals_json = _schemas_md_evals(tmp_path)
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    res = import_evals(evals_json, repo, suite="skill-creator")
    (task_dir,) = map(Path, res.tasks)
    assert task_dir.name == "example-skill-eval-1"
    assert (task_dir / "environment/evals/files/sample1.pdf").read_bytes().startswith(b"%PDF")
    assert "User's example prompt" in (task_dir / "instruction.md").read_text()

    result, store = _run(repo, suite="skill-creator", agent="noop")
    (trial,) = result.trials  # type: ignore[attr-defined]
    assert trial.state == "failed"
    report = store.get(trial.run_id).evaluation.details["graders"]
    (rubric,) = report["results"]
    assert [c["criterion"] for c in rubric["criteria"]] == [
        "The output includes X",
        "The skill used script Y",
    ]
    assert report["judge"]["route"] == "sim/judge" and report["judge"]["model_calls"] == 1

    data, lost = export_evals(repo)
    original = json.loads(evals_json.read_text())
    assert data == original and lost == []
