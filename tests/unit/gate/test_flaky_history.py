"""Flaky tasks from history (skillci.gate.flaky; docs/design/247-flaky-from-history.md)."""

from __future__ import annotations

from skillci.gate.flaky import flaky_from_history
from skillci.gate.metrics import compute_metrics
from skillci.gate.verdict import uncounted
from skillci.skill.models import QuarantinedTask, ReleaseGate
from skillci.trace.models import EvalState, ModelInfo, RunRecord, RuntimeInfo, SkillRef
from tests.builders import run_record
from tests.unit.gate.test_power import _decide, outcomes

SKILL, TASK = "a" * 64, "t" * 64


def rec(
    run_id: str,
    passed: bool,
    *,
    task: str = "steady",
    skill: str = SKILL,
    model: str = "sim/student",
    task_hash: str | None = TASK,
    state: EvalState | None = None,
    harness: tuple[str, str | None] = ("skillci-agent", None),
) -> RunRecord:
    return run_record(
        run_id=run_id,
        task_id=task,
        passed=passed,
        state=state,
        model=ModelInfo(route=model),
        runtime=RuntimeInfo(
            harness=harness[0],
            harness_version=harness[1],
            skill=SkillRef(name="s", version="1.0.0", content_hash=skill),
            task_hash=task_hash,
        ),
    )


def find(records: list[RunRecord], current: tuple[str, ...] = ()) -> dict[str, object]:
    return dict(
        flaky_from_history(
            records,
            skill_hash=SKILL,
            model="sim/student",
            task_hashes={"steady": TASK, "other": TASK},
            current=current,
        )
    )


def test_a_verdict_flip_over_the_same_skill_model_and_task_is_flaky_with_evidence() -> None:
    found = flaky_from_history(
        [rec("r1", True), rec("r2", False), rec("r3", True)],
        skill_hash=SKILL,
        model="sim/student",
        task_hashes={"steady": TASK},
    )
    h = found["steady"]
    assert (h.passed, h.failed, h.earlier) == (2, 1, 3) and set(h.runs) == {"r1", "r2", "r3"}
    assert "2 pass / 1 fail over 3 runs (3 earlier)" in h.describe()


def test_only_the_same_key_counts() -> None:
    assert find([rec("r1", True), rec("r2", True)]) == {}  # no flip
    assert find([rec("r1", True), rec("r2", False, skill="b" * 64)]) == {}  # other skill
    assert find([rec("r1", True), rec("r2", False, model="sim/student-noisy")]) == {}
    assert find([rec("r1", True), rec("r2", False, task_hash="u" * 64)]) == {}  # task edited
    assert find([rec("r1", True), rec("r2", False, task_hash=None)]) == {}  # hash unknown
    assert find([rec("r1", True), rec("r2", False, task="other")]) == {}  # other task
    errored = rec("r2", False, state=EvalState.infra_error)
    assert find([rec("r1", True), errored]) == {}  # an error is no verdict


def test_runs_in_another_agent_or_agent_version_are_another_student() -> None:
    claude = ("claude-code", "2.0.1")
    runs = [rec("old", True, harness=claude), rec("now", False, harness=claude)]
    found = flaky_from_history(
        [*runs, rec("builtin", True), rec("older-claude", True, harness=("claude-code", "1.9"))],
        skill_hash=SKILL,
        model="sim/student",
        task_hashes={"steady": TASK},
        current=("now",),
        harnesses={claude},
    )
    h = found["steady"]
    assert (h.passed, h.failed) == (1, 1) and set(h.runs) == {"old", "now"}
    assert h.harness == "claude-code 2.0.1" and "in claude-code 2.0.1" in h.describe()
    # only the builtin loop and an older Claude Code passed before: no flip in this agent
    only_others = [rec("builtin", True), rec("now", False, harness=claude)]
    assert (
        flaky_from_history(
            only_others,
            skill_hash=SKILL,
            model="sim/student",
            task_hashes={"steady": TASK},
            current=("now",),
            harnesses={claude},
        )
        == {}
    )
    # without the filter (harnesses=None) they would have counted: the filter is what holds
    assert "steady" in flaky_from_history(
        only_others,
        skill_hash=SKILL,
        model="sim/student",
        task_hashes={"steady": TASK},
        current=("now",),
    )


def test_disagreement_among_the_current_runs_alone_is_the_repeat_rule_not_history() -> None:
    runs = [rec("now1", True), rec("now2", False)]
    assert find(runs, current=("now1", "now2")) == {}
    h = find([*runs, rec("old", True)], current=("now1", "now2"))["steady"]
    assert h.earlier == 1  # type: ignore[attr-defined]
    # an earlier pass and a failing run now: a flip across runs
    assert "steady" in find([rec("old", True), rec("now", False)], current=("now",))


def test_a_task_flaky_from_history_is_handled_by_the_flaky_rule() -> None:
    # repeat 1: nothing can be flaky now; the store remembers "steady" failing once
    table = {"steady": ([True], [False]), "fixed": ([False], [True])}
    history = flaky_from_history(
        [rec("old1", True), rec("old2", False)],
        skill_hash=SKILL,
        model="sim/student",
        task_hashes={"steady": TASK},
    )
    verdict, checks = _decide(ReleaseGate(), table, {})
    assert verdict == "reject"  # without history: a regression
    verdict, checks = _decide(ReleaseGate(), table, history)
    reg = next(c for c in checks if c.name == "regression_rate")
    # one repeat each: 1/1 -> 0/1 is within a task known to flip (Fisher p = 0.5)
    assert verdict == "inconclusive" and reg.status == "pass"  # 1 repair shows nothing
    assert reg.detail == (
        "losses within repeat noise (Fisher p >= alpha): steady; flaky from history: steady"
    )
    skip = uncounted(ReleaseGate(), compute_metrics(outcomes(table), n_boot=0).tasks, history)
    assert skip.flaky == ["steady"] and "1 pass / 1 fail" in skip.history["steady"]
    # the same documented switches apply: count restores it, quarantine names it instead
    assert _decide(ReleaseGate(flaky_tasks="count"), table, history)[0] == "reject"
    q = ReleaseGate(quarantine=[QuarantinedTask(task="steady", reason="needs network")])
    reg = next(c for c in _decide(q, table, history)[1] if c.name == "regression_rate")
    assert reg.detail == "nothing passes on base, so nothing can regress; quarantined: steady"
