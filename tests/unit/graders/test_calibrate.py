"""Agreement with human labels and the fitness check a gate makes."""

from __future__ import annotations

import pytest

from skillci.graders.calibrate import agreement, judge_fit


def test_perfect_agreement() -> None:
    labels = [True, False] * 10
    a = agreement(labels, labels)
    assert (a.accuracy, a.kappa, a.kappa_low, a.kappa_high) == (1.0, 1.0, 1.0, 1.0)
    assert a.confusion == {"tp": 10, "fp": 0, "fn": 0, "tn": 10}


def test_kappa_against_a_worked_example() -> None:
    # 50 items: both yes 20, both no 15, judge yes/label no 5, judge no/label yes 10
    labels = [True] * 20 + [False] * 15 + [False] * 5 + [True] * 10
    verdicts = [True] * 20 + [False] * 15 + [True] * 5 + [False] * 10
    a = agreement(labels, verdicts)
    po = 35 / 50
    pe = (30 / 50) * (25 / 50) + (20 / 50) * (25 / 50)
    assert a.accuracy == pytest.approx(po)
    assert a.kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-4)
    assert a.kappa_low is not None and a.kappa_high is not None
    assert a.kappa_low < a.kappa < a.kappa_high


def test_a_judge_that_always_says_pass_has_zero_kappa_whatever_its_accuracy() -> None:
    labels = [True] * 16 + [False] * 4
    a = agreement(labels, [True] * 20)
    assert a.accuracy == 0.8
    assert a.kappa == 0.0
    fit = judge_fit("sim/judge", a, 0.4)
    assert not fit.fit
    assert "unfit" in fit.reason and "kappa 0.0" in fit.reason and ">= 0.4" in fit.reason


def test_fitness_needs_enough_examples_and_a_defined_kappa() -> None:
    labels = [True, False, True, False]
    few = judge_fit("r", agreement(labels, labels), 0.4, min_examples=10)
    assert not few.fit and "4 labelled examples" in few.reason
    same = judge_fit("r", agreement([True] * 12, [True] * 12), 0.4)
    assert not same.fit and "undefined" in same.reason
    good = judge_fit("r", agreement(labels * 3, labels * 3), 0.4)
    assert good.fit and "is fit" in good.reason


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="as many"):
        agreement([True], [True, False])
