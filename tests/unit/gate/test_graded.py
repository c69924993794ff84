"""Per-grader changes between base and head (skillci.gate.graded; docs/design/366)."""

from __future__ import annotations

from skillci.gate.graded import EarlierGate, GraderHistory, grader_changes, grader_history
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


def hashed(
    run_id: str, task_hash: str = "v1", route: str = "sim/student", **passed: bool
) -> RunRecord:
    """A graded trial of task ``t`` at task version ``task_hash`` by ``route``."""
    r = graded(run_id, "t", **passed)
    return r.model_copy(
        update={
            "runtime": r.runtime.model_copy(update={"task_hash": task_hash}),
            "model": r.model.model_copy(update={"route": route}),
        }
    )


def gate(n: int, *head: RunRecord, pr: int | None = None) -> EarlierGate:
    return EarlierGate(f"gate-{n}", f"2026-12-0{n}T00:00:00+00:00", pr, head)


def test_history_sums_the_last_gates_of_the_same_task_version() -> None:
    earlier = [
        gate(1, hashed("a1", header=False), pr=3),  # beyond the last 3: not counted
        gate(2, hashed("b1", header=True), hashed("b2", header=True), pr=4),
        gate(3, hashed("c1", header=True), pr=None),
        gate(4, hashed("d1", header=True), hashed("b1", header=True), pr=6),  # b1 again
        gate(5, hashed("x1", "v0", header=True), pr=7),  # another task version
        gate(6, hashed("y1", route="sim/teacher", header=True), pr=8),  # another student
    ]
    head = [hashed("h1", header=False), hashed("h2", header=True)]
    (h,) = grader_history(reversed(earlier), head, limit=3)
    # b1 counts once (in the newest gate holding it); the order of `earlier` does not matter
    assert (h.task_id, h.grader, h.kind, h.task_hash) == ("t", "header", "regex", "v1")
    assert (h.passed, h.trials, h.head_passed, h.head_trials) == (4, 4, 1, 2)
    assert h.gates == ["gate-2", "gate-3", "gate-4"] and h.prs == [4, 6]
    assert h.delta == -0.5


def test_no_history_no_entry_and_an_equal_share_says_nothing() -> None:
    head = [hashed("h1", header=True)]
    assert grader_history([], head) == []
    assert grader_history([gate(1, hashed("a", "v0", header=False))], head) == []
    assert grader_history([gate(1, hashed("a", header=True), pr=2)], head) == []
    # a trial this head reused from the cache is not its own history
    assert grader_history([gate(1, hashed("h1", header=True), pr=2)], head) == []
    # nor is a trial that was not measured
    bad = hashed("e", header=False)
    bad = bad.model_copy(
        update={"evaluation": bad.evaluation.model_copy(update={"state": EvalState.infra_error})}
    )
    assert grader_history([gate(1, bad)], head) == []


def test_the_history_line_is_escaped_and_says_it_is_not_the_verdict() -> None:
    from skillci.gate.verdict import SuiteResult
    from skillci.present.report import _grader_history

    h = GraderHistory(task_id="t`|<b>x</b>", grader="g", kind="*bold* @ann #12", task_hash="v",
                      passed=9, trials=10, gates=["gate-1", "gate-2"], head_passed=4,
                      head_trials=10)  # fmt: skip
    suite = SuiteResult.model_construct(grader_history=[h])
    lines = _grader_history(suite)
    assert "information only, not part of the verdict" in lines[0]
    assert lines[2] == (
        "- `` t`|<b>x</b> `` `g` (\\*bold\\* @&#8203;ann \\#&#8203;12): passed 9/10 over the last "
        "2 gates (`gate-1`, `gate-2`); now 4/10 ▼"
    )
    one = h.model_copy(update={"gates": ["gate-1"], "prs": [5], "head_passed": 10})
    assert _grader_history(SuiteResult.model_construct(grader_history=[one]))[2].endswith(
        "passed 9/10 over the last gate (PR #5); now 10/10 ▲"
    )
