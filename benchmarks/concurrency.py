"""Model-bound trials against a slow endpoint: wall time vs ideal at --parallel 1, 4 and 16.

    .venv/bin/python benchmarks/concurrency.py [--trials 50] [--latency 0.5] [--parallel 1,4,16]
        [--runs 1] [--admit 2] [--client auto|litellm]

Starts its own loopback OpenAI-compatible endpoint that answers each request after
``--latency`` seconds (first turn of a conversation: a ``list_files`` tool call; second:
a final answer), so every trial makes exactly 2 model calls. A minimal task (one file,
a verifier that writes reward 1) keeps the non-model work per trial small; trials run
through the real :class:`~skillci.runners.scheduler.Scheduler` (workspace copy, git
baseline, sandboxed verifier, redacted record) in one process, each setting in its own
fresh state dir, all settings in one run (so they share the machine's load). The endpoint
runs in a process of its own, as a real one would: its HTTP handling is not skillci's work.

Two ideals are printed. The claim is against the *fluid* one, trials x calls x latency /
parallel: ``--parallel`` N model calls busy at all times (issue 22's reading, design 263).
The *trial-level* one, ceil(trials / parallel) x calls x latency, is the least a scheduler
running only N trials at once can take (a trial's calls are sequential). Targets: p16
within 1.3x of the fluid ideal, and p16 no slower than p4. ``--admit K`` sets how many
model-bound trials are in flight per call slot (default: the scheduler's
``MODEL_BOUND_ADMIT``; 1 = the trial-level scheduler). The peak of calls in flight at the
endpoint is printed (it must never exceed N), and how long a call slot was held per call
on average: the endpoint's latency plus litellm's work before and after the request, which
stretches when the trials' Python work competes for the CPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillci.providers.client import route_limiter
from skillci.providers.routes import ModelRoute
from skillci.runners import scheduler as scheduling
from skillci.runners.base import builtin_agent, plan
from skillci.runners.scheduler import Scheduler, needs_litellm, warm
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from tests.fakes.slow_endpoint import SlowEndpoint, list_files_task

CALLS = 2


class EndpointProcess:
    """:class:`SlowEndpoint` in a process of its own (``--serve``), as a real endpoint is:
    its HTTP handling then takes no CPU (and no GIL) from the trials measured."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.base_url = ""
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> EndpointProcess:
        argv = [sys.executable, __file__, "--serve", "--latency", str(self.latency)]
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        self.base_url = self._proc.stdout.readline().strip()
        return self

    def stats(self, *, reset: bool = False) -> tuple[int, int, int, float]:
        """(requests so far, peak calls in flight and peak open trials since the last
        reset, seconds spent serving requests so far)."""
        url = self.base_url.removesuffix("/v1") + "/stats" + ("?reset" if reset else "")
        with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 (loopback http)
            data = json.load(r)
        return (
            int(data["requests"]),
            int(data["peak"]),
            int(data["peak_open"]),
            float(data["served_sec"]),
        )

    def __exit__(self, *exc: object) -> None:
        assert self._proc is not None
        self._proc.terminate()
        self._proc.wait(timeout=10)


def serve(latency: float) -> int:
    """The ``--serve`` mode: print the endpoint's base URL, answer until terminated."""
    with SlowEndpoint(latency) as ep:
        print(ep.base_url, flush=True)
        threading.Event().wait()
    return 0


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process, and of its finished children."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def plan_for(task: Any, agent: Any, args: argparse.Namespace, state: Path) -> list[Any]:
    """The trials of one measurement, in a fresh state dir (nothing cached)."""
    return plan([task], agent, repeats=args.trials, state_dir=state)


def measure(
    args: argparse.Namespace, ep: EndpointProcess, p: int, specs: list[Any]
) -> float | None:
    """Run ``specs`` at ``--parallel p``, print one line; the wall time (None: a failure)."""
    slots = route_limiter(specs[0].agent.route_name or "", p)
    held0, holds0 = slots.held_sec, slots.calls
    before, _, _, served0 = ep.stats(reset=True)
    t0, cpu0 = time.perf_counter(), _cpu()
    res = Scheduler(parallel=p).run(specs)
    wall, cpu1 = time.perf_counter() - t0, _cpu()
    own, kids = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    after, peak, trials_open, served1 = ep.stats()
    calls = after - before
    bad = [tr for tr in res.trials if tr.state != "passed"]
    if bad or calls != args.trials * CALLS:
        print(f"p{p}: {len(bad)} trial(s) not passed ({bad[:1]}), {calls} calls")
        return None
    fluid = args.trials * CALLS * args.latency / p
    waves = math.ceil(args.trials / p) * CALLS * args.latency
    held = (slots.held_sec - held0) / max(1, slots.calls - holds0)
    print(
        f"p{p:<3} wall {wall:6.2f} s  fluid ideal {fluid:6.2f} s  ratio {wall / fluid:5.2f}x"
        f"  (trial-level ideal {waves:5.2f} s: {wall / waves:5.2f}x)  peak calls in "
        f"flight {peak} (limit {p}), trials in flight {trials_open}; call slot held "
        f"{held:.3f} s per call (the endpoint served each in "
        f"{(served1 - served0) / max(1, calls):.3f} s); CPU {own + kids:5.2f} s (this process "
        f"{own:.2f} s, its commands {kids:.2f} s)"
    )
    if peak > p:
        print(f"p{p}: more than {p} calls were in flight at once")
        return None
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--parallel", default="1,4,16")
    ap.add_argument("--admit", type=int, default=scheduling.MODEL_BOUND_ADMIT)
    ap.add_argument(
        "--client",
        choices=["auto", "litellm"],
        default="auto",
        help="the route's client: auto calls the endpoint directly (design 282)",
    )
    ap.add_argument(
        "--runs", type=int, default=1, help="measure every level this many times; claim medians"
    )
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        return serve(args.latency)
    scheduling.MODEL_BOUND_ADMIT = args.admit
    levels = [int(x) for x in args.parallel.split(",")]
    os.environ["SKILLCI_BENCH_KEY"] = "loopback-no-secret"
    load = os.getloadavg()
    print(
        f"{args.trials} trials x {CALLS} calls, endpoint latency {args.latency * 1000:.0f} ms, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"{args.admit} model-bound trial(s) in flight per call slot"
    )
    rows: dict[int, list[float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="skillci-conc-") as t,
        EndpointProcess(args.latency) as ep,
    ):
        tmp = Path(t)
        task = load_task(list_files_task(tmp), purpose=Purpose.final_report)
        route = ModelRoute(
            model="openai/bench",
            api_base=ep.base_url,
            api_key_env="SKILLCI_BENCH_KEY",
            input_cost_per_token=0.0,
            output_cost_per_token=0.0,
            timeout=60,
            client=args.client,
        )
        agent = builtin_agent("bench/loopback", route=route, max_steps=4)
        t0 = time.perf_counter()
        warm(litellm=needs_litellm([agent]))  # auto: the route goes direct, no litellm
        print(f"warm-up: {time.perf_counter() - t0:.2f} s; client {args.client}")
        for run in range(args.runs):
            for p in levels:
                wall = measure(args, ep, p, plan_for(task, agent, args, tmp / f"state-{run}-p{p}"))
                if wall is None:
                    return 3
                rows.setdefault(p, []).append(wall)
    fluid = {p: args.trials * CALLS * args.latency / p for p in rows}
    if args.runs > 1:
        for p, walls in rows.items():
            m = statistics.median(walls)
            print(
                f"p{p:<3} median of {len(walls)} runs {m:6.2f} s = {m / fluid[p]:5.2f}x of the "
                f"fluid ideal (min {min(walls):.2f} s, max {max(walls):.2f} s)"
            )
    if 16 in rows and 4 in rows:
        p16, p4 = statistics.median(rows[16]), statistics.median(rows[4])
        print(
            f"p16 within 1.3x of the fluid ideal: "
            f"{'met' if p16 <= 1.3 * fluid[16] else 'NOT met'}; "
            f"p16 no slower than p4: {'met' if p16 <= p4 else 'NOT met'}"
            + (" (medians)" if args.runs > 1 else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
