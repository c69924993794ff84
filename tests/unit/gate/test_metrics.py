"""Gate metrics on a small suite computed by hand."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillci.errors import InvalidInputError
from skillci.gate.metrics import TrialOutcome, compute_metrics, pass_at_k, pass_hat_k


def trials(side: str, task: str, passes: str, usd: float = 0.0) -> list[TrialOutcome]:
    """``passes`` like "TTF": one trial per letter."""
    return [
        TrialOutcome(
            task_id=task,
            side=side,  # type: ignore[arg-type]
            repeat=i,
            reward=1.0 if ch == "T" else 0.0,
            passed=ch == "T",
            input_tokens=100,
            output_tokens=10,
            model_calls=2,
            tool_calls=3,
            latency_s=1.5,
            usd=usd,
        )
        for i, ch in enumerate(passes)
    ]


def suite() -> list[TrialOutcome]:
    # task  base  head   -> change
    # a     FFF   TTF    repair          (0/3 -> 2/3)
    # b     TTT   TFF    regression      (3/3 -> 1/3)
    # c     TTF   TTT    unchanged_pass  (2/3 -> 3/3)
    # d     FFF   FFT    unchanged_fail  (0/3 -> 1/3)
    out: list[TrialOutcome] = []
    for task, base, head in [
        ("a", "FFF", "TTF"),
        ("b", "TTT", "TFF"),
        ("c", "TTF", "TTT"),
        ("d", "FFF", "FFT"),
    ]:
        out += trials("base", task, base, usd=0.01)
        out += trials("head", task, head, usd=0.02)
        out += trials("teacher", task, "TTT")
        out += trials("baseline", task, "FFF")
    return out


def test_hand_computed_suite() -> None:
    m = compute_metrics(suite(), n_boot=200)
    base, head = m.sides["base"].pass_rate, m.sides["head"].pass_rate
    # base: (0 + 1 + 2/3 + 0) / 4 = 5/12; head: (2/3 + 1/3 + 1 + 1/3) / 4 = 7/12
    assert base.pass_rate == pytest.approx(5 / 12)
    assert head.pass_rate == pytest.approx(7 / 12)
    assert base.mean_reward == pytest.approx(5 / 12)
    # k = 3 repeats: pass@3 is 1 for any task with a pass; pass^3 only for all-pass tasks.
    assert (base.k, base.pass_at_k, base.pass_hat_k) == (3, 0.5, 0.25)
    assert (head.pass_at_k, head.pass_hat_k) == (1.0, 0.25)
    assert base.ci.low < 5 / 12 < base.ci.high and (base.tasks, base.trials) == (4, 12)

    kinds = {t.task_id: t.change for t in m.tasks}
    assert kinds == {"a": "repair", "b": "regression", "c": "unchanged_pass", "d": "unchanged_fail"}
    ch = m.changes
    # repair: 1 of the 2 tasks failing on base (a, d); regression: 1 of 2 passing (b, c).
    assert (ch.repairs, ch.regressions, ch.repair_rate, ch.regression_rate) == (1, 1, 0.5, 0.5)
    assert ch.repair_ci is not None and ch.repair_ci.contains(0.5)

    assert m.paired is not None
    assert (m.paired.tasks_head_better, m.paired.tasks_base_better) == (3, 1)
    assert m.paired.sign_test.p_value == 10 / 16  # n=4, k=1: 2 * 5/16

    # teacher 1.0, baseline 0.0 -> GCR = pass rate itself
    assert m.gcr_head.value == pytest.approx(7 / 12) and m.gcr_head.label == "partial"
    assert m.gcr_base.value == pytest.approx(5 / 12)

    bc, hc = m.sides["base"].cost, m.sides["head"].cost
    assert (bc.trials, bc.successes, bc.input_tokens, bc.model_calls) == (12, 5, 1200, 24)
    assert bc.usd == pytest.approx(0.12) and bc.usd_per_success == pytest.approx(0.12 / 5)
    assert hc.usd_per_success == pytest.approx(0.24 / 7)
    assert bc.tokens_per_success == pytest.approx(1320 / 5)
    assert bc.latency_per_trial_s == pytest.approx(1.5)
    assert m.cost_delta is not None and m.cost_delta.usd == pytest.approx(1.0)
    assert m.cost_delta.usd_per_success == pytest.approx((0.24 / 7 - 0.024) / 0.024)
    assert m.cost_delta.tokens == 0.0
    assert m.sides["teacher"].cost.usd_per_success == 0.0  # free, and it passed
    assert m.sides["baseline"].cost.usd_per_success is None  # no success at all


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        (5, 2, 2, 1 - 3 / 10, 1 / 10),  # 1 - C(3,2)/C(5,2); C(2,2)/C(5,2)
        (10, 3, 5, 1 - 21 / 252, 0.0),  # 1 - C(7,5)/C(10,5); C(3,5) = 0
        (5, 5, 3, 1.0, 1.0),
        (5, 0, 3, 0.0, 0.0),
        (4, 1, 1, 0.25, 0.25),  # k = 1: both are the pass fraction
    ],
)
def test_pass_at_k_and_pass_hat_k(n: int, c: int, k: int, at: float, hat: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)


def test_tie_counts_as_failing_on_both_sides() -> None:
    out = trials("base", "t", "TF") + trials("head", "t", "TTFF")
    m = compute_metrics(out, n_boot=0)
    assert m.tasks[0].change == "unchanged_fail"


def test_input_errors() -> None:
    dup = trials("base", "a", "T") + trials("base", "a", "T")
    with pytest.raises(InvalidInputError, match="duplicate trial"):
        compute_metrics(dup)
    uneven = trials("base", "a", "TT") + trials("base", "b", "TTTT")
    with pytest.raises(InvalidInputError, match="k=3 needs at least k repeats"):
        compute_metrics(uneven, k=3)


def test_missing_sides_leave_comparisons_empty() -> None:
    m = compute_metrics(trials("base", "a", "TTF"), n_boot=50)
    assert m.paired is None and m.tasks == [] and m.cost_delta is None
    assert m.changes.repair_rate is None and m.gcr_head.label == "undefined"


def test_unequal_repeats_weigh_tasks_equally() -> None:
    out = trials("base", "a", "T") + trials("base", "b", "FFFFFFFFF")
    pr = compute_metrics(out, n_boot=0).sides["base"].pass_rate
    assert pr.pass_rate == 0.5  # not 1/10
    # effective trials = T^2 / sum(1/n_i) = 4 / (1 + 1/9) = 3.6: wide interval
    assert pr.ci.high - pr.ci.low > 0.5


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_metrics_are_deterministic_and_order_free(seed: int) -> None:
    rng = random.Random(seed)
    out: list[TrialOutcome] = []
    for t in range(rng.randint(1, 12)):
        for side in ("base", "head", "teacher", "baseline"):
            out += trials(side, f"t{t}", "".join(rng.choice("TF") for _ in range(3)))
    shuffled = out[:]
    rng.shuffle(shuffled)
    a = compute_metrics(out, n_boot=100, seed=3)
    assert a == compute_metrics(shuffled, n_boot=100, seed=3)
    assert a.schema_version == 1
    for side in a.sides.values():
        assert (
            0.0
            <= side.pass_rate.pass_hat_k
            <= side.pass_rate.pass_rate
            <= side.pass_rate.pass_at_k
            <= 1.0
        )


def test_an_unknown_token_count_makes_the_side_total_unknown_not_smaller() -> None:
    """An imported trial with null tokens (design 389): the side's sums, tokens per success
    and the token delta are unknown; usd, calls and pass rates are unaffected."""
    outs = suite()
    i = next(n for n, o in enumerate(outs) if o.side == "head")
    outs[i] = outs[i].model_copy(update={"input_tokens": None})
    m = compute_metrics(outs)
    hc, bc = m.sides["head"].cost, m.sides["base"].cost
    assert hc.input_tokens is None and hc.tokens_per_success is None
    assert hc.output_tokens == 12 * 10  # the other count is known for every trial
    assert bc.input_tokens == 12 * 100 and bc.tokens_per_success is not None
    assert m.cost_delta is not None and m.cost_delta.tokens is None
    assert m.cost_delta.usd == pytest.approx(1.0)
