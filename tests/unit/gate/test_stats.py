"""Exact values of the gate's statistics, checked against hand computations and
published tables, plus properties (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillci.gate.stats import (
    _half_cdf_exact,
    _half_cdf_log,
    binom_half_cdf,
    gap_closure,
    interpret_gcr,
    paired_bootstrap_diff,
    paired_comparison,
    sign_test,
    wilson_interval,
)

# ---------------------------------------------------------------------------- sign test


@pytest.mark.parametrize(
    ("pos", "neg", "expected"),
    [
        # n=10, smaller tail k=1: P(X<=1) = (C(10,0)+C(10,1))/2^10 = 11/1024; doubled.
        (1, 9, 22 / 1024),
        # n=5, all one way: P(X<=0) = 1/32; doubled = 0.0625 (never < 0.05 at n=5).
        (5, 0, 2 / 32),
        # n=6, k=1: (1+6)/64 doubled = 14/64.
        (5, 1, 14 / 64),
        # McNemar b=10, c=2: n=12, (1+12+66)/4096 doubled = 158/4096.
        (10, 2, 158 / 4096),
        # balanced: 2*P(X<=3 | n=6) = 2*42/64 > 1, capped at 1.
        (3, 3, 1.0),
        # no discordant pair at all: no evidence.
        (0, 0, 1.0),
    ],
)
def test_sign_test_two_sided_hand_values(pos: int, neg: int, expected: float) -> None:
    assert sign_test(pos, neg).p_value == pytest.approx(expected, rel=1e-15, abs=0)


def test_sign_test_one_sided_hand_values() -> None:
    # P(X >= 8 | n=10) = (C(10,8)+C(10,9)+C(10,10))/1024 = (45+10+1)/1024.
    assert sign_test(8, 2, alternative="greater").p_value == 56 / 1024
    # P(X <= 8 | n=10) = 1 - 56/1024 + C(10,8)/1024 = (1024-11)/1024.
    assert sign_test(8, 2, alternative="less").p_value == 1013 / 1024


def test_log_space_tail_agrees_with_exact_integers() -> None:
    for n, k in [(1200, 560), (3000, 1400), (25_000, 12_300), (1000, 10)]:
        assert _half_cdf_log(k, n) == pytest.approx(_half_cdf_exact(k, n), rel=1e-9)


def test_large_n_uses_log_space_and_stays_accurate() -> None:
    n = 100_001  # above the exact-integer limit
    # Normal approximation with continuity correction is accurate to ~1e-3 here.
    k = 50_000 - 300
    approx = 0.5 * math.erfc(-((k + 0.5 - n / 2) / math.sqrt(n / 4)) / math.sqrt(2))
    assert binom_half_cdf(k, n) == pytest.approx(approx, rel=2e-3)


@given(st.integers(0, 400), st.integers(0, 400))
def test_sign_test_properties(pos: int, neg: int) -> None:
    two = sign_test(pos, neg).p_value
    assert 0.0 <= two <= 1.0
    assert two == sign_test(neg, pos).p_value  # symmetric
    greater = sign_test(pos, neg, alternative="greater").p_value
    assert greater == sign_test(neg, pos, alternative="less").p_value
    assert two >= min(greater, sign_test(pos, neg, alternative="less").p_value)


# ---------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (score).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_1998(x: int, n: int, low: float, high: float) -> None:
    ci = wilson_interval(x, n)
    assert (round(ci.low, 4), round(ci.high, 4)) == (low, high)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0).model_dump(include={"low", "high"}) == {"low": 0.0, "high": 1.0}
    assert wilson_interval(7, 7).high == 1.0
    with pytest.raises(ValueError, match="successes <= n"):
        wilson_interval(3, 2)


@given(st.integers(0, 500), st.integers(1, 500), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_properties(x: int, n: int, conf: float) -> None:
    x = min(x, n)
    ci = wilson_interval(x, n, confidence=conf)
    assert 0.0 <= ci.low <= x / n <= ci.high <= 1.0
    wider = wilson_interval(x, n, confidence=min(0.999, conf + 0.009))
    assert wider.low <= ci.low + 1e-12 and wider.high >= ci.high - 1e-12


# ---------------------------------------------------------------------------- bootstrap


def test_bootstrap_diff_hand_case_and_determinism() -> None:
    base = [0.0, 0.0, 1.0, 1.0, 0.0, 0.4]
    head = [1.0, 0.0, 1.0, 1.0, 1.0, 0.6]
    a = paired_bootstrap_diff(base, head, n_boot=500, seed=7)
    b = paired_bootstrap_diff(base, head, n_boot=500, seed=7)
    assert a == b and a is not None
    # diffs 1,0,0,0,1,.2 -> mean 0.3667; resampled means lie in [0, 1].
    assert 0.0 <= a.low < 0.3667 < a.high <= 1.0
    assert paired_bootstrap_diff([], [], n_boot=100) is None
    same = paired_bootstrap_diff([0.2, 0.5], [0.4, 0.7])
    assert same is not None and same.low == same.high == pytest.approx(0.2, abs=1e-15)


def test_bootstrap_width_tracks_standard_error() -> None:
    # 400 tasks, diffs +1 (120), -1 (40), 0 (240): mean 0.2, sd = sqrt(.4 - .04) = 0.6,
    # se = 0.6/sqrt(400) = 0.03, so the 95% interval is about 0.2 +- 0.0588.
    base = [0.0] * 120 + [1.0] * 40 + [0.0] * 240
    head = [1.0] * 120 + [0.0] * 40 + [0.0] * 240
    ci = paired_bootstrap_diff(base, head, n_boot=4000, seed=3)
    assert ci is not None
    assert ci.low == pytest.approx(0.2 - 0.0588, abs=0.006)
    assert ci.high == pytest.approx(0.2 + 0.0588, abs=0.006)


scores = st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_bootstrap_ci_contains_estimate_and_ignores_order(data: st.DataObject) -> None:
    base = data.draw(scores)
    head = data.draw(
        st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(base), max_size=len(base))
    )
    seed = data.draw(st.integers(0, 2**31))
    ci = paired_bootstrap_diff(base, head, n_boot=300, seed=seed)
    assert ci is not None
    est = math.fsum(h - b for b, h in zip(base, head, strict=True)) / len(base)
    assert ci.low <= est <= ci.high
    rev = paired_bootstrap_diff(base[::-1], head[::-1], n_boot=300, seed=seed)
    assert rev == ci


def test_paired_comparison_counts_tasks() -> None:
    base = {"a": 0.0, "b": 1.0, "c": 2 / 3, "d": 0.0, "only-base": 1.0}
    head = {"a": 2 / 3, "b": 1 / 3, "c": 1.0, "d": 1 / 3}
    pc = paired_comparison(base, head, n_boot=200)
    assert (pc.tasks, pc.tasks_head_better, pc.tasks_base_better, pc.tasks_tied) == (4, 3, 1, 0)
    assert pc.unpaired_tasks == ["only-base"]
    # n=4, k=1: 2 * (1+4)/16.
    assert pc.sign_test.p_value == 10 / 16
    assert pc.diff == pytest.approx(7 / 12 - 5 / 12)


# ---------------------------------------------------------------------------- GCR


def test_gcr_value_and_label() -> None:
    tasks = [f"t{i}" for i in range(10)]
    baseline = dict.fromkeys(tasks, 0.0) | {"t0": 1.0}  # 0.1
    teacher = dict.fromkeys(tasks, 1.0) | {"t9": 0.0}  # 0.9
    head = dict.fromkeys(tasks, 0.0) | {t: 1.0 for t in tasks[:5]}  # 0.5
    g = gap_closure(head, baseline, teacher, n_boot=500, seed=1)
    assert g.value == pytest.approx((0.5 - 0.1) / (0.9 - 0.1))  # 0.5: half the gap
    assert g.label == "partial" and not g.review and g.tasks == 10
    assert g.ci is not None and g.ci.low < 0.5 < g.ci.high


def test_gcr_undefined_when_teacher_equals_baseline() -> None:
    same = {"a": 1.0, "b": 0.0}
    g = gap_closure({"a": 1.0, "b": 1.0}, same, same)
    assert g.value is None and g.ci is None and g.label == "undefined"
    assert g.reason is not None and "no gap to close" in g.reason and "equal" in g.reason


def test_gcr_undefined_when_teacher_below_baseline_or_missing() -> None:
    g = gap_closure({"a": 1.0}, {"a": 1.0}, {"a": 0.0})
    assert g.value is None and g.reason is not None and "below" in g.reason
    g = gap_closure({"a": 1.0}, {"a": 0.0}, {})
    assert g.value is None and g.tasks == 0 and g.reason is not None


def test_gcr_above_one_is_flagged_and_tiny_gap_gives_unbounded_ci() -> None:
    tasks = [f"t{i}" for i in range(20)]
    baseline = dict.fromkeys(tasks, 0.0)
    teacher = dict.fromkeys(tasks, 0.0) | {"t0": 1.0}  # gap 0.05 from one task
    head = dict.fromkeys(tasks, 0.0) | {"t1": 1.0, "t2": 1.0}
    g = gap_closure(head, baseline, teacher, n_boot=400)
    assert g.value == pytest.approx(2.0)
    assert g.review and g.label == "exceeds_teacher"
    # t0 is left out of about (19/20)^20 = 36% of resamples: gap 0, so unbounded.
    assert g.ci is None and g.reason is not None and "unbounded" in g.reason


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (None, "undefined"),
        (-0.2, "below_baseline"),
        (0.0, "none"),
        (0.5, "partial"),
        (1.0, "closed"),
        (1.3, "exceeds_teacher"),
    ],
)
def test_gcr_interpretation(value: float | None, label: str) -> None:
    assert interpret_gcr(value) == label
