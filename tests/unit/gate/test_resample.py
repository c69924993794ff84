"""The exact samplers behind the bootstrap: distribution checks on fixed seeds."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from skillci.gate.resample import binomial, bootstrap_sums, multinomial, quantile
from skillci.gate.stats import binom_logpmf


def _chi_square(n: int, p: float, draws: int, seed: int) -> tuple[float, int]:
    rng = random.Random(seed)
    seen = Counter(binomial(rng, n, p) for _ in range(draws))
    pmf = [math.exp(binom_logpmf(k, n, p)) for k in range(n + 1)]
    # Pool cells with expected count < 5 into their neighbours (both tails).
    stat, cells, acc_e, acc_o = 0.0, 0, 0.0, 0
    for k in range(n + 1):
        acc_e += pmf[k] * draws
        acc_o += seen.get(k, 0)
        if acc_e >= 5:
            stat += (acc_o - acc_e) ** 2 / acc_e
            cells += 1
            acc_e, acc_o = 0.0, 0
    return stat, cells - 1


@pytest.mark.parametrize(
    ("n", "p"),
    [(20, 0.1), (30, 0.5), (200, 0.3), (1000, 0.02), (1000, 0.97), (5000, 0.5)],
)
def test_binomial_matches_exact_pmf(n: int, p: float) -> None:
    # Covers both methods (geometric for n*p < 10, BTRS above) and the p > 1/2 flip.
    stat, dof = _chi_square(n, p, 20_000, seed=n)
    # Mean + 5 sd of a chi-square: a wrong sampler lands far above this.
    assert stat < dof + 5 * math.sqrt(2 * dof), (stat, dof)


def test_binomial_edges() -> None:
    rng = random.Random(0)
    assert binomial(rng, 0, 0.3) == 0
    assert binomial(rng, 9, 0.0) == 0
    assert binomial(rng, 9, 1.0) == 9
    with pytest.raises(ValueError, match="0 <= p <= 1"):
        binomial(rng, 3, 1.5)


def test_multinomial_sums_to_n_and_has_right_means() -> None:
    rng = random.Random(5)
    sizes = [50, 30, 15, 5]
    totals = [0] * 4
    for _ in range(4000):
        draw = multinomial(rng, 100, sizes)
        assert sum(draw) == 100
        totals = [a + b for a, b in zip(totals, draw, strict=True)]
    means = [t / 4000 for t in totals]
    assert means == pytest.approx([50, 30, 15, 5], abs=0.3)


def test_grouped_and_direct_paths_agree_in_distribution() -> None:
    # Variance of a bootstrap sum of n rows drawn from the rows is n * var(rows).
    rows_few = [(float(i % 3),) for i in range(300)]  # 3 distinct rows: multinomial path
    rows_many = [(float(i % 3) + i * 1e-9,) for i in range(300)]  # all distinct: direct path
    expected_var = 300 * (2 / 3)  # var of {0,1,2} uniform = 2/3
    for rows in (rows_few, rows_many):
        sums = [s[0] for s in bootstrap_sums(rows, 3000, seed=11)]
        mean = sum(sums) / len(sums)
        var = sum((x - mean) ** 2 for x in sums) / (len(sums) - 1)
        assert mean == pytest.approx(300.0, abs=1.0)
        assert var == pytest.approx(expected_var, rel=0.08)


def test_bootstrap_sums_depend_on_multiset_not_order() -> None:
    rows = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0)] * 10
    assert bootstrap_sums(rows, 50, seed=1) == bootstrap_sums(rows[::-1], 50, seed=1)
    assert bootstrap_sums(rows, 50, seed=1) != bootstrap_sums(rows, 50, seed=2)
    assert bootstrap_sums([], 50, seed=1) == []


def test_quantile_type7_and_infinities() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.0) == 1.0
    assert quantile([-math.inf, 1.0, 2.0], 0.25) == -math.inf
    assert quantile([1.0, 2.0, math.inf], 0.75) == math.inf
