"""``compile deep run|resume`` wiring: the task, the student's rollouts, the compiler.

Builds the :class:`~skillci.flows.pipeline.deep_stage.DeepContext` of a new Deep run (from the
skill, its baseline traces and the task) or of an existing one (from ``state.json``: the
task must be unchanged); the state machine itself is ``skillci.flows.pipeline.deep_stage``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillci.analyze.modelio import ModelCall
from skillci.compile.deep import REGRESSION_TOLERANCE
from skillci.errors import InvalidInputError
from skillci.flows.pipeline.deep_stage import (
    DeepConfig,
    DeepContext,
    DeepState,
    init_state,
    load_state,
)
from skillci.runners.slots import Progress, plan_slots, run_slots
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord, SkillRef


@dataclass
class DeepRequest:
    """What ``compile deep run`` was asked."""

    skill: Path
    output: Path
    model: str
    traces: str | Path | None = None
    student: str | None = None
    task: Path | None = None
    tasks_root: Path = Path("evals/tasks")
    rounds: int = 3
    repeat: int = 3
    max_parallel: int = 1
    budget: int | None = None
    tolerance: float = REGRESSION_TOLERANCE
    scorer: Literal["rubric", "model"] = "rubric"
    reuse_from: tuple[Path, ...] = ()
    baseline: list[tuple[str, RunRecord]] | None = None
    progress: Progress | None = None


def _compiler_call(model: str, output: Path) -> ModelCall | None:
    from skillci.providers.routes import resolve_route

    route = resolve_route(model)
    if route.is_sim:
        return None
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    client = ModelClient(
        model, route, cache=ResponseCache(output / ".cache" / "responses"), use_cache=True
    )
    return client.complete


def _rollout_runner(
    task_dir: Path,
    student: str,
    repeat: int,
    state_dir: Path,
    parallel: int,
    reuse_from: tuple[Path, ...],
    progress: Progress | None,
) -> Callable[[SkillPackage, Path], list[RunRecord]]:
    from skillci.runners.base import builtin_agent
    from skillci.tasks.loader import load_task
    from skillci.tasks.models import Purpose

    task = load_task(task_dir, purpose=Purpose.optimize)
    agent = builtin_agent(student)

    def run(pkg: SkillPackage, dest: Path) -> list[RunRecord]:
        slots = plan_slots(task, agent, pkg, repeat, dest, state_dir)
        return run_slots(
            slots, parallel=parallel, reuse_from=[*reuse_from, dest.parent], progress=progress
        )

    return run


def start_deep(req: DeepRequest) -> tuple[DeepContext, DeepState]:
    """Build the config and context of a new (or same-config) Deep run."""
    from skillci.flows.pipeline.fsio import load_records, load_skill_input
    from skillci.tasks.loader import dir_hash

    pkg, _ = load_skill_input(req.skill)
    pairs = req.baseline
    if pairs is None and req.traces is not None:
        ident = SkillRef(
            name=pkg.manifest.name, version=pkg.manifest.version, content_hash=pkg.content_hash
        )
        pairs = load_records(req.traces, skill=ident)
    recs = [r for _, r in pairs or []]
    tasks = {r.task_id for r in recs}
    if req.task is not None:
        task_dir = req.task if req.task.is_dir() else req.tasks_root / str(req.task)
    elif len(tasks) == 1:
        task_dir = req.tasks_root / next(iter(tasks))
    else:
        raise InvalidInputError(
            "cannot tell which task the rollouts run",
            hint="pass --task NAME (or traces of exactly one task)",
        )
    if not task_dir.is_dir():
        raise InvalidInputError(f"no task dir {task_dir}", hint="pass --task or --tasks-root")
    routes = {r.model.route for r in recs}
    student = req.student or (next(iter(routes)) if len(routes) == 1 else "sim/student")
    config = DeepConfig(
        task_dir=str(task_dir.resolve()),
        task_hash=dir_hash(task_dir.resolve()),
        student=student,
        compiler=req.model,
        repeat=req.repeat,
        rounds=req.rounds,
        budget=req.budget or pkg.manifest.token_budget.bootstrap,
        max_added_tokens=pkg.manifest.patch_limits.max_added_tokens,
        tolerance=req.tolerance,
        max_parallel=req.max_parallel,
        input_hash=pkg.content_hash,
        scorer=req.scorer,
    )
    req.output.mkdir(parents=True, exist_ok=True)
    state = init_state(req.output, config, pkg, pairs)
    return _context(req.output, config, req.reuse_from, req.progress), state


def _context(
    output: Path, config: DeepConfig, reuse_from: tuple[Path, ...], progress: Progress | None
) -> DeepContext:
    runner = _rollout_runner(
        Path(config.task_dir),
        config.student,
        config.repeat,
        output,
        config.max_parallel,
        reuse_from,
        progress,
    )
    call = _compiler_call(config.compiler, output)
    return DeepContext(
        output,
        runner,
        call,
        progress,
        score_call=call if config.scorer == "model" else None,
        model=config.compiler,
    )


def resume_deep(
    output: Path, *, reuse_from: tuple[Path, ...] = (), progress: Progress | None = None
) -> tuple[DeepContext, DeepState]:
    """Context and state of an existing Deep run (its task must be unchanged)."""
    from skillci.tasks.loader import dir_hash

    state = load_state(output)
    task_dir = Path(state.config.task_dir)
    if not task_dir.is_dir() or dir_hash(task_dir) != state.config.task_hash:
        raise InvalidInputError(
            "the task this Deep run rolls out on changed or is gone",
            file=task_dir,
            hint="start a new Deep run with `skillci compile deep run`",
        )
    return _context(output, state.config, reuse_from, progress), state


__all__ = ["DeepRequest", "resume_deep", "start_deep"]
