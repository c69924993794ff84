"""Build and run trials of the bundled (or scratch) tasks in a tmp state dir."""

from __future__ import annotations

from pathlib import Path

from skillci.patch.apply import apply
from skillci.patch.models import Author, DeleteRule, Patch
from skillci.providers.routes import resolve_route
from skillci.runners.base import DEFAULT_MAX_STEPS, AgentSpec, TrialSpec, plan
from skillci.runners.outcome import EvalResult
from skillci.runners.scheduler import Scheduler
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose, Task

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "evals" / "tasks"
BUNDLED = sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())
SKILL = ROOT / "skills" / "repo-debugger"


def task(task_id: str) -> Task:
    return load_task(TASKS / task_id, purpose=Purpose.final_report)


def model_agent(role: str = "student", route: str | None = None) -> AgentSpec:
    name = route or f"sim/{role}"
    return AgentSpec(
        kind="builtin",
        role=role,
        route_name=name,
        route=resolve_route(name),  # type: ignore[arg-type]
        max_steps=DEFAULT_MAX_STEPS[role],
    )


def without_rule(pkg: SkillPackage, rule_id: str) -> SkillPackage:
    """``pkg`` with one rule deleted, through the bounded patch language."""
    op = DeleteRule(rule_id=rule_id)
    return apply(pkg, Patch(failure_class="ablation", author=Author(compiler="test"), ops=[op]))


def specs(
    task_ids: list[str],
    agent: AgentSpec,
    state: Path,
    *,
    pkg: SkillPackage | None = None,
    repeats: int = 1,
    **kw: object,
) -> list[TrialSpec]:
    return plan(
        [task(t) for t in task_ids],
        agent,
        repeats=repeats,
        state_dir=state,
        skill=render(pkg, "builtin") if pkg is not None else None,
        skill_package_hash=pkg.content_hash if pkg is not None else None,
        **kw,  # type: ignore[arg-type]
    )


def run(
    task_ids: list[str],
    agent: AgentSpec,
    state: Path,
    *,
    pkg: SkillPackage | None = None,
    parallel: int = 1,
    **kw: object,
) -> EvalResult:
    return Scheduler(parallel=parallel).run(specs(task_ids, agent, state, pkg=pkg, **kw))


def passed(res: EvalResult) -> dict[str, bool]:
    return {t.task_id: t.passed for t in res.trials}
