"""RemoteTrials keeps what the gate receives where local trials go (a complete trial dir under
the trial cache key, a run in the SQLite trace store), reuses it on a re-run gate, and stops
submitting at a dollar budget (issue 36, docs/design/406). The remote environment is the fake
at the network boundary; the trial dirs, the store and the gate's suite code are real."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from skillci.flows.gate import GateOptions, error_lines, run_suite, trial_specs
from skillci.runners.base import sandbox_kind
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.runners.trialdir import read_complete, trial_dir
from skillci.trace.models import EvalState
from skillci.trace.store import TraceStore
from tests.fakes.remote_env import REPO, FakeRemote, gate_inputs


def _opts(repeat: int) -> GateOptions:
    return GateOptions(skill="repo-debugger", base="b", head="h", suites=("bench",),
                       repeat=repeat, impact=False)  # fmt: skip


def _gate(
    state: Path, opts: GateOptions, limits: RemoteLimits, seed: int, errors: frozenset[str]
) -> tuple[FakeRemote, RemoteTrials, list[str]]:
    inputs = gate_inputs(state.parent, 12)
    env = FakeRemote(lift=0.6, head_hash=inputs.head.pkg.content_hash, seed=seed,
                     always_error=errors)  # fmt: skip
    src = RemoteTrials(env, state, limits, rounds=opts.repeat)
    run = run_suite("bench", opts, inputs, src)
    src.close()
    return env, src, [r.run_id for r in run.base + run.head]


def test_a_rerun_gate_reads_the_kept_trials_and_submits_nothing(tmp_path: Path) -> None:
    state = tmp_path / ".skillci"
    limits = RemoteLimits(concurrency=8, lookahead=1)
    env1, src1, ids1 = _gate(state, _opts(4), limits, 3, frozenset())
    assert env1.submitted and src1.cached == 0
    # every record the gate received is a complete trial dir under the local trial cache
    # key of its spec, and a run in the trace store; nothing else is (unused look-ahead)
    store = TraceStore(state)
    stored = {r.run_id: store.get(r.run_id) for r in store.query(limit=10_000)}
    assert set(stored) == set(ids1)
    inputs = gate_inputs(tmp_path, 12)
    specs = trial_specs(state, inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                        inputs.base.pkg.content_hash, repeats=4, suite="bench")  # fmt: skip
    local_keys = {(s.task.id, s.repeat_index): s.cache_key(sandbox_kind(s)) for s in specs}
    for rec in stored.values():
        assert rec.trial_cache_key is not None
        done = read_complete(trial_dir(state, rec.trial_cache_key), rec.trial_cache_key)
        assert done is not None and done[1].run_id == rec.run_id
        assert rec.metadata["remote_environment"] == "fake"
        if rec.runtime.skill and rec.runtime.skill.content_hash == inputs.base.pkg.content_hash:
            assert rec.trial_cache_key == local_keys[(rec.task_id, rec.repeat_index)]
    # the same gate again (another seed: a trial that ran would differ): all from the cache
    env2, src2, ids2 = _gate(state, _opts(4), limits, 4, frozenset())
    assert env2.submitted == [] and src2.stats.submitted == 0
    assert ids2 == ids1 and src2.cached == len(ids1)
    # --rerun all: nothing is read from the cache
    env3, src3, _ = _gate(state, dataclasses.replace(_opts(4), rerun="all"), limits, 5,
                          frozenset())  # fmt: skip
    assert src3.cached == 0 and len(env3.submitted) >= len(ids1)

    # `skillci trace ls` lists them as it lists local trials
    out = subprocess.run(
        [sys.executable, "-m", "skillci", "trace", "ls", "--home", str(state), "--json",
         "--limit", "1000"],
        capture_output=True, text=True, check=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    listed = {r["run_id"] for r in json.loads(out.stdout)["runs"]}
    assert set(ids1) <= listed


def test_a_failed_measurement_is_kept_but_never_reused(tmp_path: Path) -> None:
    state = tmp_path / ".skillci"
    limits = RemoteLimits(concurrency=8, retries=0, lookahead=0)
    errors = frozenset({"t0001"})
    _, _, ids1 = _gate(state, _opts(2), limits, 3, errors)
    store = TraceStore(state)
    errored = [s.run_id for s in store.query(limit=10_000) if s.state is EvalState.infra_error]
    assert errored and set(errored) <= set(ids1)
    assert {store.get(i).task_id for i in errored} == {"t0001"}
    env2, src2, ids2 = _gate(state, _opts(2), limits, 4, errors)
    # only the failed measurements run again (design 300); the rest come from the cache
    assert {tid for tid, *_ in env2.submitted} == {"t0001"}
    assert len(env2.submitted) == len(errored) and src2.cached == len(ids1) - len(errored)
    assert set(ids1) - set(ids2) == set(errored)


def test_a_round_asked_for_after_its_look_ahead_was_dropped_runs(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 4)
    tasks, pkg = inputs.head.tasks["bench"], inputs.head.pkg.content_hash
    env = FakeRemote(seed=2)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=8, lookahead=1), rounds=2)
    first = src.run(inputs.agent, tasks, inputs.head.rendered, pkg, repeats=1, suite="bench")
    src.rounds_done()  # round 1 went out ahead and is dropped, unasked
    assert src.stats.cancelled + src.stats.unused == 4
    # a second pass over the same source (the gate re-running a stale base) asks for it
    again = src.run(inputs.agent, tasks, inputs.head.rendered, pkg, repeats=1,
                    first_repeat=1, suite="bench")  # fmt: skip
    src.close()
    assert len(first) == len(again) == 4 and {r.repeat_index for r in again} == {1}


def test_the_dollar_budget_stops_submission_and_the_gate_shows_it(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 10)
    env = FakeRemote(usd=0.10, head_hash=inputs.head.pkg.content_hash, seed=2)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=2, max_dollars=0.45), rounds=1)
    run = run_suite("bench", _opts(1), inputs, src)
    src.close()
    n = len(env.submitted)
    # the 5th returned dollar-tenth reaches 0.45; one more may have been in flight (let finish)
    assert 5 <= n <= 6
    assert abs(src.stats.usd - 0.10 * n) < 1e-9 and src.stats.spent_usd is not None
    assert len(run.base) + len(run.head) == n
    # 10 base + 10 head trials asked for: each one never submitted is one error line
    lines = error_lines([run], src)["unknown"]
    assert len(lines) == 20 - n == src.stats.over_budget
    assert all("dollar budget spent" in line for line in lines)


def test_an_unknown_cost_counts_as_the_dearest_known(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 10)
    tasks, pkg = inputs.base.tasks["bench"], inputs.base.pkg.content_hash
    env = FakeRemote(usd=0.10, unknown_usd=frozenset({"t0002"}), seed=2)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=1, max_dollars=0.35), rounds=1)
    src.run(inputs.agent, tasks, inputs.base.rendered, pkg, repeats=1, suite="bench")
    src.close()
    # 0.1 + 0.1 + (unknown: 0.1) + 0.1 >= 0.35 after 4; counted free it would take 5
    assert [tid for tid, *_ in env.submitted] == ["t0000", "t0001", "t0002", "t0003"]
    assert src.stats.cost_unknown == 1 and abs(src.stats.usd - 0.3) < 1e-9
    assert src.stats.spent_usd is not None and abs(src.stats.spent_usd - 0.4) < 1e-9


def test_a_dollar_budget_over_unpriced_trials_stops_at_once(tmp_path: Path) -> None:
    inputs = gate_inputs(tmp_path, 5)
    tasks, pkg = inputs.base.tasks["bench"], inputs.base.pkg.content_hash
    env = FakeRemote(usd=None, seed=2)
    src = RemoteTrials(env, tmp_path, RemoteLimits(concurrency=1, max_dollars=5.0), rounds=1)
    recs = src.run(inputs.agent, tasks, inputs.base.rendered, pkg, repeats=1, suite="bench")
    src.close()
    # no price ever came back: the spend cannot be bounded, so nothing more is submitted
    assert len(env.submitted) == 1 and len(recs) == 1 and src.stats.spent_usd is None
    assert len(src.errors) == 4
    assert all("dollar budget spent" in e and "cost unknown" in e for e in src.errors)
    # without a dollar budget the same unpriced trials all run
    env2 = FakeRemote(usd=None, seed=2)
    src2 = RemoteTrials(env2, tmp_path / "b", RemoteLimits(concurrency=1), rounds=1)
    src2.run(inputs.agent, tasks, inputs.base.rendered, pkg, repeats=1, suite="bench")
    src2.close()
    assert len(env2.submitted) == 5 and src2.errors == []


def test_caller_planned_trials_are_kept_and_then_read_from_the_cache(tmp_path: Path) -> None:
    """``run_specs`` (``eval run --runner harbor``): the caller's own specs, each with its
    key, its record and whether it came from the trial cache; a budget-stopped one has no
    record and its cause is in ``errors``."""
    state = tmp_path / ".skillci"
    inputs = gate_inputs(tmp_path, 3)
    specs = trial_specs(state, inputs.agent, inputs.base.tasks["bench"], inputs.base.rendered,
                        inputs.base.pkg.content_hash, repeats=2, suite="bench")  # fmt: skip
    env = FakeRemote(seed=2)
    src = RemoteTrials(env, state, RemoteLimits(concurrency=4, lookahead=0))
    done = src.run_specs(specs)
    src.close()
    assert [(s.task.id, s.repeat_index) for s, *_ in done] == [
        (s.task.id, s.repeat_index) for s in specs
    ]
    assert len(env.submitted) == len(specs) and not any(c for *_, c in done)
    store = TraceStore(state)
    for spec, key, rec, _ in done:
        assert rec is not None and key == spec.cache_key(sandbox_kind(spec))
        assert store.get(rec.run_id).trial_cache_key == key
    again = RemoteTrials(FakeRemote(seed=9), state, RemoteLimits(concurrency=4, lookahead=0))
    done2 = again.run_specs(specs)
    assert again.stats.submitted == 0 and all(c for *_, c in done2)
    assert [r.run_id for _, _, r, _ in done2 if r] == [r.run_id for _, _, r, _ in done if r]
    capped = RemoteTrials(FakeRemote(seed=3), tmp_path / "other",
                          RemoteLimits(concurrency=1, budget=2, lookahead=0))  # fmt: skip
    done3 = capped.run_specs(specs)
    capped.close()
    assert sum(r is not None for _, _, r, _ in done3) == 2
    assert len(capped.errors) == len(specs) - 2
    assert all(e.endswith("trial budget spent") for e in capped.errors)
