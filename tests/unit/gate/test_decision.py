"""The gate's pure decision helpers (skillci.gate.decision)."""

from __future__ import annotations

from skillci.forge.base import STICKY_MARKER as FORGE_MARKER
from skillci.gate.decision import majority, merge_impact, suite_outcomes, worst
from skillci.gate.impact import select_tasks
from skillci.gate.outcomes import comparable, unsupported_warnings
from skillci.present.report import STICKY_MARKER as REPORT_MARKER
from skillci.trace.models import EvalState, Evaluation, RunRecord
from tests.unit.trace.helpers import make_record


def test_the_report_marker_is_the_forges_sticky_marker() -> None:
    assert REPORT_MARKER == FORGE_MARKER


def test_worst_guard_verdict_wins_and_unknown_counts_as_reject() -> None:
    assert worst("pass", "needs-approval") == "needs-approval"
    assert worst("reject", "pass") == "reject"
    assert worst("pass", "pass") == "pass"
    assert worst("pass", "bogus") == "bogus"


def test_majority_needs_more_than_half() -> None:
    ok, bad = make_record(passed=True), make_record(passed=False)
    assert majority([ok, ok, bad])
    assert not majority([ok, bad])
    assert not majority([])


def test_merge_impact_adds_suites() -> None:
    a = select_tasks({"SKILL.md"}, {"t1": frozenset({"SKILL.md"})}, tasks=["t1"])
    b = select_tasks({"SKILL.md"}, {"t2": frozenset({"other.md"})}, tasks=["t2"])
    assert merge_impact(None, a) is a
    m = merge_impact(a, b)
    assert (m.total, m.selected) == (2, a.selected + b.selected)
    assert sorted(m.rerun + m.reuse) == ["t1", "t2"]
    assert [t.task_id for t in m.tasks] == ["t1", "t2"]


def test_suite_outcomes_label_sides_and_reused_base_trials_as_head() -> None:
    b = make_record("run-b", passed=False)
    h = make_record("run-h", passed=True)
    t = make_record("run-t", passed=True)
    out = suite_outcomes([b], [h], {"teacher": [t]}, [b])
    assert [o.side for o in out] == ["base", "head", "teacher", "head"]
    assert [o.passed for o in out] == [False, True, True, False]


def _unsupported(run_id: str, task_id: str) -> RunRecord:
    line = (
        "environment unsupported by the local runner: working directory /root (the local "
        "runner gives /app) — run it with --sandbox docker"
    )
    return make_record(
        run_id,
        task_id=task_id,
        evaluation=Evaluation(state=EvalState.environment_unsupported, verifier_output=line),
    )


def test_environment_unsupported_trials_are_left_out_of_the_metrics_with_a_warning() -> None:
    b = make_record("run-b", passed=True)
    h = make_record("run-h", passed=True)
    ub, uh = _unsupported("run-ub", "needs-root"), _unsupported("run-uh", "needs-root")
    out = suite_outcomes([b, ub], [h, uh], {"teacher": [ub]}, [ub])
    assert [(o.side, o.task_id) for o in out] == [
        ("base", "fix-cache-expiry"),
        ("head", "fix-cache-expiry"),
    ]
    assert comparable([b, ub, h]) == [b, h]
    warnings = unsupported_warnings([b, ub, uh, h])
    assert warnings == [
        "needs-root: 2 trial(s) excluded from the metrics, environment unsupported by the "
        "local runner: working directory /root (the local runner gives /app); "
        "run them with --sandbox docker"
    ]
    assert unsupported_warnings([b, h]) == []
