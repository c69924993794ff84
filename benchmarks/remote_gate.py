"""A simulated 2,000-trial gate on a fake remote environment (issue 36).

    python benchmarks/remote_gate.py [--tasks 200] [--repeat 5] [--latency 0.02]
        [--error-rate 0.05] [--lift 0.25] [--concurrency 64] [--budget N] [--json]

The gate's real suite code (:func:`skillci.flows.gate._run_suite`: base trials, then head
rounds fed to the sequential paired test, stopping when it decides) runs over
:class:`~skillci.runners.remote.RemoteTrials` on :class:`tests.fakes.remote_env.FakeRemote`
(seeded latency and ``infra_error`` rate, real RunRecords). The fixed plan is
``2 * tasks * repeat`` trials. Coordinator CPU per trial is the process CPU time (the fake's
timer thread included, so it over-counts) over the attempts submitted; the goal is <= 50 ms.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from skillci.flows.gate import GateOptions, _run_suite
from skillci.runners.remote import RemoteLimits, RemoteTrials
from tests.fakes.remote_env import FakeRemote, gate_inputs

GOAL_MS = 50.0


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
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = gate_inputs(Path(tmp), a.tasks)
        env = FakeRemote(
            latency=a.latency,
            error_rate=a.error_rate,
            lift=a.lift,
            head_hash=inputs.head.pkg.content_hash,
            seed=a.seed,
        )
        limits = RemoteLimits(a.concurrency, a.budget, retries=1, lookahead=a.lookahead)
        src = RemoteTrials(env, Path(tmp), limits, rounds=a.repeat)
        opts = GateOptions(skill="repo-debugger", base="b", head="h", suites=("bench",),
                           repeat=a.repeat, impact=False)  # fmt: skip
        c0, w0 = time.process_time(), time.perf_counter()
        run = _run_suite("bench", opts, inputs, src)
        src.close()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    ev = run.result.evidence
    head_rounds = len({r.repeat_index for r in run.head})
    st = src.stats
    out = {
        "fixed_plan_trials": 2 * a.tasks * a.repeat,
        "trials_used": len(run.base) + len(run.head),
        "attempts_submitted": st.submitted,
        "attempts_completed": st.completed,
        "head_rounds_run": head_rounds,
        "rounds_planned": a.repeat,
        "early_stop": head_rounds < a.repeat,
        "decision": ev.decision.outcome if ev and ev.decision else None,
        "errors_retried": st.retried,
        "errors_left": len(src.errors),
        "cancelled": st.cancelled,
        "lookahead_unused": st.unused,
        "over_budget": st.over_budget,
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
