"""The pipeline's flags, preconditions and input identity (resolved before any stage runs).

Preconditions (as the seed pipeline's): the built-in harness; the task under the tasks
root; a skill under its ``environment/skills`` (``--skill`` names the one under test when
the task ships several); the run dir under
``results/compile-pipeline``. The input identity pins what determines the outcome — the
task and imported skill hashes, route fingerprints, harness, the student's config-profile
revision, skillci's version and the outcome-changing options.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from skillci import __version__
from skillci.compile.profile import ModelProfile, config_profile, profile_slug
from skillci.compile.static import Mode
from skillci.errors import TaskFormatError, UsageError
from skillci.flows.pipeline.fsio import load_skill_input
from skillci.flows.pipeline.manifest import InputIdentity, RouteIdentity
from skillci.providers.reward_model import DEFAULT_RM_URL
from skillci.providers.routes import ModelRoute, resolve_route
from skillci.skill.package import SkillPackage
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose, Task
from skillci.tasks.skillset import select_skill, skill_dirs

RESULTS_DIR = Path("results") / "compile-pipeline"
HARNESSES = {"builtin": "skillci-builtin", "skillci-builtin": "skillci-builtin"}
Say = Callable[[str], None]


@dataclass
class PipelineOptions:
    """``skillci pipeline`` flags."""

    harness: str
    model: str
    external_model: str
    task: str
    root: Path
    skill: str | None = None
    run_dir: Path | None = None
    tasks_root: Path | None = None
    repeat: int = 3
    fast_trajectories: int = 6
    rm_url: str = DEFAULT_RM_URL
    no_rm: bool = False
    max_parallel: int = 1
    deep_rounds: int = 2
    static_mode: Mode = "hybrid"
    publish: bool = True
    base: str = "main"
    dry_run: bool = False
    say: Say = field(default=lambda _m: None)


@dataclass
class Inputs:
    """Everything resolved before the first stage runs."""

    task: Task
    skill_folder: Path
    package: SkillPackage
    student: ModelRoute
    compiler: ModelRoute
    harness: str
    profile: ModelProfile
    identity: InputIdentity


# ---------------------------------------------------------------------------- preconditions


def _skill_folder(task: Task, name: str | None) -> Path:
    """The skill under test among the task's skills (``--skill`` when there are several)."""
    skills = task.root / "environment" / "skills"
    if not skill_dirs(skills):
        raise TaskFormatError(
            "no skill under environment/skills; the pipeline compiles one of the task's skills",
            file=skills,
            hint="a SkillsBench task ships its skills at environment/skills/<name>/SKILL.md",
        )
    return select_skill(skills, name).under_test


def run_dir_for(opts: PipelineOptions) -> Path:
    base = (opts.root / RESULTS_DIR).resolve()
    if opts.run_dir is None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        return base / f"{opts.task}-{profile_slug(opts.model)}-{stamp}"
    rd = (opts.run_dir if opts.run_dir.is_absolute() else opts.root / opts.run_dir).resolve()
    if base not in rd.parents:
        raise UsageError(
            f"--run-dir must lie under {RESULTS_DIR}/ (got {opts.run_dir})",
            hint=f"pass --run-dir {RESULTS_DIR}/<run-id>",
        )
    return rd


def resolve_inputs(opts: PipelineOptions) -> Inputs:
    harness = HARNESSES.get(opts.harness)
    if harness is None:
        raise UsageError(
            f"harness {opts.harness!r} cannot run here",
            hint="use --harness builtin (the local runner); BenchFlow harnesses such as "
            "opencode need the benchflow runner",
        )
    tasks_root = opts.tasks_root or opts.root / "evals" / "tasks"
    tdir = tasks_root / opts.task
    if not tdir.is_dir():
        raise TaskFormatError(
            f"no task {opts.task!r} under {tasks_root}",
            hint="pass a task id from evals/tasks (or --tasks-root)",
        )
    task = load_task(tdir, purpose=Purpose.optimize)
    folder = _skill_folder(task, opts.skill)
    try:
        rel = folder.resolve().relative_to(opts.root.resolve()).as_posix()
    except ValueError:
        rel = folder.as_posix()
    pkg, _ = load_skill_input(folder, model=opts.model, harness=harness, source=rel)
    student = resolve_route(opts.model)
    compiler = resolve_route(opts.external_model)
    profile = config_profile(opts.model, student, harness)
    identity = InputIdentity(
        task=task.id,
        task_hash=task.content_hash,
        skill=pkg.manifest.name,
        skill_source=rel,
        skill_hash=pkg.content_hash,
        student=RouteIdentity(route=opts.model, fingerprint=student.fingerprint()),
        compiler=RouteIdentity(route=opts.external_model, fingerprint=compiler.fingerprint()),
        harness=harness,
        profile_hash=profile.revision,
        skillci_version=__version__,
        options={
            "repeat": opts.repeat,
            "fast_trajectories": opts.fast_trajectories,
            "reward_model": not opts.no_rm,
            "deep_rounds": opts.deep_rounds,
            "static_mode": opts.static_mode,
        },
    )
    return Inputs(task, folder, pkg, student, compiler, harness, profile, identity)


__all__ = [
    "HARNESSES",
    "RESULTS_DIR",
    "Inputs",
    "PipelineOptions",
    "Say",
    "resolve_inputs",
    "run_dir_for",
]
