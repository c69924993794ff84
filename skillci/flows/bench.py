"""``skillci bench``: the seed's baselines and ablations on a bundled suite (docs/design/226).

Load: the suite's tasks and the skill. Run (through :func:`skillci.flows.evalrun.run_eval`,
the trial cache and the trace store): the student without a skill, with the original
skill, and the teacher without a skill — the references every row is measured against —
plus every other arm that can run for real — the loop arms (skillci and the ablations)
through :mod:`skillci.flows.bench_loop` on a scratch repository. Decide (pure, :mod:`skillci.gate.bench`): one
row per arm with success, GCR, regression vs the original skill, tokens and cost, each
with its interval. Arms without an implementation are rows that say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import UsageError
from skillci.gate.bench import BenchRow as BenchRow  # re-exported: `bench` renders it
from skillci.gate.bench import Kind, measured_row
from skillci.gate.metrics import TrialOutcome
from skillci.runners.outcome import EvalResult

#: The seed's baselines and ablations (issue 21); ``None``: measured; else why not.
ARMS: tuple[tuple[str, Kind, str, str | None], ...] = (
    ("no-skill", "baseline", "student without a skill", None),
    ("original", "baseline", "student with the skill as it is", None),
    (
        "teacher-only",
        "baseline",
        "student with a skill the teacher writes in one shot",
        None,
    ),
    (
        "prompt-opt",
        "baseline",
        "student with a generically prompt-optimised skill",
        None,
    ),
    (
        "trajectory-only",
        "baseline",
        "student with a skill summarising the teacher's successful trajectories",
        None,
    ),
    (
        "manual",
        "baseline",
        "student with a skill a person improved by hand",
        "no person ever improved the bundled skill: every commit touching "
        "skills/repo-debugger (e08ab5e, 6aba19e, cb2792c, c6f9fe0) came from a coding "
        "session, and the human-written skills in tests/fixtures/real-skills are other skills",
    ),
    (
        "skillci",
        "baseline",
        "student with the skill after skillci's propose/gate/release loop",
        None,
    ),
    ("teacher", "baseline", "teacher without a skill (the reference ceiling)", None),
    (
        "no-teacher-diff",
        "ablation",
        "loop without the teacher run: student failures only",
        None,
    ),
    (
        "no-taxonomy",
        "ablation",
        "loop without the failure taxonomy",
        None,
    ),
    (
        "no-patch-limits",
        "ablation",
        "loop with free rewrites instead of bounded patches",
        None,
    ),
    (
        "no-regression-suite",
        "ablation",
        "loop whose gate skips the regression suite",
        None,
    ),
    (
        "no-token-budget",
        "ablation",
        "loop without the token budget",
        None,
    ),
    (
        "no-lifecycle",
        "ablation",
        "loop without the rule lifecycle (candidate/active)",
        None,
    ),
    (
        "llm-only-verification",
        "ablation",
        "loop where the teacher judges patches instead of re-running the student",
        None,
    ),
    (
        "random-patches",
        "ablation",
        "loop applying random bounded patches",
        None,
    ),
)


@dataclass(frozen=True)
class BenchOptions:
    root: Path
    home: Path
    skill: Path
    suite: str = "validation"
    student: str = "sim/student"
    teacher: str = "sim/teacher"
    repeat: int = 1
    parallel: int = 1
    opt_iterations: int = 3
    """Mutations the prompt-opt baseline tries (each costs one training-suite eval)."""
    seed: int = 0
    """Seed of the prompt-opt baseline's mutation choices."""
    arms: tuple[str, ...] = ()
    """The arms to print (empty: all); the three references always run."""
    agent: str = "builtin"
    """The student's agent in every student arm (references, generated baselines, the loop's
    propose and gate): ``builtin`` (skillci's loop on ``student``) or a registered real agent
    on the ``student`` route through the gateway; ``oracle``/``noop`` only in the reference
    and generated arms. The teacher always runs builtin: it is the reference ceiling."""
    agent_version: str | None = None
    """The real agent's installed version (None: the newest installed)."""
    train_suite: str = "discovery"
    """Where the loop arms propose (the suite whose failures drive patches) and what the
    generated baselines (teacher-only, trajectory-only, prompt-opt) learn from; never the
    suite the bench reports on."""


def arm_names() -> list[str]:
    return [a[0] for a in ARMS]


def check_arms(arms: tuple[str, ...]) -> None:
    """Refuse (exit 2) an arm that does not exist, listing the choices."""
    unknown = [a for a in arms if a not in arm_names()]
    if unknown:
        raise UsageError(
            f"unknown arm(s): {', '.join(unknown)}",
            hint="choose from: " + ", ".join(arm_names()),
        )


def outcomes(result: EvalResult) -> list[TrialOutcome]:
    """The judged trials of an eval as gate inputs (runner errors and skips left out)."""
    return [
        TrialOutcome(
            task_id=t.task_id,
            side="head",
            repeat=t.repeat_index,
            reward=min(1.0, max(0.0, t.reward if t.reward is not None else float(t.passed))),
            passed=t.passed,
            input_tokens=t.input_tokens,
            output_tokens=t.output_tokens,
            model_calls=t.model_calls,
            usd=t.usd or 0.0,
        )
        for t in result.trials
        if t.state in ("passed", "failed")
    ]


def _run(opts: BenchOptions, *, skill: Path | None, teacher: bool) -> list[TrialOutcome]:
    from skillci.flows.evalrun import EvalRequest, run_eval

    req = EvalRequest(
        root=opts.root,
        suite=opts.suite,
        skill=skill,
        model=opts.teacher if teacher else opts.student,
        role="teacher" if teacher else "student",
        agent="builtin" if teacher else opts.agent,
        agent_version=None if teacher else opts.agent_version,
        repeats=opts.repeat,
        parallel=opts.parallel,
        home=opts.home,
    )
    return outcomes(run_eval(req))


def _loop_arm(
    opts: BenchOptions, arm: str, say: Callable[[str], None]
) -> tuple[list[TrialOutcome], str]:
    """The loop arm's trials on the bench suite and its note."""
    from skillci.flows.bench_loop import run_loop

    loop = run_loop(arm, opts, say)
    return _run(opts, skill=loop.skill, teacher=False), loop.note()


def check_agent(opts: BenchOptions) -> None:
    """``opts.agent`` must be registered, and a student the loop arms can gate (builtin or a
    real agent) when a loop arm is asked for: said before any trial runs (exit 2)."""
    from skillci.agents.registry import names, real_names
    from skillci.flows.bench_loop import ABLATIONS

    if opts.agent not in names():
        raise UsageError(
            f"--agent {opts.agent!r} is not a registered agent",
            hint=f"use one of: {', '.join(names())} (skillci agents ls)",
        )
    loops = [a for a in (opts.arms or arm_names()) if a in ABLATIONS]
    if loops and opts.agent != "builtin" and opts.agent not in real_names():
        raise UsageError(
            f"--agent {opts.agent} cannot be the student of the loop arms ({', '.join(loops)})",
            hint=f"pick --arms without them (e.g. --arms original), or --agent builtin or one "
            f"of: {', '.join(real_names())}",
        )


def run_bench(
    opts: BenchOptions, say: Callable[[str], None] = lambda _line: None
) -> list[BenchRow]:
    """The rows of ``opts.arms`` (all when empty), in the seed's order (baselines, then
    ablations); ``say`` gets one progress line per step."""
    from skillci.flows.bench_baselines import GENERATORS
    from skillci.flows.bench_loop import ABLATIONS

    if opts.train_suite == opts.suite:
        raise UsageError(
            f"--train-suite {opts.train_suite} is the bench suite: generated baselines would "
            "be tuned on what they are measured on",
            hint="pick another suite for --train-suite (default: discovery)",
        )
    check_agent(opts)
    t0 = time.monotonic()
    refs: dict[str, list[TrialOutcome]] = {}
    for arm, skill, teacher in (
        ("no-skill", None, False),
        ("original", opts.skill, False),
        ("teacher", None, True),
    ):
        say(f"bench: reference {arm} on {opts.suite} ({time.monotonic() - t0:.0f}s)")
        refs[arm] = _run(opts, skill=skill, teacher=teacher)
    rows = []
    for arm, kind, title, missing in ARMS:
        if opts.arms and arm not in opts.arms:
            continue
        note = ""
        if missing is None and arm in ABLATIONS:
            say(f"bench: loop arm {arm} ({time.monotonic() - t0:.0f}s)")
            refs[arm], note = _loop_arm(opts, arm, say)
        if missing is not None:
            rows.append(
                BenchRow(arm=arm, kind=kind, title=title, status="not_implemented", reason=missing)
            )
            continue
        if arm in GENERATORS:
            say(f"bench: generated baseline {arm} ({time.monotonic() - t0:.0f}s)")
            gen = GENERATORS[arm](opts)
            if gen.skill is None:
                rows.append(
                    BenchRow(arm=arm, kind=kind, title=title, status="failed", reason=gen.reason)
                )
                continue
            refs[arm] = _run(opts, skill=gen.skill, teacher=False)
            note = "; ".join(gen.notes)
        row = measured_row(
            arm=arm,
            kind=kind,
            title=title,
            outcomes=refs[arm],
            no_skill=refs["no-skill"],
            teacher=refs["teacher"],
            original=refs["original"],
        )
        rows.append(row.model_copy(update={"note": note}))
    say(f"bench: done ({time.monotonic() - t0:.0f}s)")
    return rows


__all__ = [
    "ARMS",
    "BenchOptions",
    "arm_names",
    "check_agent",
    "check_arms",
    "outcomes",
    "run_bench",
]
