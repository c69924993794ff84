"""The baseline arms of ``skillci bench`` that need a generated skill (docs/design/245).

Each generator writes a real skill package under ``<home>/bench/<arm>/<hash>/`` and
returns its path; ``run_bench`` then evaluates it like any other arm (``run_eval``: trial
cache, trace store, sandbox). Generators read only the *training* suite
(``BenchOptions.train_suite``, ``discovery`` by default), never the suite the bench
reports on. Model output and trajectory-derived text reach a skill only as an
``add_rule`` patch that passed the patch guard and skill lint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillci.compile.baselines import (
    ONE_SHOT_RULE,
    TRAJECTORY_RULE,
    OneShotAnswer,
    bare_package,
    one_shot_messages,
    parse_one_shot,
    rule_patch,
    sim_one_shot,
    trajectory_steps,
)
from skillci.patch.apply import apply_detailed
from skillci.patch.guard import UntrustedText, guard
from skillci.patch.models import Patch
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage

if TYPE_CHECKING:
    from skillci.flows.bench import BenchOptions


@dataclass(frozen=True)
class Generated:
    """A generated skill (``skill``), or why there is none (``reason``)."""

    arm: str
    skill: Path | None
    reason: str = ""
    notes: tuple[str, ...] = ()


def _fail(arm: str, reason: str) -> Generated:
    return Generated(arm=arm, skill=None, reason=reason)


def checked(
    before: SkillPackage, patch: Patch, untrusted: Sequence[UntrustedText | str] = ()
) -> tuple[SkillPackage | None, str]:
    """``patch`` applied to ``before`` when the guard passes it and lint finds no error;
    else None and why."""
    applied = apply_detailed(before, patch)
    report = guard(applied, untrusted)
    if report.verdict != "pass":
        first = report.findings[0]
        return None, f"the patch guard said {report.verdict}: {first.code} ({first.message})"
    errors = [f for f in lint(applied.after).findings if f.severity == "error"]
    if errors:
        return None, f"the generated skill fails lint: {errors[0].code} {errors[0].message}"
    return applied.after, ""


def write(opts: BenchOptions, arm: str, pkg: SkillPackage) -> Path:
    """``pkg`` under ``<home>/bench/<arm>/<content hash>/<skill name>`` (idempotent)."""
    out = opts.home / "bench" / arm / pkg.content_hash[:16] / opts.skill.name
    pkg.to_dir(out)
    return out


def land(
    opts: BenchOptions,
    arm: str,
    before: SkillPackage,
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    notes: Sequence[str] = (),
) -> Generated:
    """Apply ``patch`` to ``before``, guard and lint it, write it under the bench dir."""
    after, reason = checked(before, patch, untrusted)
    if after is None:
        return _fail(arm, reason)
    return Generated(arm=arm, skill=write(opts, arm, after), notes=tuple(notes))


def _train_instructions(opts: BenchOptions) -> list[str]:
    from skillci.tasks.loader import load_suite_tasks
    from skillci.tasks.models import Purpose
    from skillci.tasks.suites import load_suite

    suite = load_suite(opts.train_suite, opts.root, purpose=Purpose.optimize)
    return [t.instruction for t in load_suite_tasks(suite, opts.root, purpose=Purpose.optimize)]


def _ask_teacher(opts: BenchOptions, instructions: list[str]) -> tuple[OneShotAnswer, str]:
    """The one-shot skill from the teacher route (the documented sim writer for sim routes)."""
    from skillci.analyze.modelio import ModelExchange, ask_until_valid, first_line
    from skillci.providers.routes import resolve_route

    route = resolve_route(opts.teacher)
    if route.is_sim:
        return sim_one_shot(instructions), "sim"
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    client = ModelClient(
        opts.teacher,
        route,
        cache=ResponseCache(opts.home / "cache" / "responses"),
        use_cache=True,
    )
    exchange = ModelExchange(
        kind="bench-one-shot", model=opts.teacher, messages=one_shot_messages(instructions)
    )
    answer = ask_until_valid(
        client.complete,
        exchange,
        parse_one_shot,
        attempts=2,
        failure="no valid one-shot skill",
        reason_of=first_line,
        hint="try another --teacher route",
    )
    return answer, "llm"


def teacher_only(opts: BenchOptions) -> Generated:
    """The teacher writes the skill in one shot from the training suite's task descriptions."""
    from skillci.errors import ModelOutputError

    instructions = _train_instructions(opts)
    try:
        answer, how = _ask_teacher(opts, instructions)
    except ModelOutputError as exc:
        return _fail("teacher-only", str(exc).splitlines()[0])
    original = SkillPackage.from_dir(opts.skill)
    before = bare_package(
        original,
        f"Written in one shot by {opts.teacher} from the {len(instructions)} task "
        f"descriptions of suite `{opts.train_suite}` (skillci bench, teacher-only arm). "
        f"Follow rule `{ONE_SHOT_RULE}`.",
    )
    patch = rule_patch(
        ONE_SHOT_RULE,
        answer.steps,
        answer.avoid,
        rationale=f"one-shot skill from {len(instructions)} task descriptions",
        compiler="sim-one-shot" if how == "sim" else "one-shot",
        model=None if how == "sim" else opts.teacher,
    )
    untrusted = [UntrustedText(text=i, source="task instruction") for i in instructions]
    return land(opts, "teacher-only", before, patch, untrusted)


def trajectory_only(opts: BenchOptions) -> Generated:
    """The original skill plus one rule summarising the teacher's successful trajectories
    on the training suite (observable milestones only: no student, no taxonomy)."""
    from skillci.analyze.trajectory import Trajectory
    from skillci.flows.evalrun import EvalRequest, run_eval
    from skillci.trace.store import TraceStore

    result = run_eval(
        EvalRequest(
            root=opts.root,
            suite=opts.train_suite,
            skill=None,
            model=opts.teacher,
            role="teacher",
            repeats=opts.repeat,
            parallel=opts.parallel,
            home=opts.home,
        )
    )
    store = TraceStore(opts.home)
    runs = [t.run_id for t in result.trials if t.passed and t.run_id]
    trajectories = [Trajectory.from_record(store.get(r)) for r in runs]
    steps = trajectory_steps(trajectories)
    if not steps:
        return _fail(
            "trajectory-only",
            f"the teacher has no successful trajectory on suite {opts.train_suite}",
        )
    patch = rule_patch(
        TRAJECTORY_RULE,
        [s for s, _n in steps],
        [],
        rationale=f"what {len(runs)} successful teacher trajectories on suite "
        f"{opts.train_suite} did",
        compiler="trajectory-summary",
        model=None,
        supporting_runs=runs,
    )
    notes = [f"{s}: {n}/{len(runs)} trajectories" for s, n in steps]
    return land(opts, "trajectory-only", SkillPackage.from_dir(opts.skill), patch, (), notes)


def prompt_opt(opts: BenchOptions) -> Generated:
    """The original skill after seeded hill climbing over bounded rule-text mutations,
    scored only by the student's pass rate (then tokens) on the training suite."""
    from skillci.compile.prompt_opt import Score, hill_climb
    from skillci.flows.bench import outcomes
    from skillci.flows.evalrun import EvalRequest, run_eval

    def score(pkg: SkillPackage) -> Score:
        trials = outcomes(
            run_eval(
                EvalRequest(
                    root=opts.root,
                    suite=opts.train_suite,
                    skill=write(opts, "prompt-opt", pkg),
                    model=opts.student,
                    agent=opts.agent,
                    agent_version=opts.agent_version,
                    repeats=opts.repeat,
                    parallel=opts.parallel,
                    home=opts.home,
                )
            )
        )
        if not trials:
            return Score(0.0, 0.0)
        passed = sum(t.passed for t in trials) / len(trials)
        known = [
            t.input_tokens + t.output_tokens
            for t in trials
            if t.input_tokens is not None and t.output_tokens is not None
        ]
        tokens = sum(known) / len(known) if known else 0.0  # no count known: no token penalty
        return Score(passed, -tokens)

    best, best_score, history = hill_climb(
        SkillPackage.from_dir(opts.skill),
        score,
        checked,
        iterations=opts.opt_iterations,
        seed=opts.seed,
    )
    notes = [
        f"{h.iteration}: {h.mutation}: "
        + (
            f"train pass {h.score.pass_rate:.0%}, {-h.score.neg_tokens:.0f} tokens/trial"
            if h.score is not None
            else h.note
        )
        + (" (kept)" if h.accepted else "")
        for h in history
    ]
    del best_score
    return Generated(arm="prompt-opt", skill=write(opts, "prompt-opt", best), notes=tuple(notes))


#: arm id -> generator of its skill.
GENERATORS: dict[str, Callable[[BenchOptions], Generated]] = {
    "teacher-only": teacher_only,
    "trajectory-only": trajectory_only,
    "prompt-opt": prompt_opt,
}

__all__ = [
    "GENERATORS",
    "Generated",
    "checked",
    "land",
    "prompt_opt",
    "teacher_only",
    "trajectory_only",
    "write",
]
