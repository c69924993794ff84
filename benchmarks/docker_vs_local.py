"""The same trials under the local (bubblewrap) and the Docker runner: verdicts and times.

    eval "$(bash scripts/ci_docker.sh start)"
    .venv/bin/python benchmarks/docker_vs_local.py [--agents oracle,noop,sim] [--tasks a,b]

Prints one row per (agent, task): the state under each runner, whether they agree, and the
wall time of each trial; then per-agent totals. The sim rows use sim/student with the
bundled repo-debugger skill (seed 0). Exit code 1 when any verdict differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from skillci.providers.routes import resolve_route
from skillci.runners.base import DEFAULT_MAX_STEPS, AgentSpec, plan
from skillci.runners.scheduler import Scheduler
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "evals" / "tasks"


def agent(kind: str) -> AgentSpec:
    if kind == "oracle":
        return AgentSpec(kind="oracle", role="oracle")
    if kind == "noop":
        return AgentSpec(kind="noop", role="student")
    return AgentSpec(
        kind="builtin",
        role="student",
        route_name="sim/student",
        route=resolve_route("sim/student"),
        max_steps=DEFAULT_MAX_STEPS["student"],
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default="oracle,noop,sim")
    ap.add_argument("--tasks", default="")
    a = ap.parse_args()
    ids = (
        a.tasks.split(",")
        if a.tasks
        else sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())
    )
    tasks = [load_task(TASKS / t, purpose=Purpose.final_report) for t in ids]
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    disagree = 0
    print(
        f"{'agent':6} {'task':24} {'local':8} {'docker':8} {'same':4} {'local s':>8} {'docker s':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.agents.split(","):
            times = {"auto": 0.0, "docker": 0.0}
            rows: dict[str, dict[str, tuple[str, float]]] = {}
            for sandbox in ("auto", "docker"):
                specs = plan(
                    tasks,
                    agent(kind),
                    repeats=1,
                    state_dir=Path(tmp) / f"{kind}-{sandbox}",
                    skill=render(pkg, "builtin") if kind == "sim" else None,
                    skill_package_hash=pkg.content_hash if kind == "sim" else None,
                    sandbox=sandbox,  # type: ignore[arg-type]
                )
                for t in Scheduler(parallel=1).run(specs).trials:
                    rows.setdefault(t.task_id, {})[sandbox] = (t.state, t.wall_time_sec)
                    times[sandbox] += t.wall_time_sec
            for tid, r in rows.items():
                same = r["auto"][0] == r["docker"][0]
                disagree += not same
                print(
                    f"{kind:6} {tid:24} {r['auto'][0]:8} {r['docker'][0]:8} {'yes' if same else 'NO':4} "
                    f"{r['auto'][1]:8.2f} {r['docker'][1]:8.2f}"
                )
            n = len(rows)
            print(
                f"{kind:6} {'TOTAL (' + str(n) + ' trials)':24} {'':8} {'':8} {'':4} "
                f"{times['auto']:8.1f} {times['docker']:8.1f}"
            )
    print(f"{disagree} disagreement(s)")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
