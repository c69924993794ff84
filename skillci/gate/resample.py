"""Seeded resampling for the gate's bootstrap intervals (pure, stdlib only).

A task-level bootstrap draws ``n`` tasks with replacement and recomputes a statistic
that is a function of column *sums* over the drawn tasks (a mean difference, the three
pass rates of the gap closure rate). Drawing ``n`` tasks with replacement is the same as
drawing multinomial counts over the tasks, and tasks whose rows are identical can share
one category. Task rows built from k repeats take few distinct values (``2k+1``
differences for binary outcomes), so :func:`bootstrap_sums` samples the multinomial over
distinct rows with conditional binomials: the cost per replicate is the number of
distinct rows, not the number of tasks. When rows are mostly distinct it falls back to
drawing task indices. Both paths are exact in distribution and deterministic for a seed.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence

Row = tuple[float, ...]


def binomial(rng: random.Random, n: int, p: float) -> int:
    """One draw from Binomial(n, p), exact.

    Geometric waiting times when ``n*p < 10`` (Devroye's "second waiting time" method,
    O(np)); otherwise Hörmann's BTRS transformed rejection with squeeze (1993), O(1).
    """
    if n < 0 or not 0.0 <= p <= 1.0:
        raise ValueError(f"binomial: need n >= 0 and 0 <= p <= 1, got n={n}, p={p}")
    if n == 0 or p == 0.0:
        return 0
    if p == 1.0:
        return n
    return _binomial(rng.random, n, p)


def _binomial(rand: Callable[[], float], n: int, p: float) -> int:
    """Binomial(n, p) for n >= 1 and 0 < p < 1 (no argument checks: the hot path)."""
    flip = p > 0.5
    if flip:
        p = 1.0 - p
    if n * p < 10.0:
        log_q = math.log1p(-p)
        x = 0
        y = 0
        while True:
            y += math.floor(math.log(1.0 - rand()) / log_q) + 1
            if y > n:
                break
            x += 1
    else:
        x = _btrs(rand, n, p)
    return n - x if flip else x


def _btrs(rand: Callable[[], float], n: int, p: float) -> int:
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    setup = False
    alpha = lpq = h = 0.0
    m = 0
    while True:
        u = rand() - 0.5
        v = rand()
        us = 0.5 - abs(u)
        if us <= 0.0:
            continue
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        if not setup:
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / (1.0 - p))
            m = math.floor((n + 1) * p)
            h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
            setup = True
        v = v * alpha / (a / (us * us) + b)
        if v <= 0.0:
            return k
        if math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


def multinomial(rng: random.Random, n: int, counts: Sequence[int]) -> list[int]:
    """Draw ``n`` items with replacement from categories of the given sizes; return how
    many landed in each category (conditional binomials, exact)."""
    rand = rng.random
    left = n
    weight = sum(counts)
    out: list[int] = []
    for w in counts:
        if left == 0 or w <= 0:
            out.append(0)
        elif w >= weight:
            out.append(left)
            left = 0
        else:
            x = _binomial(rand, left, w / weight)
            out.append(x)
            left -= x
        weight -= w
    return out


def bootstrap_sums(rows: Sequence[Row], n_boot: int, seed: int) -> list[Row]:
    """Column sums of ``n_boot`` task-level bootstrap resamples of ``rows``.

    Each resample draws ``len(rows)`` rows with replacement. The result depends only on
    the multiset of rows, the seed and ``n_boot`` (not on the order of ``rows``).
    """
    n = len(rows)
    if n == 0 or n_boot <= 0:
        return []
    width = len(rows[0])
    rng = random.Random(seed)  # noqa: S311 - statistical resampling, not security
    # Largest categories first: the draws left for the tail shrink fast (cheaper draws).
    grouped = sorted(Counter(rows).items(), key=lambda kv: (-kv[1], kv[0]))
    if len(grouped) * 4 <= n:
        values = [r for r, _ in grouped]
        sizes = [c for _, c in grouped]
        out: list[Row] = []
        for _ in range(n_boot):
            draws = multinomial(rng, n, sizes)
            acc = [0.0] * width
            for d, v in zip(draws, values, strict=True):
                if d:
                    for j in range(width):
                        acc[j] += d * v[j]
            out.append(tuple(acc))
        return out
    ordered = sorted(rows)
    columns = [[r[j] for r in ordered] for j in range(width)]
    out = []
    for _ in range(n_boot):
        idx = [math.floor(rng.random() * n) for _ in range(n)]
        out.append(tuple(math.fsum(col[i] for i in idx) for col in columns))
    return out


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (type 7) of already sorted values; ±inf allowed."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    a, b = sorted_values[lo], sorted_values[hi]
    if lo == hi or a == b:
        return a
    if math.isinf(a) or math.isinf(b):
        # Between an infinite and a finite value: report the infinite one (conservative).
        return a if math.isinf(a) else b
    return a + (b - a) * (pos - lo)
