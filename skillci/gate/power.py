"""What a suite can see: power, minimum detectable effects, task-clustered errors (pure).

Design: docs/design/223-power-in-every-gate.md. The unit of evidence is the *task*: repeats
of one task are correlated, so standard errors are computed over per-task scores (Miller
2024, "Adding Error Bars to Evals", clustered standard errors with tasks as clusters).

- :func:`clustered_se`: standard error of a mean of per-task scores.
- :func:`mde_improvement`: the smallest true gain of the mean pass rate a paired test at
  ``alpha`` (two-sided) detects with probability ``power``: ``(z_{1-a/2} + z_power) *
  sqrt(var_d / T)``, with ``var_d`` the variance of a task's head - base score — the
  observed one, floored by the binomial noise of ``k`` repeats on each side
  (``2 p(1-p) / k``), so a suite that happened to show no spread still has noise.
- :func:`mde_regression`: the smallest true share of base-passing tasks that break which
  the gate's regression check (``regressions / passing <= max_regression_rate``) catches
  with probability ``power``.
- :func:`noise_rejection`: the probability that repeat noise alone (no change at all)
  makes the regression check reject, from each base-passing task's own pass probability.
- :func:`suite_power`: all of the above for one suite of a gate run, with warnings when a
  manifest threshold is below what the suite can see.
- :func:`plan`: how many tasks a threshold needs at each repeat count.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from statistics import NormalDist

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.gate.metrics import GateMetrics, TaskChange
from skillci.gate.stats import clustered_se

DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05


class SuitePower(FrozenModel):
    """What one suite of one gate run could detect (docs/design/223-power-in-every-gate.md)."""

    suite: str = Field(description="Suite name.")
    tasks: int = Field(description="Tasks with trials on both sides.")
    repeats: int = Field(description="Fewest trials of a task on one side (k).")
    base_passing: int = Field(description="Tasks passing on base (what can regress).")
    power: float = Field(description="Target probability of detection, e.g. 0.8.")
    alpha: float = Field(description="Two-sided false-positive rate of the improvement test.")
    diff_sd: float = Field(description="Per-task head-base score SD used (observed, floored).")
    diff_se: float | None = Field(description="Task-clustered SE of the mean difference.")
    mde_improvement: float | None = Field(
        description="Smallest true pass-rate gain detected at `power` (null: under 2 tasks)."
    )
    mde_regression: float | None = Field(
        description="Smallest true share of passing tasks that break the regression check "
        "catches at `power` (null: no passing task)."
    )
    noise_rejection: float | None = Field(
        description="Probability the regression check rejects an unchanged skill from "
        "repeat noise alone (null: no passing task)."
    )
    warnings: list[str] = Field(default_factory=list, description="Thresholds it cannot see.")


# ---------------------------------------------------------------------------- primitives


def z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def binomial_floor_var(pass_rate: float, repeats: int, *, trials: int = 0) -> float:
    """Noise variance of one task's base-vs-head score difference from ``repeats`` trials
    per side, at the (Laplace-smoothed over ``trials``) pass rate: ``2 p(1-p) / k``."""
    p = (pass_rate * trials + 1) / (trials + 2) if trials else pass_rate
    return 2.0 * p * (1.0 - p) / max(1, repeats)


def mde_improvement(
    tasks: int, diff_var: float, *, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> float | None:
    if tasks < 2:
        return None
    return (z(1 - alpha / 2) + z(power)) * math.sqrt(diff_var / tasks)


def _binom_sf(n: int, p: float, c: int) -> float:
    """P(X > c) for X ~ Binomial(n, p)."""
    if c < 0:
        return 1.0
    if c >= n:
        return 0.0
    total = 0.0
    for k in range(c + 1, n + 1):
        total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    return min(1.0, total)


def allowed_regressions(passing: int, threshold: float) -> int:
    """Most regressions among ``passing`` tasks the check lets through."""
    return math.floor(threshold * passing + 1e-9)


def mde_regression(passing: int, threshold: float, *, power: float = DEFAULT_POWER) -> float | None:
    """Smallest true regression share rho with P(Binomial(passing, rho) > allowed) >= power."""
    if passing <= 0:
        return None
    c = allowed_regressions(passing, threshold)
    if c >= passing:
        return None  # the check never fires
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if _binom_sf(passing, mid, c) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def majority_fail_prob(p: float, repeats: int) -> float:
    """P(a task with pass probability ``p`` does not pass a strict majority of ``repeats``)."""
    k = max(1, repeats)
    return 1.0 - _binom_sf(k, p, k // 2)


def smoothed(fraction: float, repeats: int) -> float:
    """A task's pass probability from its observed fraction: ``(passes + 1) / (k + 2)``."""
    return (fraction * repeats + 1) / (repeats + 2)


def noise_rejection(flip_probs: Sequence[float], threshold: float) -> float | None:
    """P(more than the allowed base-passing tasks fail on an *unchanged* head), task i
    failing its majority independently with probability ``flip_probs[i]``."""
    n = len(flip_probs)
    if n == 0:
        return None
    dist = [1.0] + [0.0] * n  # Poisson-binomial by dynamic programming
    for q in flip_probs:
        for j in range(n, 0, -1):
            dist[j] = dist[j] * (1 - q) + dist[j - 1] * q
        dist[0] *= 1 - q
    c = allowed_regressions(n, threshold)
    return min(1.0, math.fsum(dist[c + 1 :]))


# ---------------------------------------------------------------------------- per suite


def _passes_base(t: TaskChange) -> bool:
    return t.change in ("regression", "unchanged_pass")


def suite_power(
    suite: str,
    metrics: GateMetrics,
    *,
    min_gain: float,
    max_regression_rate: float,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    uncounted: Container[str] = (),
    repeats: int | None = None,
) -> SuitePower:
    """Power of one suite of a gate run, from its per-task base/head scores and repeats.
    ``uncounted``: tasks the regression check leaves out (flaky, quarantined).
    ``repeats``: the independent repeats per task when known (the paired evidence counts
    trials that repeated an earlier trial's actions once, design 290); default: the
    fewest trials of a task on one side."""
    tasks = metrics.tasks
    n = len(tasks)
    k = min((min(t.base_repeats, t.head_repeats) for t in tasks), default=0)
    if repeats is not None:
        k = min(k, max(1, repeats))
    diffs = [t.head_pass_fraction - t.base_pass_fraction for t in tasks]
    trials = sum(t.base_repeats + t.head_repeats for t in tasks)
    pooled = (
        math.fsum(
            t.base_pass_fraction * t.base_repeats + t.head_pass_fraction * t.head_repeats
            for t in tasks
        )
        / trials
        if trials
        else 0.5
    )
    floor = binomial_floor_var(pooled, k, trials=trials)
    se_obs = clustered_se(diffs)
    observed = se_obs * se_obs * n if se_obs is not None else 0.0
    var_d = max(observed, floor)
    mde_i = mde_improvement(n, var_d, alpha=alpha, power=power)
    passing = [t for t in tasks if _passes_base(t) and t.task_id not in uncounted]
    mde_r = mde_regression(len(passing), max_regression_rate, power=power)
    noise = noise_rejection(
        [
            majority_fail_prob(smoothed(t.base_pass_fraction, t.base_repeats), t.base_repeats)
            for t in passing
        ],
        max_regression_rate,
    )
    warnings: list[str] = []
    if mde_i is not None and min_gain < mde_i:
        warnings.append(
            f"{suite}: min_validation_gain {min_gain:.1%} is below the smallest gain "
            f"{n} task(s) x {k} repeat(s) detect at {power:.0%} power ({mde_i:.1%})"
        )
    if passing and max_regression_rate < 1 / len(passing):
        warnings.append(
            f"{suite}: max_regression_rate {max_regression_rate:.1%} is below the resolution "
            f"of {len(passing)} passing task(s) (one task = {1 / len(passing):.1%}): any "
            "single regression rejects"
        )
    if mde_r is not None and mde_r > 2 * max_regression_rate:
        warnings.append(
            f"{suite}: max_regression_rate {max_regression_rate:.1%}: even twice that is "
            f"caught with under {power:.0%} power; {len(passing)} passing task(s) catch "
            f"{mde_r:.1%}"
        )
    if noise is not None and noise > alpha:
        warnings.append(
            f"{suite}: repeat noise alone rejects an unchanged skill with probability "
            f"{noise:.0%} (flaky tasks; raise repeats or quarantine them)"
        )
    return SuitePower(
        suite=suite,
        tasks=n,
        repeats=k,
        base_passing=len(passing),
        power=power,
        alpha=alpha,
        diff_sd=math.sqrt(var_d),
        diff_se=math.sqrt(var_d / n) if n >= 2 else None,
        mde_improvement=mde_i,
        mde_regression=mde_r,
        noise_rejection=noise,
        warnings=warnings,
    )


# ---------------------------------------------------------------------------- planning


class PlanRow(FrozenModel):
    """Tasks one suite needs at one repeat count (``skillci tasks plan``)."""

    repeats: int = Field(description="Repeats per task per side.")
    tasks_for_gain: int = Field(description="Tasks for the gain to be detected at `power`.")
    passing_for_regression: int | None = Field(
        description="Base-passing tasks for the regression rate to be caught at `power` "
        "(null: not within the search limit)."
    )
    tasks_for_regression: int | None = Field(
        description="passing_for_regression / pass rate (null: see above)."
    )
    noise_rejection: float | None = Field(
        description="At that size, P(noise alone rejects an unchanged skill)."
    )


def tasks_for_gain(
    gain: float,
    pass_rate: float,
    repeats: int,
    *,
    task_sd: float = 0.0,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> int:
    """Tasks for :func:`mde_improvement` <= ``gain`` (``task_sd``: spread of the true
    per-task effect beyond repeat noise, 0 when unknown)."""
    var_d = binomial_floor_var(pass_rate, repeats) + task_sd * task_sd
    need = ((z(1 - alpha / 2) + z(power)) ** 2) * var_d / (gain * gain)
    return max(2, math.ceil(need - 1e-9))


def passing_for_regression(
    regression: float, threshold: float, *, power: float = DEFAULT_POWER, limit: int = 5000
) -> int | None:
    """Fewest base-passing tasks for a true regression share ``regression`` to exceed the
    check's allowance with probability ``power``."""
    for n in range(1, limit + 1):
        c = allowed_regressions(n, threshold)
        if c < n and _binom_sf(n, regression, c) >= power:
            return n
    return None


def plan(
    *,
    min_gain: float,
    max_regression_rate: float,
    regression_to_catch: float,
    pass_rate: float,
    reliability: float = 0.9,
    repeats: Sequence[int] = (1, 3, 5),
    task_sd: float = 0.0,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> list[PlanRow]:
    """One row per repeat count. ``reliability``: per-trial pass probability of a task that
    passes on base (sets how often noise alone flips it)."""
    rows = []
    n_pass = passing_for_regression(regression_to_catch, max_regression_rate, power=power)
    for k in repeats:
        n_tasks = math.ceil(n_pass / pass_rate) if n_pass and pass_rate > 0 else None
        noise = (
            noise_rejection([majority_fail_prob(reliability, k)] * n_pass, max_regression_rate)
            if n_pass
            else None
        )
        rows.append(
            PlanRow(
                repeats=k,
                tasks_for_gain=tasks_for_gain(
                    min_gain, pass_rate, k, task_sd=task_sd, alpha=alpha, power=power
                ),
                passing_for_regression=n_pass,
                tasks_for_regression=n_tasks,
                noise_rejection=noise,
            )
        )
    return rows


__all__ = [
    "PlanRow",
    "SuitePower",
    "clustered_se",
    "mde_improvement",
    "mde_regression",
    "noise_rejection",
    "passing_for_regression",
    "plan",
    "suite_power",
    "tasks_for_gain",
]
