"""RemoteTrials: rounds as batches of futures, retries of errors only, the budget, and the
cancellation of look-ahead when the gate's sequential test decides (issue 36)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.flows.gate import GateOptions, run_suite
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.trace.models import EvalState
from tests.fakes.remote_env import FakeRemote, gate_inputs


def _opts(repeat: int) -> GateOptions:
    return GateOptions(skill="repo-debugger", base="b", head="h", suites=("bench",),
                       repeat=repeat, impact=False)  # fmt: skip


def test_early_stop_cancels_the_round_in_flight(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 40)
    # slow trials (against the coordinator's redacting and keeping of each record on a busy
    # machine): the look-ahead round is still in flight when the test decides
    env = FakeRemote(latency=0.5, lift=0.6, head_hash=inputs.head.pkg.content_hash, seed=3)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=200, lookahead=1), rounds=5)
    run = run_suite("bench", _opts(5), inputs, src)
    rounds = sorted({r.repeat_index for r in run.head})
    assert run.result.evidence is not None and run.result.evidence.decision is not None
    assert run.result.evidence.decision.outcome == "accept"
    assert len(rounds) < 5
    nxt = len(rounds)
    head_reps = {rep for _, rep, _, head in env.submitted if head}
    # the round after the last one decided on was submitted ahead, no round past it...
    assert max(head_reps) == nxt
    # ...and cancelled when the test decided: none of its records reached the gate
    assert src.stats.cancelled > 0 and env.cancelled == src.stats.cancelled
    assert all(r.repeat_index < nxt for r in run.head)
    # every attempt of that round was cancelled in flight or finished unused
    ahead = sum(1 for _, rep, _, head in env.submitted if head and rep == nxt)
    assert src.stats.cancelled + src.stats.unused == ahead


def test_an_error_trial_is_retried_and_a_failed_one_is_not(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 6)
    env = FakeRemote(always_error=frozenset({"t0001"}), seed=1)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=4, retries=2), rounds=1)
    recs = src.run(inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                   inputs.base.pkg.content_hash, repeats=2, suite="bench")  # fmt: skip
    attempts: dict[tuple[str, int], list[int]] = {}
    for tid, rep, att, _ in env.submitted:
        attempts.setdefault((tid, rep), []).append(att)
    # the always-failing measurement: 1 + 2 retries, then its error record is kept
    assert attempts[("t0001", 0)] == [1, 2, 3] and attempts[("t0001", 1)] == [1, 2, 3]
    errs = [r for r in recs if r.task_id == "t0001"]
    assert [r.evaluation.state for r in errs] == [EvalState.infra_error] * 2
    # judged trials, failed ones included, ran once
    judged = [r for r in recs if r.task_id != "t0001"]
    assert any(r.evaluation.state is EvalState.failed for r in judged)
    assert all(v == [1] for k, v in attempts.items() if k[0] != "t0001")
    assert src.stats.retried == 4 and len(recs) == 12


def test_the_budget_stops_submission(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 10)
    env = FakeRemote(seed=2)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=3, budget=7), rounds=1)
    recs = src.run(inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                   inputs.base.pkg.content_hash, repeats=1, suite="bench")  # fmt: skip
    assert len(env.submitted) == 7 and len(recs) == 7
    assert src.stats.over_budget == 3
    assert sum("trial budget spent" in e for e in src.errors) == 3


def test_a_route_that_is_down_is_not_retried_and_stops_submission(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 6)
    env = FakeRemote(down_route="student", seed=4)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=2, retries=1), rounds=1)
    recs = src.run(inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                   inputs.base.pkg.content_hash, repeats=1, suite="bench")  # fmt: skip
    # the two attempts in flight when the route went down: their error records are kept,
    # neither is retried, and nothing more is submitted
    assert [att for _, _, att, _ in env.submitted] == [1, 1]
    assert [r.evaluation.state for r in recs] == [EvalState.infra_error] * 2
    assert src.stats.retried == 0 and src.stats.over_budget == 0
    assert src.stats.route_down == 6
    assert sum("model route student is down (connection refused)" in e for e in src.errors) == 4


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        RemoteLimits(concurrency=0)


def test_progress_hears_of_each_asked_for_trial_as_a_local_run_reports_it(
    tmp_path: Path,
) -> None:
    """Per-trial progress for remote trials (issue 36): ``running`` when an attempt is
    submitted, then one outcome per trial — a cached one on a second run — and ``skipped``
    for a trial the budget left out; never a look-ahead trial the gate did not ask for."""
    from skillci.runners.outcome import TrialRun

    inputs = gate_inputs(tmp_path, 4)

    def run(state: Path, seed: int, budget: int | None = None) -> list[TrialRun]:
        heard: list[TrialRun] = []
        env = FakeRemote(always_error=frozenset({"t0001"}), seed=seed)
        src = RemoteTrials(env, state, RemoteLimits(concurrency=2, retries=1, budget=budget),
                           rounds=3, progress=heard.append)  # fmt: skip
        src.run(inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                inputs.base.pkg.content_hash, repeats=1, suite="bench")  # fmt: skip
        src.close()
        return heard

    first = run(tmp_path, 5)
    running = [t for t in first if t.state == "running"]
    done = [t for t in first if t.state != "running"]
    # each trial once to its outcome; the error trial's retry is a second "running"
    assert sorted(t.task_id for t in done) == ["t0000", "t0001", "t0002", "t0003"]
    assert len(running) == 5 and all(t.started_at is not None for t in running)
    by_task = {t.task_id: t for t in done}
    assert by_task["t0001"].state == "infra_error" and by_task["t0001"].error
    assert all(t.run_id and not t.cached for k, t in by_task.items() if k != "t0001")
    assert all(t.repeat_index == 0 for t in first)  # no look-ahead round reported
    # the same trials again: judged ones come from the trial cache, the error one re-runs
    second = run(tmp_path, 6)
    assert {t.task_id for t in second if t.cached} == {"t0000", "t0002", "t0003"}
    assert {t.task_id for t in second if t.state == "running"} == {"t0001"}
    # a budget of one attempt: one trial runs, the other three are reported skipped
    third = run(tmp_path / "other", 7, budget=1)
    assert sorted(t.state for t in third).count("skipped") == 3
    assert all("trial budget spent" in (t.error or "") for t in third if t.state == "skipped")
