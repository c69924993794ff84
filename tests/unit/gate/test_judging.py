"""The ``judge_fit`` check (docs/design/364): the rubric judge's calibration as a gate check,
and an unfit judge as an unmeasured gate, never a reject."""

from __future__ import annotations

from skillci.gate.judging import GateJudge, SuiteJudge, judge_finding
from skillci.gate.outcomes import Comparability
from skillci.gate.verdict import CHECKS, Complexity, decide
from skillci.graders.calibrate import agreement, judge_fit
from skillci.skill.models import ReleaseGate

LABELS = [True] * 6 + [False] * 6


def _suite(name: str, verdicts: list[bool] | None, min_kappa: float | None = 0.6) -> SuiteJudge:
    if verdicts is None:
        return SuiteJudge(suite=name, rubric_tasks=["t1", "t2"])
    agree = agreement(LABELS, verdicts)
    assert min_kappa is not None
    fit = judge_fit("r/judge", agree, min_kappa)
    return SuiteJudge(
        suite=name,
        rubric_tasks=["t1", "t2"],
        min_kappa=min_kappa,
        agreement=agree,
        fit=fit.fit,
        reason=fit.reason,
        left_out=[] if fit.fit else ["t1", "t2"],
    )


GOOD = LABELS  # kappa 1
ALWAYS = [True] * 12  # says pass to everything: kappa 0, no agreement beyond chance
COIN = [True, False] * 6  # kappa 0


def test_no_rubric_task_is_not_applicable() -> None:
    assert judge_finding(None).status == "not_applicable"
    assert judge_finding(GateJudge(route="sim/judge")).status == "not_applicable"


def test_rubric_tasks_without_a_minimum_are_uncalibrated_not_a_pass() -> None:
    f = judge_finding(GateJudge(route="sim/judge", suites=[_suite("validation", None)]))
    assert f.status == "not_applicable"
    assert f.value == "sim/judge uncalibrated (a lexical simulator, not evidence)"
    assert "declares judge: {examples, min_kappa}" in f.detail


def test_a_fit_judge_passes_with_its_figures() -> None:
    f = judge_finding(GateJudge(route="r/judge", suites=[_suite("validation", GOOD)]))
    assert f.status == "pass"
    assert f.value == "r/judge: validation kappa 1.0 (95% CI 1.0..1.0), n 12"


def test_an_unfit_judge_is_not_measured_with_the_figures_and_the_remedy() -> None:
    judge = GateJudge(
        route="r/judge",
        suites=[_suite("validation", GOOD), _suite("regression", COIN), _suite("ood", None)],
    )
    f = judge_finding(judge)
    assert f.status == "not_measured"
    assert f.value.startswith("r/judge: regression kappa 0.0 (95% CI ")
    assert f.value.endswith("n 12 < 0.6")
    assert "judge r/judge is unfit" in f.detail
    assert "skillci judge calibrate --suite regression --judge ROUTE" in f.detail
    assert "Rubric tasks not run (regression: t1, t2)" in f.detail
    assert "ood declare(s) no judge.min_kappa" in f.detail
    assert judge.left_out == {"regression": ["t1", "t2"]}
    always = judge_finding(GateJudge(route="r/judge", suites=[_suite("v", ALWAYS)]))
    assert always.status == "not_measured" and "v kappa 0.0" in always.value
    same = agreement([True] * 12, [True] * 12)
    fit = judge_fit("r/judge", same, 0.6)
    undefined = SuiteJudge(
        suite="v", rubric_tasks=["t"], min_kappa=0.6, agreement=same, fit=fit.fit, reason=fit.reason
    )
    f = judge_finding(GateJudge(route="r/judge", suites=[undefined]))
    assert f.status == "not_measured" and "v kappa undefined" in f.value


def test_an_unfit_judge_makes_the_verdict_inconclusive_never_reject() -> None:
    cx = Complexity(
        bootstrap_tokens=1,
        total_tokens=1,
        avg_loaded_tokens=None,
        rules=0,
        conflicting_rules=0,
        never_hit_rules=[],
        lint_errors=0,
    )
    kw = {
        "gate": ReleaseGate(require_security_suite=False),
        "suites": [],
        "comparability": Comparability(comparable=True),
        "base": cx,
        "head": cx,
        "guard_verdict": "pass",
        "same_instance": None,
    }
    unfit = GateJudge(route="r/judge", suites=[_suite("validation", COIN)])
    verdict, checks = decide(**kw, judge=unfit)  # type: ignore[arg-type]
    by_name = {c.name: c for c in checks}
    assert by_name["judge_fit"].status == "not_measured" and not by_name["judge_fit"].passed
    assert verdict == "inconclusive"
    _, plain = decide(**kw)  # type: ignore[arg-type]
    assert {c.name: c for c in plain}["judge_fit"].status == "not_applicable"
    # registered as data, after the measurement check
    names = [n for n, _ in CHECKS]
    assert names.index("judge_fit") == names.index("measured") + 1
