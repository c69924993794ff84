"""Canary verdicts and request bucketing (pure)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from skillci.release.canary import analyze
from skillci.release.models import Sample
from skillci.release.routing import bucket, pick
from skillci.skill.models import CanaryPolicy

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def samples(
    prefix: str, n: int, ok: int, tokens: int = 100, latency: float = 1.0, task: str = "t"
) -> list[Sample]:
    return [
        Sample(run_id=f"{prefix}{i}", task_id=task, passed=i < ok, tokens=tokens, latency_s=latency)
        for i in range(n)
    ]


def run(stable: list[Sample], canary: list[Sample], **policy: object):  # type: ignore[no-untyped-def]
    return analyze(
        skill="s",
        stable=("1.0.0", stable),
        canary=("1.1.0", canary),
        policy=CanaryPolicy.model_validate(policy),
        window_start=T0,
        window_end=T1,
    )


def test_bucket_is_sha256_first_8_bytes_mod_100() -> None:
    rid = "req-42"
    want = int.from_bytes(hashlib.sha256(rid.encode()).digest()[:8], "big") % 100
    assert bucket(rid) == want
    assert pick(100, rid) == "canary" and pick(0, rid) == "stable" and pick(50, None) == "stable"
    share = sum(pick(10, f"r{i}") == "canary" for i in range(10_000)) / 10_000
    assert 0.09 < share < 0.11


def test_pass_when_within_thresholds() -> None:
    a = run(samples("s", 40, 36), samples("c", 40, 35, tokens=110, latency=1.2))
    assert a.outcome == "pass" and a.reasons == []
    assert a.stable.success_rate == 0.9 and a.canary.samples == 40


def test_inconclusive_without_enough_samples() -> None:
    a = run(samples("s", 40, 40), samples("c", 29, 0))
    assert a.outcome == "inconclusive"
    assert "keep waiting" in a.reasons[0]
    assert [c.name for c in a.checks] == ["samples"]


def test_fail_on_success_drop_token_or_latency_growth() -> None:
    assert run(samples("s", 40, 36), samples("c", 40, 33)).outcome == "fail"  # 90 -> 82.5
    tok = run(samples("s", 40, 36), samples("c", 40, 36, tokens=130))
    assert tok.outcome == "fail" and tok.reasons[0].startswith("token_growth")
    lat = run(samples("s", 40, 36), samples("c", 40, 36, latency=1.5))
    assert lat.outcome == "fail" and lat.reasons[0].startswith("latency_growth")
    # thresholds come from the policy
    assert run(samples("s", 40, 36), samples("c", 40, 33), max_success_drop=0.1).outcome == "pass"


def test_tracked_task_regression_fails() -> None:
    stable = samples("s", 30, 30) + samples("sx", 5, 5, task="key")
    canary = samples("c", 30, 30) + samples("cx", 5, 1, task="key")
    a = run(stable, canary, tracked_tasks=["key", "rare"])
    assert a.outcome == "fail"
    check = next(c for c in a.checks if c.name == "tracked_regressions")
    assert check.detail == "key; not enough data: rare"


def test_analysis_id_depends_on_the_runs_not_their_order() -> None:
    s, c = samples("s", 30, 30), samples("c", 30, 30)
    assert run(s, c).analysis_id == run(list(reversed(s)), c).analysis_id
    assert run(s, c).analysis_id != run(s, c[:-1]).analysis_id


def test_drop_interval_matches_newcombe_1998() -> None:
    """Newcombe (1998), Stat Med 17:873, example (a): 56/70 vs 48/80, method 10 (hybrid
    score) gives 0.0524 to 0.3339 at 95%."""
    from skillci.release.canary import drop_interval, side_stats

    ci = drop_interval(
        side_stats("a", samples("a", 70, 56)), side_stats("b", samples("b", 80, 48)), 0.95
    )
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0524, 0.3339)


def test_confidence_mode_waits_instead_of_rolling_back_on_noise() -> None:
    stable, canary = samples("s", 40, 36), samples("c", 40, 33)  # 90% -> 82.5%
    assert run(stable, canary).outcome == "fail"  # point estimates: rolled back
    a = run(stable, canary, confidence=0.9)
    assert a.outcome == "inconclusive"
    check = next(c for c in a.checks if c.name == "success_drop")
    assert check.passed is None and "CI [" in check.value
    assert a.reasons[-1].startswith("keep waiting")
    # a real, large drop is still a failure; a clearly-as-good canary still passes
    assert run(samples("s", 100, 90), samples("c", 100, 60), confidence=0.9).outcome == "fail"
    assert run(samples("s", 200, 180), samples("c", 200, 190), confidence=0.9).outcome == "pass"


def test_confidence_mode_bounds_false_rollbacks_of_an_equal_canary() -> None:
    """1000 canaries exactly as good as stable (85% each, 40 records a side): comparing point
    estimates rolls back about a fifth of them; at confidence 0.9 at most ~5% (the one-sided
    error), the rest wait for data."""
    import random

    rng = random.Random(7)
    rolled = {None: 0, 0.9: 0}
    for k in range(1000):
        a = sum(rng.random() < 0.85 for _ in range(40))
        b = sum(rng.random() < 0.85 for _ in range(40))
        for conf in rolled:
            policy = {"min_samples": 40} | ({"confidence": conf} if conf else {})
            r = run(samples(f"s{k}-", 40, a), samples(f"c{k}-", 40, b), **policy)
            rolled[conf] += r.outcome == "fail"
    assert rolled[None] > 150 and rolled[0.9] <= 65, rolled


def test_unknown_tokens_are_left_out_of_the_mean_not_counted_as_zero() -> None:
    """Imported production sessions whose source gave no usage (tokens null, design 389)."""
    unknown = [s.model_copy(update={"tokens": None}) for s in samples("u", 20, 18, tokens=0)]
    a = run(samples("s", 40, 36), samples("c", 20, 18, tokens=110) + unknown)
    assert a.canary.samples == 40 and a.canary.mean_tokens == 110.0
    more = [s.model_copy(update={"run_id": f"v{i}"}) for i, s in enumerate(unknown * 2)]
    none = run(samples("s", 40, 36), more)
    assert none.canary.mean_tokens is None
    check = next(c for c in none.checks if c.name == "token_growth")
    assert check.passed is None and check.value == "n/a"
