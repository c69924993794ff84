"""Per-grader changes between base and head (skillci.gate.graded; docs/design/366)."""

from __future__ import annotations

from skillci.gate.graded import grader_changes
from skillci.graders.combine import combine
from skillci.graders.models import GraderResult, RewardRule
from skillci.trace.models import EvalState, Evaluation, RunRecord
from tests.builders import run_record


def graded(run_id: str, task: str, **passed: bool) -> RunRecord:
    """A trial of ``task`` whose graders (id -> passed) made its reward (rule weighted)."""
    results = [
        GraderResult(id=g.replace("_", "-"), kind="rubric" if g == "plan" else "regex",
                     passed=p, score=float(p))
        for g, p in passed.items()
    ]  # fmt: skip
    report = combine(RewardRule(rule="weighted"), results)
    ev = Evaluation(
        state=EvalState.passed if report.passed else EvalState.failed,
        passed=report.passed,
        reward=report.reward,
        details={"graders": report.model_dump(mode="json")},
    )
    return run_record(run_id=run_id, task_id=task, evaluation=ev)


def test_only_graders_whose_pass_share_moved_are_listed() -> None:
    base = [
        graded("b1", "t", header=False, plan=False, saved=True),
        graded("b2", "t", header=False, plan=True, saved=True),
        graded("b3", "u", header=True, plan=True, saved=True),
    ]
    head = [
        graded("h1", "t", header=True, plan=False, saved=True),
        graded("h2", "t", header=True, plan=True, saved=True),
        graded("h3", "u", header=True, plan=False, saved=True),
    ]
    changes = grader_changes(base, head)
    got = [
        (c.task_id, c.grader, c.kind, c.base_passed, c.base_trials, c.head_passed) for c in changes
    ]
    assert got == [("t", "header", "regex", 0, 2, 2), ("u", "plan", "rubric", 1, 1, 0)]
    assert changes[0].delta == 1.0 and changes[1].delta == -1.0


def test_unmeasured_and_verifier_only_trials_are_not_compared() -> None:
    ok = graded("e", "t", header=True)  # its graders ran, then the measurement failed
    error = ok.model_copy(
        update={"evaluation": ok.evaluation.model_copy(update={"state": EvalState.infra_error})}
    )
    plain = run_record(run_id="p", task_id="t", passed=True)  # no graders: test.sh alone
    base = [graded("b", "t", header=False), error, plain]
    head = [graded("h", "t", header=False), plain]
    assert grader_changes(base, head) == []
    # a grader seen on one side only (the task changed) is not a change of the skill
    assert grader_changes([graded("b", "t", header=False)], [graded("h", "t", saved=True)]) == []
