"""Canary analysis (pure). Request bucketing is in :mod:`skillci.release.routing`.

Analysis (docs/design/084-canary-analysis.md): production records of the stable and the
canary version over the same window (since the canary started) are compared with the
manifest's ``canary`` thresholds. Not enough records on either side is *inconclusive*:
keep waiting, move nothing (as Argo Rollouts does). Otherwise the canary *fails* when its
success rate dropped by more than ``max_success_drop``, its mean tokens or latency grew by
more than ``max_token_growth`` / ``max_latency_growth``, or a tracked task that passes on
stable fails on the canary; else it *passes*.

With ``confidence`` set in the policy, the success drop is judged by its Newcombe interval
instead of the point estimate (docs/design/114-canary-confidence.md): noise alone then
rolls a canary back with probability at most (1 - confidence) / 2, and a canary whose
interval straddles the allowance is *inconclusive* until more records arrive.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from skillci.gate.stats import Interval, wilson_interval
from skillci.release.models import (
    CanaryAnalysis,
    CanaryCheck,
    Outcome,
    Sample,
    SideStats,
)
from skillci.skill.models import CanaryPolicy


def side_stats(version: str, samples: Sequence[Sample]) -> SideStats:
    n = len(samples)
    ok = sum(s.passed for s in samples)
    tasks: dict[str, list[int]] = {}
    for s in samples:
        t = tasks.setdefault(s.task_id, [0, 0])
        t[0] += 1
        t[1] += int(s.passed)
    ci = wilson_interval(ok, n) if n else None
    known = [s.tokens for s in samples if s.tokens is not None]  # unknown is not 0
    return SideStats(
        version=version,
        samples=n,
        successes=ok,
        success_rate=ok / n if n else None,
        ci_low=ci.low if ci else None,
        ci_high=ci.high if ci else None,
        mean_tokens=sum(known) / len(known) if known else None,
        mean_latency_s=sum(s.latency_s for s in samples) / n if n else None,
        tasks=dict(sorted(tasks.items())),
    )


def _growth(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before <= 0:
        return None
    return (after - before) / before


def analysis_id(
    skill: str, stable: str, canary: str, window_start: datetime, runs: Sequence[str]
) -> str:
    data = json.dumps(
        [skill, stable, canary, window_start.isoformat(), sorted(runs)], separators=(",", ":")
    )
    return "canary-" + hashlib.sha256(data.encode()).hexdigest()[:16]


def _growth_check(
    name: str, label: str, before: float | None, after: float | None, limit: float
) -> CanaryCheck:
    g = _growth(before, after)
    if g is None:
        return CanaryCheck(
            name=name,
            value="n/a",
            threshold=f"<= {limit:+.0%}",
            passed=None,
            detail=f"no stable {label} to compare with",
        )
    return CanaryCheck(
        name=name,
        value=f"{before:.1f} -> {after:.1f} ({g:+.1%})",
        threshold=f"<= {limit:+.0%}",
        passed=g <= limit,
    )


def drop_interval(stable: SideStats, canary: SideStats, confidence: float) -> Interval:
    """Newcombe's hybrid score interval for stable - canary success rates (his method 10:
    Wilson intervals of each side, combined), at ``confidence`` two-sided."""
    assert stable.success_rate is not None and canary.success_rate is not None
    p1, p2 = stable.success_rate, canary.success_rate
    w1 = wilson_interval(stable.successes, stable.samples, confidence=confidence)
    w2 = wilson_interval(canary.successes, canary.samples, confidence=confidence)
    d = p1 - p2
    low = d - ((p1 - w1.low) ** 2 + (w2.high - p2) ** 2) ** 0.5
    high = d + ((w1.high - p1) ** 2 + (p2 - w2.low) ** 2) ** 0.5
    return Interval(low=low, high=high, confidence=confidence, method="newcombe-wilson")


def _success_check(st: SideStats, ca: SideStats, policy: CanaryPolicy) -> CanaryCheck:
    assert st.success_rate is not None and ca.success_rate is not None
    drop = st.success_rate - ca.success_rate
    value = f"{st.success_rate:.1%} -> {ca.success_rate:.1%} ({-drop:+.1%})"
    allowed = policy.max_success_drop + 1e-12
    if policy.confidence is None:
        return CanaryCheck(
            name="success_drop",
            value=value,
            threshold=f"drop <= {policy.max_success_drop:.1%}",
            passed=drop <= allowed,
        )
    ci = drop_interval(st, ca, policy.confidence)
    passed: bool | None
    if ci.high <= allowed:
        passed, why = True, "the whole interval is within the allowance"
    elif ci.low > 0 and drop > allowed:
        passed, why = False, "the canary is worse beyond noise, and by more than allowed"
    else:
        passed, why = None, "the interval straddles the allowance: not enough data yet"
    return CanaryCheck(
        name="success_drop",
        value=f"{value}; drop {policy.confidence:.0%} CI [{ci.low:+.1%}, {ci.high:+.1%}]",
        threshold=f"drop <= {policy.max_success_drop:.1%} (at {policy.confidence:.0%})",
        passed=passed,
        detail=why,
    )


def _task_passes(counts: list[int] | None) -> bool | None:
    return None if not counts else 2 * counts[1] > counts[0]


def analyze(
    *,
    skill: str,
    stable: tuple[str, Sequence[Sample]],
    canary: tuple[str, Sequence[Sample]],
    policy: CanaryPolicy,
    window_start: datetime,
    window_end: datetime,
) -> CanaryAnalysis:
    """The verdict of canary vs stable. ``stable``/``canary``: (version, samples)."""
    st, ca = side_stats(stable[0], stable[1]), side_stats(canary[0], canary[1])
    aid = analysis_id(
        skill,
        st.version,
        ca.version,
        window_start,
        [s.run_id for s in (*stable[1], *canary[1])],
    )
    checks: list[CanaryCheck] = []
    enough = st.samples >= policy.min_samples and ca.samples >= policy.min_samples
    checks.append(
        CanaryCheck(
            name="samples",
            value=f"stable {st.samples}, canary {ca.samples}",
            threshold=f">= {policy.min_samples} each",
            passed=enough,
        )
    )
    undecided: list[CanaryCheck] = []
    if enough:
        success = _success_check(st, ca, policy)
        checks.append(success)
        if success.passed is None:
            undecided.append(success)
        checks.append(
            _growth_check(
                "token_growth", "tokens", st.mean_tokens, ca.mean_tokens, policy.max_token_growth
            )
        )
        checks.append(
            _growth_check(
                "latency_growth",
                "latency",
                st.mean_latency_s,
                ca.mean_latency_s,
                policy.max_latency_growth,
            )
        )
        if policy.tracked_tasks:
            regressed, unjudged = [], []
            for t in policy.tracked_tasks:
                sc, cc = st.tasks.get(t), ca.tasks.get(t)
                if (
                    not sc
                    or not cc
                    or sc[0] < policy.min_task_samples
                    or cc[0] < policy.min_task_samples
                ):
                    unjudged.append(t)
                elif _task_passes(sc) and not _task_passes(cc):
                    regressed.append(t)
            judged = len(policy.tracked_tasks) - len(unjudged)
            checks.append(
                CanaryCheck(
                    name="tracked_regressions",
                    value=f"{len(regressed)}/{judged} judged",
                    threshold="0 (pass on stable, fail on canary)",
                    passed=not regressed,
                    detail=", ".join(regressed)
                    + (f"; not enough data: {', '.join(unjudged)}" if unjudged else ""),
                )
            )
    outcome: Outcome
    if not enough:
        outcome = "inconclusive"
        reasons = [
            f"not enough data: stable {st.samples}, canary {ca.samples} record(s), "
            f"need {policy.min_samples} each — keep waiting"
        ]
    else:
        failed = [c for c in checks if c.passed is False]
        outcome = "fail" if failed else "inconclusive" if undecided else "pass"
        reasons = [
            f"{c.name}: {c.value} (needs {c.threshold})" + (f" — {c.detail}" if c.detail else "")
            for c in (failed or undecided)
        ]
        if outcome == "inconclusive":
            reasons.append("keep waiting: more production records narrow the interval")
    return CanaryAnalysis(
        analysis_id=aid,
        skill=skill,
        window_start=window_start,
        window_end=window_end,
        outcome=outcome,
        reasons=reasons,
        checks=checks,
        stable=st,
        canary=ca,
        policy=policy,
    )
