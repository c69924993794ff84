"""Real agents as students: a skillci trial vs the same agent run bare, per agent.

    SKILLCI_AGENTS_DIR=~/.cache/skillci-tests/agents \\
      .venv/bin/python benchmarks/real_agents.py [--agents claude-code,codex] [--n 3]

Both sides run the installed agent CLI on the bundled task cfg-log-level with the bundled
skill repo-debugger, against the scripted competent model (tests/fakes/scripted_agents.py)
on loopback behind skillci's gateway (the only thing that speaks the agents' formats):

- trial: ``skillci eval run --agent NAME`` (workspace from the task template, skill
  installed, fresh HOME, bubblewrap sandbox, verifier, redacted record);
- bare: the same CLI and command line as a host subprocess in a prepared copy of the
  workspace with the skill installed and the same environment — no sandbox, verifier or
  record.

Prints per agent the median wall times and their ratio (goal <= 1.2x), the model calls the
record holds vs the calls the endpoint saw (equal), and the skill-load events in the record
vs the skill loads the scripted model asked for (one per trial).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from skillci.agents.headless import agent_env, install_skills
from skillci.agents.install import resolve
from skillci.agents.registry import adapter
from skillci.flows.evalrun import EvalRequest, run_eval
from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway
from skillci.providers.routes import ModelRoute
from skillci.runners.local import prepare_workspace
from skillci.runners.sandbox import base_env
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.models import RunRecord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_agents import solve_cfg_log_level

ROOT = Path(__file__).resolve().parents[1]
TASK, SKILL = "cfg-log-level", ROOT / "skills" / "repo-debugger"
KEY_ENV = "SKILLCI_BENCH_SCRIPTED_KEY"


def route_for(fake: FakeOpenAI) -> dict[str, object]:
    return {
        "model": "openai/scripted",
        "api_base": fake.base_url,
        "api_key_env": KEY_ENV,
        "timeout": 30,
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
    }


def trial(name: str, fake: FakeOpenAI, tmp: Path) -> tuple[float, int, int, int, str]:
    """One trial: wall, calls recorded, calls the endpoint saw, skill loads, state."""
    seen = len(fake.requests)
    req = EvalRequest(root=ROOT, tasks=[TASK], skill=SKILL, agent=name, model="scripted", home=tmp)
    start = time.perf_counter()
    res = run_eval(req)
    wall = time.perf_counter() - start
    [t] = res.trials
    record = RunRecord.model_validate_json((Path(t.trial_dir) / "record.json").read_text())
    loads = sum(1 for e in record.events if e.kind == "skill_load")
    return wall, record.cost.model_calls, len(fake.requests) - seen, loads, t.state


def bare(name: str, fake: FakeOpenAI, tmp: Path) -> tuple[float, int]:
    """The agent CLI alone: wall and the calls the endpoint saw."""
    a, exe = adapter(name), resolve(name).exe
    task = load_task(ROOT / "evals" / "tasks" / TASK, purpose=Purpose.optimize)
    ws, home = tmp / "ws", tmp / "home"
    prepare_workspace(task.environment_dir, ws)
    install_skills(ws, a.skills_dir, [render(SkillPackage.from_dir(SKILL), "folder")])
    route = ModelRoute.model_validate(route_for(fake))
    seen = len(fake.requests)
    with Gateway(ModelClient("scripted", route)) as gw:
        env = base_env(agent_env(a, home, gw, "scripted"))
        argv = a.command(str(exe), task.instruction, "scripted", str(ws))
        start = time.perf_counter()
        subprocess.run(
            argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600
        )
        wall = time.perf_counter() - start
    return wall, len(fake.requests) - seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default="claude-code,codex")
    ap.add_argument("--n", type=int, default=3)
    args = ap.parse_args()
    os.environ[KEY_ENV] = "bench-route-key"
    print(f"task {TASK}, skill {SKILL.name}, {args.n} runs each, load {os.getloadavg()[0]:.2f}")
    print(
        f"{'agent':<12} {'version':<9} {'trial s':>8} {'bare s':>7} {'ratio':>6}  calls rec/seen  loads  states"
    )
    for name in args.agents.split(","):
        with FakeOpenAI([solve_cfg_log_level]) as fake, tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            routes = tmp / "routes.json"
            routes.write_text(
                json.dumps({"schema_version": 1, "routes": {"scripted": route_for(fake)}})
            )
            os.environ["SKILLCI_PROVIDER_ROUTES"] = str(routes)
            trials = [trial(name, fake, tmp / f"state-{i}") for i in range(args.n)]
            bares = [bare(name, fake, tmp / f"bare-{i}") for i in range(args.n)]
            shutil.rmtree(tmp, ignore_errors=True)
        tw = statistics.median(t[0] for t in trials)
        bw = statistics.median(b[0] for b in bares)
        rec, saw = sum(t[1] for t in trials), sum(t[2] for t in trials)
        loads = sum(t[3] for t in trials)
        states = ",".join(sorted({t[4] for t in trials}))
        print(
            f"{name:<12} {resolve(name).version:<9} {tw:8.2f} {bw:7.2f} {tw / bw:5.2f}x"
            f"  {rec:>5}/{saw:<5}     {loads}/{args.n}  {states}"
            f"  (bare calls {sum(b[1] for b in bares)})"
        )


if __name__ == "__main__":
    main()
