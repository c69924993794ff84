"""The same sequential gate locally and through Harbor's (or BenchFlow's) docker environment
(issue 36; issue 31).

    eval "$(bash scripts/ci_docker.sh start)"; eval "$(bash scripts/ci_venvs.sh)"
    .venv/bin/python benchmarks/harbor_vs_local.py [--suite regression] [--repeat 2]
        [--agent oracle] [--concurrency 2] [--runner harbor|benchflow] [--json]

``--runner benchflow`` runs the remote side on
:class:`~skillci.runners.benchflow_remote.BenchflowEnvironment` (``bench eval run`` per
attempt; oracle and noop only: design 431) and names it ``benchflow_docker``.

The gate's real suite code (:func:`skillci.flows.gate.run_suite`: base trials, then head
rounds fed to the sequential paired test, stopping when it decides; impact selection off so
every round runs) on a bundled suite's tasks (``evals/suites/<suite>.yaml``) with the bundled
skill on both sides (the head one line longer), run twice in fresh state dirs: by the local
scheduler (one trial at a time, this machine's sandbox) and by
:class:`~skillci.runners.remote.RemoteTrials` over
:class:`~skillci.runners.harbor_remote.HarborEnvironment` (``harbor run -e docker`` per
attempt, ``--concurrency`` at once). The agent is ``oracle``, ``noop`` or skillci's built-in
agent (``builtin`` on ``--student``, sim/student by default: on Harbor its loop runs in this
process over the bridge of design 426, so its CPU counts as the coordinator's). Prints, for each: the suite's decision and
metrics, trials run, wall time, and skillci's coordinator CPU per trial — this process's CPU
time (all its threads; not the ``harbor`` children's) over the trials run; goal <= 50 ms.
Exit 1 when the two disagree or the Harbor side misses the goal.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from skillci.flows.gate import GateInputs, GateOptions, GateRunner, TrialSource, _Side, run_suite
from skillci.runners.base import AgentSpec, builtin_agent
from skillci.runners.registry import runner_entry
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 50.0


def inputs(suite: str, agent: AgentSpec) -> GateInputs:
    spec = yaml.safe_load((ROOT / "evals" / "suites" / f"{suite}.yaml").read_text())
    tasks = [load_task(ROOT / "evals" / "tasks" / t) for t in spec["tasks"]]
    base_pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    head_pkg = base_pkg.with_files(
        {"SKILL.md": base_pkg.files["SKILL.md"] + b"\nCheck the failing test first.\n"}
    )
    base = _Side("b" * 40, base_pkg, render(base_pkg, "builtin"), {suite: tasks})
    head = _Side("h" * 40, head_pkg, render(head_pkg, "builtin"), {suite: tasks})
    return GateInputs("b" * 40, "h" * 40, "skills/repo-debugger", base, head, agent,
                      changed={"SKILL.md"})  # fmt: skip


def gate(suite: str, opts: GateOptions, ins: GateInputs, src: TrialSource) -> dict[str, Any]:
    c0, w0 = time.process_time(), time.perf_counter()
    run = run_suite(suite, opts, ins, src)
    if isinstance(src, RemoteTrials):
        src.close()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    ev = run.result.evidence
    m = run.result.metrics
    trials = src.ran
    return {
        "decision": ev.decision.outcome if ev and ev.decision else None,
        "pass_rate": {side: round(sm.pass_rate.pass_rate, 3) for side, sm in m.sides.items()},
        "states": sorted(
            f"{r.task_id}#{r.repeat_index}:{r.evaluation.state.value}" for r in run.base + run.head
        ),
        "head_rounds": len({r.repeat_index for r in run.head}),
        "trials_run": trials,
        "wall_s": round(wall, 1),
        "coordinator_cpu_ms_per_trial": round(1000 * cpu / max(trials, 1), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="the same gate locally and on a harness's docker env")
    ap.add_argument("--suite", default="regression")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--agent", default="oracle", choices=["oracle", "noop", "builtin"])
    ap.add_argument("--student", default="sim/student", help="route of --agent builtin")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--runner", default="harbor", choices=["harbor", "benchflow"])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    agent = (
        builtin_agent(a.student)
        if a.agent == "builtin"
        else AgentSpec(kind=a.agent, role="oracle" if a.agent == "oracle" else "student")
    )
    ins = inputs(a.suite, agent)
    opts = GateOptions(skill="repo-debugger", base="b", head="h", suites=(a.suite,),
                       repeat=a.repeat, impact=False)  # fmt: skip
    out: dict[str, Any] = {}
    remote = f"{a.runner}_docker"
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "local" / ".skillci"
        ctx = SimpleNamespace(state_dir=state, store=TraceStore(state))
        out["local"] = gate(a.suite, opts, ins, GateRunner(ctx, parallel=1, progress=None))  # type: ignore[arg-type]
        cls = runner_entry(a.runner).environment_class()
        env = cls("docker", Path(tmp) / a.runner / "jobs", concurrency=a.concurrency,
                  timeout=900)  # fmt: skip
        try:
            src = RemoteTrials(env, Path(tmp) / a.runner / ".skillci",
                               RemoteLimits(a.concurrency, retries=1), rounds=a.repeat)  # fmt: skip
            out[remote] = gate(a.suite, opts, ins, src)
            out[remote]["errors_retried"] = src.stats.retried
        finally:
            env.close()
    same = out["local"]["decision"] == out[remote]["decision"] and [
        s.split(":")[1] for s in out["local"]["states"]
    ] == [s.split(":")[1] for s in out[remote]["states"]]
    out["same_verdict"] = same
    out["goal_ms"] = GOAL_MS
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for side in ("local", remote):
            for k, v in out[side].items():
                print(f"{side:14} {k:30} {v}")
        print(f"{'':14} {'same_verdict':30} {same}")
    ok = same and out[remote]["coordinator_cpu_ms_per_trial"] <= GOAL_MS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
