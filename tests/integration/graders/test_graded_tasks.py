"""Tasks graded by assertions and a rubric, end to end: real trials (workspace, bubblewrap
when present, the verifier's sandbox for command-exit), the sim judge through the provider
client, run records in the trace store — for the real skill obra/writing-plans, whose
output is a plan document."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillci.errors import JudgeUnfit
from skillci.flows.evalrun import EvalRequest, run_eval
from skillci.skill.porting import import_plain
from skillci.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "graded-tasks"
WRITING_PLANS = ROOT / "tests" / "fixtures" / "real-skills" / "obra" / "writing-plans"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "repo")
    return tmp_path / "repo"


def _run(repo: Path, **kw: object) -> tuple[object, TraceStore]:
    req = EvalRequest(root=repo, home=repo / ".skillci", **kw)  # type: ignore[arg-type]
    return run_eval(req), TraceStore(repo / ".skillci")


def _graders(store: TraceStore, run_id: str) -> dict[str, dict[str, object]]:
    rec = store.get(run_id)
    return {r["id"]: r for r in rec.evaluation.details["graders"]["results"]}


def test_the_reference_plans_pass_and_doing_nothing_fails_per_grader(repo: Path) -> None:
    res, store = _run(repo, suite="plans", agent="oracle")
    assert [t.state for t in res.trials] == ["passed", "passed"]  # type: ignore[attr-defined]
    by_task = {t.task_id: t for t in res.trials}  # type: ignore[attr-defined]
    verbose = by_task["plan-verbose-flag"]
    g = _graders(store, verbose.run_id)
    # the oracle's final answer is "solve.sh exited 0", not the plan's path: that assertion
    # fails, and the threshold rule (0.8) passes the trial on the rest (7 of 8 weight)
    assert {k for k, v in g.items() if not v["passed"]} == {"answer-names-plan"}
    assert "solve.sh exited 0" not in g["answer-names-plan"]["detail"]
    assert g["code-untouched"]["kind"] == "command-exit"
    assert [c["passed"] for c in g["plan-quality"]["criteria"]] == [True, True, True]
    rec = store.get(verbose.run_id)
    assert rec.evaluation.reward == 0.875 and rec.evaluation.reward_source == "tests/graders.toml"
    judge = rec.evaluation.details["graders"]["judge"]
    assert judge["route"] == "sim/judge" and judge["model_calls"] == 1
    assert judge["input_tokens"] > 0

    nothing, store = _run(repo, suite="plans", agent="noop")
    assert [t.state for t in nothing.trials] == ["failed", "failed"]  # type: ignore[attr-defined]
    for t in nothing.trials:  # type: ignore[attr-defined]
        g = _graders(store, t.run_id)
        # the plan is missing: every file check fails, the rubric is not judged at all
        assert not g["plan-header"]["passed"]
        assert g["plan-quality"]["criteria"] == [] and "missing" in g["plan-quality"]["detail"]
        rec = store.get(t.run_id)
        assert rec.evaluation.details["graders"]["judge"]["model_calls"] == 0
    g = _graders(store, next(t for t in nothing.trials if t.task_id == "plan-verbose-flag").run_id)  # type: ignore[attr-defined]
    assert g["code-untouched"]["passed"]  # nothing changed cli.py: that one holds
    again, _ = _run(repo, suite="plans", agent="oracle")
    assert all(t.cached for t in again.trials)  # type: ignore[attr-defined]


def test_the_sim_student_on_a_plan_task_is_an_error_not_a_graded_failure(repo: Path) -> None:
    """sim/student models only the bundled repair tasks (design 302): on a plan-writing task
    it ends the trial as an error, before the graders — no failed grade is built on it."""
    files = {
        p.relative_to(WRITING_PLANS).as_posix(): p.read_bytes()
        for p in WRITING_PLANS.rglob("*")
        if p.is_file()
    }
    import_plain(files, source=str(WRITING_PLANS)).to_dir(repo / "skills" / "writing-plans")
    res, store = _run(
        repo,
        tasks=["plan-verbose-flag"],
        skill=repo / "skills" / "writing-plans",
        model="sim/student",
    )
    (trial,) = res.trials  # type: ignore[attr-defined]
    assert trial.state == "infra_error"
    assert "models only the bundled repair tasks" in (trial.error or "")
    rec = store.get(trial.run_id)
    assert rec.runtime.skill is not None and rec.runtime.skill.name == "writing-plans"
    assert "graders" not in rec.evaluation.details and rec.evaluation.reward is None


def test_a_suite_refuses_a_judge_below_its_minimum_agreement(repo: Path) -> None:
    with pytest.raises(JudgeUnfit) as info:
        _run(repo, suite="plans-strict", agent="oracle")
    msg = info.value.message
    assert "sim/judge is unfit" in msg and "kappa >= 0.6" in msg and "12 labelled" in msg
    assert not (repo / ".skillci" / "trials").exists()  # refused before any trial ran
