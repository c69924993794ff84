"""The sequential test: exact level by enumeration, error rates by seeded simulation,
and the API contract (pairing, no decision without data, determinism)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillci.errors import InvalidInputError
from skillci.gate.metrics import TrialOutcome
from skillci.gate.sequential import SequentialConfig, SequentialTest, truncation_threshold


def outcome(side: str, task: str, repeat: int, passed: bool) -> TrialOutcome:
    return TrialOutcome(
        task_id=task,
        side=side,
        repeat=repeat,
        reward=float(passed),
        passed=passed,  # type: ignore[arg-type]
    )


def test_no_data_never_decides() -> None:
    test = SequentialTest(SequentialConfig(max_rounds=1))
    assert test.decision.outcome == "continue"
    for _ in range(3):
        d = test.update([])
        assert (d.outcome, d.rounds, d.trials_used) == ("continue", 0, 0)
    # trials without a partner are not data either
    d = test.update([outcome("base", "a", 0, True)])
    assert (d.outcome, d.rounds, d.trials_used) == ("continue", 0, 1)
    d = test.update([outcome("head", "a", 0, True)])  # completes the pair -> round 1 of 1
    assert d.outcome == "reject" and d.rounds == 1 and d.concordant == 1


def test_update_pairs_by_task_and_repeat() -> None:
    test = SequentialTest(SequentialConfig(max_rounds=3, p1=0.65))
    d = test.update(
        [
            outcome("base", "a", 0, False),
            outcome("head", "a", 0, True),  # head win
            outcome("base", "b", 0, True),
            outcome("head", "b", 0, False),  # base win
            outcome("base", "c", 0, True),
            outcome("head", "c", 0, True),  # concordant
            outcome("head", "a", 1, True),  # unpaired until its base arrives
        ]
    )
    assert (d.head_wins, d.base_wins, d.concordant, d.trials_used) == (1, 1, 1, 7)
    assert d.llr == pytest.approx(math.log(0.65 / 0.5) + math.log(0.35 / 0.5))
    with pytest.raises(InvalidInputError, match="duplicate trial"):
        test.update([outcome("head", "a", 1, True)])
    with pytest.raises(InvalidInputError, match="teacher trial"):
        test.update([outcome("teacher", "a", 5, True)])


def test_one_round_budget_is_the_fixed_exact_sign_test() -> None:
    # max_rounds=1: no early stop, so the threshold is the one-sided critical value of
    # Binomial(10, 1/2) at 0.05: P(X>=9) = 11/1024 = 0.0107 <= 0.05 < P(X>=8) = 56/1024.
    cfg = SequentialConfig(max_rounds=1)
    assert truncation_threshold([10], cfg, 0.65) == (9, 0.0)
    assert SequentialTest(cfg).observe(9, 1).outcome == "accept"
    assert SequentialTest(cfg).observe(8, 2).outcome == "reject"


def _enumerate_accept_probability(cfg: SequentialConfig, per_round: list[int]) -> float:
    """P(accept | H0) by walking every head-win count per round (binomial weights)."""
    total = 0.0

    def walk(test_rounds: list[int], prob: float) -> None:
        nonlocal total
        r = len(test_rounds)
        if r == len(per_round):
            test = SequentialTest(cfg)
            d = None
            for wins, n in zip(test_rounds, per_round, strict=True):
                d = test.observe(wins, n - wins)
                if d.outcome != "continue":
                    break
            assert d is not None and d.outcome != "continue"
            total += prob * (d.outcome == "accept")
            return
        n = per_round[r]
        for k in range(n + 1):
            walk([*test_rounds, k], prob * math.comb(n, k) / 2**n)

    walk([], 1.0)
    return total


LOOSE = SequentialConfig(alpha=0.2, beta=0.2, p1=0.9, max_rounds=3)
# auto p1 = 0.5 + z(0.7) * 0.5 / sqrt(6 * 3) = 0.562; 11 wins of 12 cross log(0.7/0.3).
LOOSE_AUTO = SequentialConfig(alpha=0.3, beta=0.3, early_alpha_share=1.0, max_rounds=3)


@pytest.mark.parametrize(
    ("cfg", "per_round"),
    [
        (LOOSE.model_copy(update={"max_rounds": 2}), [4, 4]),
        (LOOSE, [4, 6, 3]),
        (LOOSE, [7, 2, 5]),
        (LOOSE_AUTO, [6, 6, 4]),
    ],
)
def test_exact_level_by_enumeration(cfg: SequentialConfig, per_round: list[int]) -> None:
    # Loose boundaries so that early acceptance really happens (with p1 = 0.9, four
    # straight head wins cross log(0.8/0.1) = 2.08 since 4 * log 1.8 = 2.35).
    p1 = SequentialTest(cfg).observe(per_round[0], 0).p1
    assert p1 is not None
    c, early = truncation_threshold(per_round, cfg, p1)
    level = _enumerate_accept_probability(cfg, per_round)
    assert early > 0
    assert level <= cfg.alpha + 1e-12
    # No other final threshold keeps the level and accepts more often.
    levels = [_level_with_threshold(cfg, per_round, t) for t in range(sum(per_round) + 2)]
    assert level == pytest.approx(max(x for x in levels if x <= cfg.alpha + 1e-12))
    assert _level_with_threshold(cfg, per_round, c) == level


def test_auto_p1_uses_discordant_counts_only() -> None:
    cfg = SequentialConfig()  # p1 chosen from the budget
    a, b = SequentialTest(cfg), SequentialTest(cfg)
    # no discordant pair yet: nothing to choose from
    assert a.observe(0, 0, 10).p1 is None and b.observe(0, 0, 10).p1 is None
    da, db = a.observe(3, 2, 5), b.observe(2, 3, 5)
    # planned discordant pairs = 5 per 2 rounds * 5 rounds = 12.5;
    # p1 = 0.5 + 1.6449 * sqrt(0.25 / 12.5) = 0.7326, whoever won the pairs.
    assert da.p1 == db.p1 == pytest.approx(0.5 + 1.6448536 * math.sqrt(0.25 / 12.5))
    assert cfg.auto_p1(1e9) == pytest.approx(0.52)  # floor p0 + 0.02
    assert cfg.auto_p1(0.0) == pytest.approx(0.95)  # ceiling


def _level_with_threshold(cfg: SequentialConfig, per_round: list[int], c: int) -> float:
    from skillci.gate import sequential

    original = sequential.truncation_threshold
    sequential.truncation_threshold = lambda rounds, config, p1: (c, 0.0)  # type: ignore[assignment]
    try:
        return _enumerate_accept_probability(cfg, per_round)
    finally:
        sequential.truncation_threshold = original


def _simulate(p: float, cfg: SequentialConfig, runs: int, seed: int) -> tuple[float, float]:
    """Accept rate and mean rounds; each round has Binomial(40, 0.3) discordant pairs."""
    rng = random.Random(seed)
    accepts = rounds = 0
    for _ in range(runs):
        test = SequentialTest(cfg)
        while True:
            n = sum(rng.random() < 0.3 for _ in range(40))
            wins = sum(rng.random() < p for _ in range(n))
            d = test.observe(wins, n - wins, 40 - n)
            if d.outcome != "continue":
                break
        accepts += d.outcome == "accept"
        rounds += d.rounds
    return accepts / runs, rounds / runs


def test_sprt_error_rates_on_fixed_seed() -> None:
    runs = 3000
    # A fixed alternative and a budget that rarely binds: Wald's own error bounds apply.
    cfg = SequentialConfig(alpha=0.05, beta=0.10, p1=0.65, max_rounds=60)
    false_accept, rounds_h0 = _simulate(0.5, cfg, runs, seed=1)
    power, rounds_h1 = _simulate(0.65, cfg, runs, seed=2)
    # 3 standard errors of a proportion at the nominal rates as tolerance.
    assert false_accept <= cfg.alpha + 3 * math.sqrt(cfg.alpha * (1 - cfg.alpha) / runs)
    assert 1 - power <= cfg.beta + 3 * math.sqrt(cfg.beta * (1 - cfg.beta) / runs)
    # a regression is rejected even more reliably
    false_accept_regression, _ = _simulate(0.35, cfg, 1000, seed=3)
    assert false_accept_regression <= 0.01
    # Wald's average sample number, in discordant pairs (12 per round on average):
    # log A = ln(0.9/0.025) = 3.58, log B = ln(0.1/0.975) = -2.28, steps +0.262/-0.357.
    # H0 drift -0.0472/pair: ASN = (0.975*2.28 - 0.025*3.58)/0.0472 = 45 pairs = 3.8 rounds.
    # H1 drift +0.0457/pair: ASN = (0.9*3.58 - 0.1*2.28)/0.0457 = 65 pairs = 5.5 rounds.
    # Whole rounds overshoot the boundary, so the measured means sit a little above.
    assert 3.8 <= rounds_h0 <= 3.8 + 2.5
    assert 5.5 <= rounds_h1 <= 5.5 + 2.5


def test_decided_test_ignores_further_rounds() -> None:
    test = SequentialTest(SequentialConfig(max_rounds=10, p1=0.65))
    d = test.observe(30, 0)
    assert d.outcome == "accept" and d.rounds == 1
    assert d.rounds_saved == 9 and d.trials_saved_estimate == 9 * 60
    assert test.observe(0, 30) == d
    assert test.update([outcome("base", "z", 0, True)]) == d


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="p1"):
        SequentialConfig(p0=0.5, p1=0.5)
    with pytest.raises(ValueError, match="min_rounds"):
        SequentialConfig(min_rounds=3, max_rounds=2)


def test_min_rounds_delays_early_decisions() -> None:
    test = SequentialTest(SequentialConfig(min_rounds=2, max_rounds=5, p1=0.65))
    assert test.observe(30, 0).outcome == "continue"
    assert test.observe(1, 0).outcome == "accept"


round_counts = st.lists(
    st.tuples(st.integers(0, 15), st.integers(0, 15), st.integers(0, 15)), min_size=0, max_size=8
)


@settings(max_examples=80, deadline=None)
@given(round_counts, st.integers(1, 6))
def test_decisions_are_deterministic_and_need_data(
    rounds: list[tuple[int, int, int]], max_rounds: int
) -> None:
    cfg = SequentialConfig(max_rounds=max_rounds)
    a, b = SequentialTest(cfg), SequentialTest(cfg)
    for wins, losses, same in rounds:
        da, db = a.observe(wins, losses, same), b.observe(wins, losses, same)
        assert da == db
        if da.outcome != "continue":
            assert da.rounds >= 1 and da.head_wins + da.base_wins + da.concordant > 0
        assert da.rounds <= max_rounds


def test_default_config_false_accept_on_fixed_seed() -> None:
    # Defaults: p1 from the budget, 5 rounds, exact threshold at truncation.
    runs = 3000
    cfg = SequentialConfig()
    false_accept, rounds = _simulate(0.5, cfg, runs, seed=4)
    assert false_accept <= cfg.alpha + 3 * math.sqrt(cfg.alpha * (1 - cfg.alpha) / runs)
    assert rounds < cfg.max_rounds  # it does stop early under H0
    power, _ = _simulate(0.7, cfg, 1000, seed=5)
    assert power > 0.8  # ~60 discordant pairs at p = 0.7: a fixed test has power ~0.9
