"""Paired statistics for the release gate (pure, stdlib only; no scipy).

- :func:`sign_test`: the exact two-sided (or one-sided) sign test on discordant pairs.
  With one binary outcome per task it *is* the exact McNemar test.
- :func:`wilson_interval`: Wilson score interval for a proportion.
- :func:`paired_comparison`: per-task base vs head scores -> the task-level sign test plus
  a seeded, task-level paired bootstrap CI on the mean difference.
- :func:`gap_closure`: the Gap Closure Rate ``(head - baseline) / (teacher - baseline)``
  with a task-level bootstrap CI, or the reason it is undefined.

Why these choices: docs/design/040-paired-statistics.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Literal

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.gate.resample import bootstrap_sums, quantile

Alternative = Literal["two-sided", "greater", "less"]
GcrLabel = Literal["undefined", "below_baseline", "none", "partial", "closed", "exceeds_teacher"]

#: Up to this many discordant pairs the sign test sums exact integers; above, log space.
EXACT_INTEGER_MAX_N = 20_000
DEFAULT_BOOTSTRAP = 2000
_ROUNDING = 1e-12  # float noise, not signal


class Interval(FrozenModel):
    """A two-sided confidence interval."""

    low: float = Field(description="Lower bound.")
    high: float = Field(description="Upper bound.")
    confidence: float = Field(description="Nominal coverage, e.g. 0.95.")
    method: str = Field(description="How it was computed, e.g. 'wilson', 'bootstrap-percentile'.")

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


class SignTest(FrozenModel):
    """Exact sign test on discordant pairs (ties/concordant pairs dropped)."""

    n_pos: int = Field(ge=0, description="Pairs where head is better.")
    n_neg: int = Field(ge=0, description="Pairs where base is better.")
    n_ties: int = Field(default=0, ge=0, description="Pairs dropped as ties (not in the test).")
    alternative: Alternative = Field(description="'greater' means head better than base.")
    p_value: float = Field(ge=0.0, le=1.0, description="Exact binomial p-value, p0 = 1/2.")


# ---------------------------------------------------------------------------- binomial


def binom_logpmf(k: int, n: int, p: float) -> float:
    """log P(X = k) for X ~ Binomial(n, p); ``-inf`` outside the support."""
    if k < 0 or k > n:
        return -math.inf
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )


def _half_cdf_exact(k: int, n: int) -> float:
    """P(X <= k), X ~ Binomial(n, 1/2), by exact integer sums (correctly rounded)."""
    total = 0
    c = 1
    for i in range(k + 1):
        total += c
        c = c * (n - i) // (i + 1)
    return total / (1 << n)


def _half_cdf_log(k: int, n: int) -> float:
    """P(X <= k), X ~ Binomial(n, 1/2), for k <= n/2, summed in log space from k down."""
    log_top = binom_logpmf(k, n, 0.5)
    acc = 0.0
    rel = 1.0
    for i in range(k, 0, -1):
        acc += rel
        rel *= i / (n - i + 1)  # pmf(i-1) / pmf(i)
        if rel < 1e-17 * acc:
            break
    else:
        acc += rel
    return min(1.0, math.exp(log_top + math.log(acc)))


def binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exact for n <= EXACT_INTEGER_MAX_N."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if 2 * k > n:
        return 1.0 - binom_half_cdf(n - k - 1, n)
    if n <= EXACT_INTEGER_MAX_N:
        return _half_cdf_exact(k, n)
    return _half_cdf_log(k, n)


def sign_test(
    n_pos: int, n_neg: int, *, alternative: Alternative = "two-sided", n_ties: int = 0
) -> SignTest:
    """Exact sign test of H0: P(head better | pair differs) = 1/2.

    ``two-sided`` doubles the smaller tail (capped at 1); ``greater`` is P(X >= n_pos)
    (evidence head is better); ``less`` is P(X <= n_pos). No data gives p = 1.
    """
    if n_pos < 0 or n_neg < 0:
        raise ValueError("sign_test: counts must be >= 0")
    n = n_pos + n_neg
    if alternative == "greater":
        p = binom_half_cdf(n_neg, n)  # P(X >= n_pos) = P(X <= n_neg) by symmetry
    elif alternative == "less":
        p = binom_half_cdf(n_pos, n)
    else:
        p = min(1.0, 2.0 * binom_half_cdf(min(n_pos, n_neg), n))
    return SignTest(n_pos=n_pos, n_neg=n_neg, n_ties=n_ties, alternative=alternative, p_value=p)


def fisher_less(a_pass: int, a_n: int, b_pass: int, b_n: int) -> float:
    """One-sided Fisher exact p-value of "side b passes less often than side a": the
    probability, with the margins fixed, of b having ``b_pass`` passes or fewer."""
    if min(a_pass, a_n, b_pass, b_n) < 0 or a_pass > a_n or b_pass > b_n:
        raise ValueError("fisher_less: need 0 <= passes <= trials")
    total, passes = a_n + b_n, a_pass + b_pass
    lo = max(0, passes - a_n)
    denom = math.comb(total, passes)
    return min(
        1.0,
        sum(math.comb(b_n, k) * math.comb(a_n, passes - k) for k in range(lo, b_pass + 1)) / denom,
    )


# ---------------------------------------------------------------------------- intervals


def z_value(confidence: float) -> float:
    """Two-sided standard normal quantile, e.g. 1.95996... for 0.95."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def clustered_se(scores: Sequence[float]) -> float | None:
    """SE of the mean of per-task scores, tasks as clusters (Miller 2024, "Adding Error
    Bars to Evals"): sample SD of the scores / sqrt(tasks). None under 2 tasks."""
    n = len(scores)
    if n < 2:
        return None
    mean = math.fsum(scores) / n
    var = math.fsum((s - mean) ** 2 for s in scores) / (n - 1)
    return math.sqrt(var / n)


def wilson_interval(successes: float, n: float, *, confidence: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n`` (non-integer counts allowed,
    e.g. an effective sample size). ``n == 0`` gives the uninformative [0, 1]."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return Interval(low=0.0, high=1.0, confidence=confidence, method="wilson")
    z = z_value(confidence)
    z2 = z * z
    p = successes / n
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, min(p, center - half))
    high = 1.0 if successes == n else min(1.0, max(p, center + half))
    return Interval(low=low, high=high, confidence=confidence, method="wilson")


def _percentile_interval(values: Sequence[float], confidence: float, method: str) -> Interval:
    ordered = sorted(values)
    tail = (1.0 - confidence) / 2.0
    return Interval(
        low=quantile(ordered, tail),
        high=quantile(ordered, 1.0 - tail),
        confidence=confidence,
        method=method,
    )


def paired_bootstrap_diff(
    base: Sequence[float],
    head: Sequence[float],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval | None:
    """Percentile CI of mean(head - base), resampling tasks (pairs) with replacement.

    ``None`` when there are no pairs or ``n_boot == 0``. Identical differences give a
    zero-width interval at the estimate.
    """
    if len(base) != len(head):
        raise ValueError("paired_bootstrap_diff: base and head must have one score per task")
    n = len(base)
    if n == 0 or n_boot <= 0:
        return None
    diffs = [h - b for b, h in zip(base, head, strict=True)]
    est = math.fsum(diffs) / n
    if max(diffs) - min(diffs) <= _ROUNDING:
        return Interval(low=est, high=est, confidence=confidence, method="bootstrap-percentile")
    sums = bootstrap_sums([(d,) for d in diffs], n_boot, seed)
    ci = _percentile_interval([s[0] / n for s in sums], confidence, "bootstrap-percentile")
    # Sums in another order can differ from ``est`` in the last bits; don't let that
    # rounding put the estimate outside its own interval.
    if 0 < ci.low - est <= _ROUNDING or 0 < est - ci.high <= _ROUNDING:
        ci = ci.model_copy(update={"low": min(ci.low, est), "high": max(ci.high, est)})
    return ci


# ---------------------------------------------------------------------------- paired comparison


class PairedComparison(FrozenModel):
    """Base vs head on the tasks both sides ran; one score per task per side."""

    tasks: int = Field(description="Tasks with both a base and a head score.")
    base_mean: float = Field(description="Mean per-task base score.")
    head_mean: float = Field(description="Mean per-task head score.")
    diff: float = Field(description="head_mean - base_mean.")
    diff_ci: Interval | None = Field(description="Paired task-level bootstrap CI of diff.")
    sign_test: SignTest = Field(description="Two-sided exact sign test over tasks.")
    tasks_head_better: int = Field(description="Tasks where head scored higher.")
    tasks_base_better: int = Field(description="Tasks where base scored higher.")
    tasks_tied: int = Field(description="Tasks with equal scores (not in the sign test).")
    unpaired_tasks: list[str] = Field(description="Tasks present on one side only (ignored).")


def paired_comparison(
    base: Mapping[str, float],
    head: Mapping[str, float],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Task-level paired comparison of per-task scores (e.g. mean pass over k repeats)."""
    common = sorted(base.keys() & head.keys())
    unpaired = sorted(base.keys() ^ head.keys())
    b = [base[t] for t in common]
    h = [head[t] for t in common]
    pos = sum(1 for x, y in zip(b, h, strict=True) if y > x)
    neg = sum(1 for x, y in zip(b, h, strict=True) if y < x)
    n = len(common)
    base_mean = math.fsum(b) / n if n else 0.0
    head_mean = math.fsum(h) / n if n else 0.0
    diff = math.fsum(y - x for x, y in zip(b, h, strict=True)) / n if n else 0.0
    return PairedComparison(
        tasks=n,
        base_mean=base_mean,
        head_mean=head_mean,
        diff=diff,
        diff_ci=paired_bootstrap_diff(b, h, n_boot=n_boot, confidence=confidence, seed=seed),
        sign_test=sign_test(pos, neg, n_ties=n - pos - neg),
        tasks_head_better=pos,
        tasks_base_better=neg,
        tasks_tied=n - pos - neg,
        unpaired_tasks=unpaired,
    )


# ---------------------------------------------------------------------------- gap closure


class GapClosure(FrozenModel):
    """Gap Closure Rate: how much of the teacher-vs-student gap the skill closed."""

    value: float | None = Field(
        description="(head - baseline) / (teacher - baseline); None if undefined."
    )
    ci: Interval | None = Field(
        description="Task-level bootstrap CI; None if undefined or unbounded."
    )
    label: GcrLabel = Field(
        description="The seed's reading: 0 none, 0.5 partial, 1 closed, >1 review."
    )
    review: bool = Field(description="True when GCR > 1: beat the teacher; check the eval.")
    reason: str | None = Field(default=None, description="Why value or ci is missing.")
    tasks: int = Field(description="Tasks with head, baseline and teacher scores.")
    head_rate: float | None = Field(default=None, description="Student + skill pass rate.")
    baseline_rate: float | None = Field(default=None, description="Student, no skill.")
    teacher_rate: float | None = Field(default=None, description="Teacher pass rate.")


def interpret_gcr(value: float | None) -> GcrLabel:
    """Map a GCR to the seed's reading (bands around its anchor points 0, 0.5, 1, >1)."""
    if value is None:
        return "undefined"
    if value > 1.0:
        return "exceeds_teacher"
    if value < 0.0:
        return "below_baseline"
    if value < 0.25:
        return "none"
    if value < 0.9:
        return "partial"
    return "closed"


def gap_closure(
    head: Mapping[str, float],
    baseline: Mapping[str, float],
    teacher: Mapping[str, float],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 0,
) -> GapClosure:
    """GCR over the tasks all three sides ran, with a task-level bootstrap CI.

    Undefined when the teacher does not beat the baseline (``teacher <= baseline``: there
    is no gap to close, the ratio is 0/0 or its sign flips). Resamples whose gap is not
    positive count as -inf for the lower and +inf for the upper bound; when that reaches
    the tail probability the interval is unbounded and reported as None with the reason.
    """
    common = sorted(head.keys() & baseline.keys() & teacher.keys())
    n = len(common)
    if n == 0:
        return GapClosure(
            value=None,
            ci=None,
            label="undefined",
            review=False,
            tasks=0,
            reason="no task has head, baseline (student without skill) and teacher trials",
        )
    rows = [(head[t], baseline[t], teacher[t]) for t in common]
    h = math.fsum(r[0] for r in rows) / n
    s = math.fsum(r[1] for r in rows) / n
    t = math.fsum(r[2] for r in rows) / n
    rates = {"head_rate": h, "baseline_rate": s, "teacher_rate": t}
    if t <= s:
        why = "equal" if t == s else "below"
        return GapClosure(
            value=None,
            ci=None,
            label="undefined",
            review=False,
            tasks=n,
            reason=f"GCR is undefined: teacher pass rate ({t:.3f}) is {why} the student "
            f"baseline ({s:.3f}), so there is no gap to close",
            **rates,
        )
    value = (h - s) / (t - s)
    ci: Interval | None = None
    reason: str | None = None
    if n_boot > 0:
        finite: list[float] = []
        bad = 0
        # Only the two differences matter; fewer distinct rows make resampling cheaper.
        diffs = [(r[0] - r[1], r[2] - r[1]) for r in rows]
        for num, gap in bootstrap_sums(diffs, n_boot, seed):
            if gap > 0:
                finite.append(num / gap)
            else:
                bad += 1
        tail = (1.0 - confidence) / 2.0
        low = quantile(sorted(finite + [-math.inf] * bad), tail)
        high = quantile(sorted(finite + [math.inf] * bad), 1.0 - tail)
        if math.isinf(low) or math.isinf(high):
            reason = (
                f"GCR interval is unbounded: in {bad}/{n_boot} resamples the teacher did not "
                "beat the baseline; run more tasks or repeats"
            )
        else:
            ci = Interval(low=low, high=high, confidence=confidence, method="bootstrap-percentile")
    return GapClosure(
        value=value,
        ci=ci,
        label=interpret_gcr(value),
        review=value > 1.0,
        tasks=n,
        reason=reason,
        **rates,
    )
