"""Power, minimum detectable effects, task-clustered errors, flaky tasks (docs/design/223-224)."""

from __future__ import annotations

import math
import random

import pytest

from skillci.gate.decision import suite_result, suites_power
from skillci.gate.flaky import FlakyHistory
from skillci.gate.metrics import TrialOutcome, compute_metrics
from skillci.gate.outcomes import Comparability
from skillci.gate.power import (
    majority_fail_prob,
    mde_improvement,
    mde_regression,
    noise_rejection,
    passing_for_regression,
    plan,
    suite_power,
    tasks_for_gain,
)
from skillci.gate.stats import clustered_se
from skillci.gate.verdict import Complexity, SuiteResult, decide
from skillci.present.report import render_markdown
from skillci.skill.models import QuarantinedTask, ReleaseGate


def outcomes(table: dict[str, tuple[list[bool], list[bool]]]) -> list[TrialOutcome]:
    out = []
    for task, (base, head) in table.items():
        for side, runs in (("base", base), ("head", head)):
            for r, ok in enumerate(runs):
                out.append(
                    TrialOutcome(
                        task_id=task,
                        side=side,  # type: ignore[arg-type]
                        repeat=r,
                        reward=float(ok),
                        passed=ok,
                    )
                )
    return out


def test_clustered_se_is_the_sd_of_task_scores_over_root_tasks() -> None:
    scores = [0.0, 1.0, 1.0, 0.5]
    mean = sum(scores) / 4
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / 3)
    assert clustered_se(scores) == pytest.approx(sd / 2)
    assert clustered_se([1.0]) is None


def test_pass_rate_interval_is_task_clustered_and_never_narrower_than_wilson() -> None:
    # 6 tasks x 3 repeats, tasks either always pass or always fail: repeats add nothing,
    # the clustered interval is much wider than a Wilson interval over 18 "trials"
    same = {f"t{i}": ([i < 3] * 3, [i < 3] * 3) for i in range(6)}
    pr = compute_metrics(outcomes(same), n_boot=0).sides["base"].pass_rate
    assert pr.cluster_se == pytest.approx(clustered_se([1, 1, 1, 0, 0, 0]))
    assert pr.cluster_ci is not None
    assert pr.cluster_ci.low < pr.ci.low and pr.cluster_ci.high > pr.ci.high
    # every task identical: zero spread, the interval falls back to Wilson's
    flat = {f"t{i}": ([True] * 3, [True] * 3) for i in range(6)}
    pr = compute_metrics(outcomes(flat), n_boot=0).sides["base"].pass_rate
    assert pr.cluster_se == 0.0
    assert pr.cluster_ci is not None
    assert (pr.cluster_ci.low, pr.cluster_ci.high) == (pr.ci.low, pr.ci.high)


def test_mde_regression_matches_the_binomial_and_a_simulation() -> None:
    # 5 passing tasks, 1% allowance: one regression rejects; P(>=1 of 5) = 0.8 at 1-0.2^(1/5)
    assert mde_regression(5, 0.01) == pytest.approx(1 - 0.2 ** (1 / 5), abs=1e-9)
    rho = mde_regression(40, 0.1)
    assert rho is not None
    rng = random.Random(3)
    caught = sum(sum(rng.random() < rho for _ in range(40)) > 4 for _ in range(4000)) / 4000
    assert caught == pytest.approx(0.8, abs=0.025)
    assert mde_regression(0, 0.01) is None
    assert mde_regression(3, 1.0) is None  # the check never fires


def test_mde_improvement_shrinks_with_tasks_and_inverts_with_planning() -> None:
    var = 2 * 0.6 * 0.4 / 3
    assert mde_improvement(1, var) is None
    small, big = mde_improvement(6, var), mde_improvement(50, var)
    assert small is not None and big is not None and big < small
    n = tasks_for_gain(0.1, 0.6, 3)
    at_n = mde_improvement(n, var)
    before = mde_improvement(n - 1, var)
    assert at_n is not None and before is not None and at_n <= 0.1 < before


def test_noise_rejection_is_a_poisson_binomial_tail() -> None:
    assert noise_rejection([0.2], 0.0) == pytest.approx(0.2)
    assert noise_rejection([0.2, 0.3], 0.0) == pytest.approx(1 - 0.8 * 0.7)
    assert noise_rejection([0.2, 0.3], 0.5) == pytest.approx(0.2 * 0.3)
    assert noise_rejection([], 0.0) is None
    assert majority_fail_prob(0.9, 1) == pytest.approx(0.1)
    assert majority_fail_prob(0.9, 3) == pytest.approx(0.1**3 + 3 * 0.1**2 * 0.9)


def test_plan_rows_reach_the_power_they_promise() -> None:
    rows = plan(min_gain=0.1, max_regression_rate=0.1, regression_to_catch=0.3, pass_rate=0.6)
    assert [r.repeats for r in rows] == [1, 3, 5]
    assert rows[0].tasks_for_gain > rows[1].tasks_for_gain > rows[2].tasks_for_gain
    n = rows[0].passing_for_regression
    assert n == passing_for_regression(0.3, 0.1)
    assert n is not None and (mde_regression(n, 0.1) or 1) <= 0.3
    assert (mde_regression(n - 1, 0.1) or 1) > 0.3
    noise = [r.noise_rejection for r in rows]
    assert noise[0] is not None and noise[2] is not None and noise[0] > noise[2]


def test_small_suite_report_warns_that_thresholds_are_invisible() -> None:
    table = {f"t{i}": ([True, True, i % 2 == 0], [True, True, True]) for i in range(6)}
    m = compute_metrics(outcomes(table), n_boot=0)
    sp = suite_power("validation", m, min_gain=0.02, max_regression_rate=0.01)
    assert (sp.tasks, sp.repeats, sp.base_passing) == (6, 3, 6)
    assert sp.mde_improvement is not None and sp.mde_improvement > 0.02
    assert any("min_validation_gain 2.0% is below" in w for w in sp.warnings)
    assert any("below the resolution of 6 passing task(s)" in w for w in sp.warnings)
    # a large suite with a loose bar sees what it claims: no warning on that bar
    big = {f"t{i}": ([i % 3 > 0] * 5, [i % 3 > 0] * 5) for i in range(300)}
    sp = suite_power(
        "validation",
        compute_metrics(outcomes(big), n_boot=0),
        min_gain=0.2,
        max_regression_rate=0.2,
    )
    assert sp.warnings == [], sp.warnings


CX = Complexity(
    bootstrap_tokens=100,
    total_tokens=100,
    avg_loaded_tokens=None,
    rules=1,
    conflicting_rules=0,
    never_hit_rules=[],
    lint_errors=0,
)


def _suites(
    gate: ReleaseGate, table: dict[str, tuple[list[bool], list[bool]]]
) -> list[SuiteResult]:
    return [
        suite_result(
            "validation", outcomes(table), n_boot=0, quarantined=[q.task for q in gate.quarantine]
        )
    ]


def _decide(  # type: ignore[no-untyped-def]
    gate: ReleaseGate,
    table: dict[str, tuple[list[bool], list[bool]]],
    flaky_history: dict[str, FlakyHistory] | None = None,
):
    (suite,) = _suites(gate, table)
    return decide(
        gate=gate.model_copy(update={"require_security_suite": False}),
        suites=[suite],
        comparability=Comparability(comparable=True),
        base=CX,
        head=CX,
        guard_verdict="pass",
        same_instance=None,
        flaky_history=flaky_history,
    )


def test_a_task_flaky_on_base_is_not_a_regression_unless_the_manifest_says_count() -> None:
    table = {
        "steady": ([True] * 3, [True] * 3),
        "fixed": ([False] * 3, [True] * 3),
        "flaky": ([True, True, False], [False, True, False]),  # 2/3 -> 1/3: noise
    }
    verdict, checks = _decide(ReleaseGate(), table)
    reg = next(c for c in checks if c.name == "regression_rate")
    # the flaky task is tested against its noise (Fisher 2/3 vs 1/3: p = 0.5), not dropped
    assert reg.status == "pass" and reg.value == "0.0% (0/2 base-passing tasks)"
    assert reg.detail == "losses within repeat noise (Fisher p >= alpha): flaky"
    # 3 head wins vs 1 base win in 3 rounds cannot be significant: no accept on this
    assert verdict == "inconclusive"
    verdict, checks = _decide(ReleaseGate(flaky_tasks="count"), table)
    reg = next(c for c in checks if c.name == "regression_rate")
    assert verdict == "reject" and reg.value == "50.0% (1/2 base-passing tasks)"
    assert reg.detail == "flaky"


def test_quarantined_tasks_are_not_counted_and_are_named_with_their_reason() -> None:
    table = {
        "steady": ([True] * 3, [True] * 3),
        "broken": ([True] * 3, [False] * 3),
        "fixed": ([False] * 3, [True] * 3),
    }
    assert _decide(ReleaseGate(), table)[0] == "reject"
    gate = ReleaseGate(quarantine=[QuarantinedTask(task="broken", reason="env needs network")])
    verdict, checks = _decide(gate, table)
    reg = next(c for c in checks if c.name == "regression_rate")
    assert reg.status == "pass" and reg.detail == "quarantined: broken"
    ev = next(s for s in _suites(gate, table) if s.suite == "validation").evidence
    assert ev is not None and ev.decision.base_wins == 0  # not in the paired test either
    assert verdict == "inconclusive"  # 3 wins in 3 rounds cannot be significant


def test_the_markdown_report_shows_power_and_warnings() -> None:
    table = {f"t{i}": ([True, True, i % 2 == 0], [True, True, True]) for i in range(6)}
    m = compute_metrics(outcomes(table), n_boot=0)
    from skillci.gate.verdict import GateReport

    suite = SuiteResult(suite="validation", tasks=sorted(table), metrics=m)
    (sp,) = suites_power([suite], ReleaseGate())
    assert sp.base_passing == 3  # the 3 tasks flaky on base are not counted
    verdict, checks = _decide(ReleaseGate(), table)
    report = GateReport(
        gate_id="gate-1",
        skill="s",
        base_ref="a",
        head_ref="b",
        base_sha=None,
        head_sha=None,
        created_at="2026-12-01T00:00:00+00:00",
        student="sim/student",
        repeat=3,
        verdict=verdict,
        reasons=[],
        checks=checks,
        suites=[suite],
        comparability=Comparability(comparable=True),
        base_complexity=CX,
        head_complexity=CX,
        guard_verdict="pass",
        power=[sp],
    )
    md = render_markdown(report)
    assert "### What these suites can see (80% power)" in md
    assert f"| `validation` | 6 x 3 | 3 | {sp.mde_improvement:.1%} |" in md
    assert "95% CI (task-clustered)" in md
    assert "Flaky on base (repeats disagree; " in md
    assert "`t1` 67% of 3, `t3` 67% of 3, `t5` 67% of 3." in md
    assert "- ⚠️ validation: min_validation_gain 2.0% is below" in md
