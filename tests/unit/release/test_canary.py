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
