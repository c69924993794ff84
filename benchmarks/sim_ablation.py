"""Which bundled tasks the sim student passes with the bundled skill minus each rule.

    .venv/bin/python benchmarks/sim_ablation.py [--tasks a,b] [--parallel 2] [--markdown]

Prints one row per task and one column per skill variant (full skill, no skill, each rule
removed) plus the sim teacher: ``P`` passed, ``.`` failed, then the model calls used. This
is the evidence behind the table in docs/simulator.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from skillci.patch.apply import apply
from skillci.patch.models import Author, DeleteRule, Patch
from skillci.providers.routes import resolve_route
from skillci.runners.base import AgentSpec, plan
from skillci.runners.scheduler import Scheduler
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose

ROOT = Path(__file__).resolve().parents[1]


def without_rule(pkg: SkillPackage, rule_id: str) -> SkillPackage:
    """``pkg`` with one rule deleted, through the bounded patch language."""
    op = DeleteRule(rule_id=rule_id)
    return apply(pkg, Patch(failure_class="ablation", author=Author(compiler="ablation"), ops=[op]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args()
    troot = ROOT / "evals" / "tasks"
    ids = args.tasks.split(",") if args.tasks else sorted(p.name for p in troot.iterdir())
    tasks = [load_task(troot / i, purpose=Purpose.final_report) for i in ids]
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    variants: dict[str, SkillPackage | None] = {"full": pkg, "none": None}
    for lr in pkg.rules:
        variants[f"-{lr.rule.id}"] = without_rule(pkg, lr.rule.id)
    rows: dict[str, dict[str, str]] = {}
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as state:
        for name, p in variants.items():
            agent = AgentSpec(
                kind="builtin",
                role="student",
                route_name="sim/student",
                route=resolve_route("sim/student"),
            )
            specs = plan(
                tasks,
                agent,
                repeats=1,
                state_dir=Path(state),
                skill=render(p, "builtin") if p else None,
                skill_package_hash=p.content_hash if p else None,
            )
            res = Scheduler(parallel=args.parallel).run(specs)
            rows[name] = {
                t.task_id: f"{'P' if t.passed else '.'}{t.model_calls}" for t in res.trials
            }
        teacher = AgentSpec(
            kind="builtin",
            role="teacher",
            route_name="sim/teacher",
            route=resolve_route("sim/teacher"),
            max_steps=60,
        )
        res = Scheduler(parallel=args.parallel).run(
            plan(tasks, teacher, repeats=1, state_dir=Path(state))
        )
        rows["teacher"] = {
            t.task_id: f"{'P' if t.passed else '.'}{t.model_calls}" for t in res.trials
        }
    names = list(rows)
    if args.markdown:
        print("| task | " + " | ".join(names) + " |")
        print("|---" * (len(names) + 1) + "|")
        for i in ids:
            print(f"| {i} | " + " | ".join(rows[n].get(i, "?") for n in names) + " |")
    else:
        print(f"{'task':24}" + "".join(f"{n[:15]:>16}" for n in names))
        for i in ids:
            print(f"{i:24}" + "".join(f"{rows[n].get(i, '?'):>16}" for n in names))
    print(f"\n{len(ids)} tasks x {len(names)} variants in {time.monotonic() - start:.0f}s")


if __name__ == "__main__":
    main()
