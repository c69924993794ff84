"""The options several commands share, declared once as ``Annotated`` aliases.

A command takes them as ``repo: RepoOpt = Path(".")``: the alias carries the flag and its
help, the command keeps its own default. The gate's flags (``skillci gate``, ``review``,
``evals plan|run``) come from here, so they read the same everywhere. Only typer command
modules import this (it imports typer); the light path of ``trace ls`` does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import skillci.flows.plugins as plugins
from skillci.cli.choices import Forge, GateRerun, SandboxPolicy

if TYPE_CHECKING:
    from skillci.flows.context import RepoContext
    from skillci.flows.gate import GateOptions
    from skillci.flows.remote import RunnerOptions

RepoOpt = Annotated[Path, typer.Option("--repo", help="Repository root (default: current dir).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
ForgeOpt = Annotated[Forge | None, typer.Option("--forge", help=plugins.forge_help())]

SandboxOpt = Annotated[
    SandboxPolicy | None,
    typer.Option(
        "--sandbox",
        help="required: trials run sandboxed or not at all; auto: bubblewrap if it works, "
        "else only skillci's bundled tasks (unsandboxed); none: no sandbox, you accept the "
        "risk. Default: $SKILLCI_SANDBOX, else required under CI, else auto.",
    ),
]

# ---------------------------------------------------------------- the gate's flags

SkillOpt = Annotated[
    str,
    typer.Option(
        "--skill",
        help="Skill folder or name; 'auto' (or none): the one skill base..head changes, or "
        "the repository's only skill.",
    ),
]
BaseOpt = Annotated[str, typer.Option("--base", help="Base ref.")]
HeadOpt = Annotated[str, typer.Option("--head", help="Head ref (the candidate).")]
SuitesOpt = Annotated[
    str,
    typer.Option(
        "--suites", help="Comma-separated suites (default: what the skill's metadata asks for)."
    ),
]
RepeatOpt = Annotated[int, typer.Option("--repeat", min=1, help="Repeats per task (max rounds).")]
GateRerunOpt = Annotated[
    GateRerun,
    typer.Option(
        "--rerun",
        help="errors: reuse complete trials, re-run failed measurements (the default; a base "
        "side that is not comparable with head is re-run once by itself); base: re-run "
        "every base trial; all: re-run every trial.",
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Student route (default: the one the PR's proposal was made for, else the "
        "skill's target_runtime.model, else sim/student; the choice is printed).",
    ),
]
TeacherOpt = Annotated[
    str | None,
    typer.Option(
        "--teacher",
        help="Also run this teacher route and the student without any skill (cached), for "
        "the gap closure rate and teacher trajectories in the report.",
    ),
]
ParallelOpt = Annotated[int, typer.Option("--parallel", min=1, help="Trials at once.")]
NoSeqOpt = Annotated[
    bool, typer.Option("--no-sequential", help="Run every round (no sequential early stop).")
]
AgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        help=plugins.agent_help(),
    ),
]
AgentVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--agent-version", help="Real agent version (default: target_runtime's, else newest)."
    ),
]
NoImpactOpt = Annotated[bool, typer.Option("--no-impact", help="Re-run every task on head.")]
SameOpt = Annotated[
    str | None, typer.Option("--same-instance", help="Task the patch was proposed for.")
]


def split_csv(value: str) -> tuple[str, ...]:
    """``"a, b,,c"`` -> ``("a", "b", "c")`` (the value of ``--suites``)."""
    return tuple(s.strip() for s in value.split(",") if s.strip())


def gate_from_flags(
    repo: Path,
    *,
    suites: str,
    model: str | None,
    no_sequential: bool,
    no_impact: bool,
    same: str | None,
    **rest: Any,
) -> tuple[RepoContext, GateOptions]:
    """The repository and the gate options of the gate flags above (``skillci gate``,
    ``evals plan|run``): :func:`skillci.flows.gate.gate_options` fills skill and suites.
    ``rest``: ``skill``, ``base``, ``head`` and other :class:`GateOptions` fields."""
    from skillci.flows.context import RepoContext
    from skillci.flows.gate import gate_options

    ctx = RepoContext.open(repo)
    opts = gate_options(
        ctx,
        suites=split_csv(suites),
        student=model,
        sequential=not no_sequential,
        impact=not no_impact,
        same_instance_task=same,
        **rest,
    )
    return ctx, opts


#: Help of every ``--judge`` option (eval run, gate, review, evals, judge calibrate).
JUDGE_HELP = (
    "Model route judging rubric graders (tests/graders.toml). Default sim/judge: a LEXICAL "
    "simulator (word overlap), for wiring, not evidence."
)
JudgeOpt = Annotated[str | None, typer.Option("--judge", help=JUDGE_HELP)]

# ---------------------------------------------------------------- where trials run (design 412)

RunnerOpt = Annotated[
    str | None,
    typer.Option(
        "--runner",
        help=plugins.trial_runner_help(),
    ),
]
EnvOpt = Annotated[
    str | None,
    typer.Option(
        "--env",
        help=plugins.env_help(),
    ),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--concurrency", help="With a remote --runner: trials in flight at once (4)."),
]
MaxTrialsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-trials",
        help="With a remote --runner: trials submitted at most, retries and look-ahead included.",
    ),
]
MaxUsdOpt = Annotated[
    float | None,
    typer.Option(
        "--max-usd",
        min=0,
        help="With a remote --runner: no trial is submitted once the returned trials cost this "
        "many dollars (an unknown cost counts as the dearest known one).",
    ),
]
HarborOpt = Annotated[
    str | None,
    typer.Option("--harbor", help="With --runner harbor: Harbor's harbor ($SKILLCI_HARBOR)."),
]


def remote_from_flags(
    runner: str | None,
    env: str | None,
    concurrency: int | None = None,
    max_trials: int | None = None,
    max_usd: float | None = None,
    harbor: str | None = None,
) -> RunnerOptions | None:
    """The runner flags above, checked (exit 2): None for local trials."""
    from skillci.flows.remote import runner_options

    return runner_options(
        runner, env, concurrency=concurrency, max_trials=max_trials, max_usd=max_usd,
        harbor=harbor,
    )  # fmt: skip
