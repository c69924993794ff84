"""A simulated 2,000-trial gate on a fake remote environment (issue 36).

    python benchmarks/remote_gate.py [--tasks 200] [--repeat 5] [--latency 0.02]
        [--error-rate 0.05] [--lift 0.25] [--concurrency 64] [--budget N]
        [--usd 0.01] [--max-dollars X] [--json]

The gate's real suite code (:func:`skillci.flows.gate.run_suite`: base trials, then head
rounds fed to the sequential paired test, stopping when it decides) runs over
:class:`~skillci.runners.remote.RemoteTrials` on :class:`tests.fakes.remote_env.FakeRemote`
(seeded latency and ``infra_error`` rate, real RunRecords). The fixed plan is
``2 * tasks * repeat`` trials. Coordinator CPU per trial is the process CPU time (the fake's
timer thread included, so it over-counts) over the attempts submitted, keeping every record
the gate receives in the trial cache and the trace store included; the goal is <= 50 ms.
Then the same gate runs again over a fresh source on the same state dir: it should take every
trial from the cache and submit nothing (docs/design/406). ``--usd`` is each attempt's price
(negative: unknown), ``--max-dollars`` the gate's dollar budget.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from skillci.flows.gate import GateOptions, _SuiteRun, run_suite
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.trace.store import TraceStore
from tests.fakes.remote_env import FakeRemote, gate_inputs

GOAL_MS = 50.0


def _decision(run: _SuiteRun) -> str | None:
    ev = run.result.evidence
    return ev.decision.outcome if ev and ev.decision else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="simulated remote gate")
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2, help="mean seconds per trial")
    ap.add_argument("--error-rate", type=float, default=0.05)
    ap.add_argument("--lift", type=float, default=0.25, help="head pass-rate lift")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--lookahead", type=int, default=1)
    ap.add_argument("--usd", type=float, default=0.01, help="price of an attempt (<0: unknown)")
    ap.add_argument("--max-dollars", type=float, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = gate_inputs(Path(tmp), a.tasks)
        limits = RemoteLimits(a.concurrency, a.budget, retries=1, lookahead=a.lookahead,
                              max_dollars=a.max_dollars)  # fmt: skip
        opts = GateOptions(skill="repo-debugger", base="b", head="h", suites=("bench",),
                           repeat=a.repeat, impact=False)  # fmt: skip

        def gate() -> tuple[_SuiteRun, RemoteTrials, FakeRemote]:
            env = FakeRemote(
                latency=a.latency,
                error_rate=a.error_rate,
                lift=a.lift,
                head_hash=inputs.head.pkg.content_hash,
                seed=a.seed,
                usd=a.usd if a.usd >= 0 else None,
            )
            src = RemoteTrials(env, Path(tmp) / ".skillci", limits, rounds=a.repeat)
            run = run_suite("bench", opts, inputs, src)
            src.close()
            return run, src, env

        c0, w0 = time.process_time(), time.perf_counter()
        run, src, _ = gate()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        w1 = time.perf_counter()
        rerun, again, env2 = gate()
        rerun_wall = time.perf_counter() - w1
        stored = TraceStore(Path(tmp) / ".skillci").count()
    head_rounds = len({r.repeat_index for r in run.head})
    st = src.stats
    out = {
        "fixed_plan_trials": 2 * a.tasks * a.repeat,
        "trials_used": len(run.base) + len(run.head),
        "attempts_submitted": st.submitted,
        "attempts_completed": st.completed,
        "head_rounds_run": head_rounds,
        "rounds_planned": a.repeat,
        "early_stop": head_rounds < a.repeat and _decision(run) not in (None, "continue"),
        "decision": _decision(run),
        "errors_retried": st.retried,
        "errors_left": len(src.errors),
        # failed after their retries: kept in the store, never reused (a re-run retries them)
        "failed_measurements": sum(r.evaluation.state.is_error for r in run.base + run.head),
        "cancelled": st.cancelled,
        "lookahead_unused": st.unused,
        "over_budget": st.over_budget,
        "usd_known": round(st.usd, 4),
        "attempts_cost_unknown": st.cost_unknown,
        "usd_counted": None if st.spent_usd is None else round(st.spent_usd, 4),
        "max_dollars": a.max_dollars,
        "records_kept": stored,
        "rerun_attempts_submitted": len(env2.submitted),
        "rerun_trials_from_cache": again.cached,
        "rerun_same_decision": _decision(rerun) == _decision(run),
        "rerun_wall_s": round(rerun_wall, 2),
        "wall_s": round(wall, 2),
        "coordinator_cpu_ms_per_trial": round(1000 * cpu / max(st.submitted, 1), 2),
        "goal_ms": GOAL_MS,
    }
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:30} {v}")
    return 0 if out["coordinator_cpu_ms_per_trial"] <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
