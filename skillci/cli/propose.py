"""``skillci propose``: diagnose a failing task, compile a bounded patch, open a PR."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from skillci.cli.choices import Forge, ProposeTarget
from skillci.cli.options import (
    AgentOpt,
    AgentVersionOpt,
    ConcurrencyOpt,
    EnvOpt,
    HarborOpt,
    MaxTrialsOpt,
    MaxUsdOpt,
    RunnerOpt,
    SandboxOpt,
    remote_from_flags,
)
from skillci.cli.output import console, emit_json
from skillci.errors import InvalidInputError, ModelOutputError
from skillci.flows.context import RepoContext
from skillci.flows.plugins import forge_help, use_policy
from skillci.flows.propose import (
    DEFAULT_FALLBACK,
    FALLBACKS,
    Fallback,
    ProposeOptions,
    ProposeOutcome,
    propose,
    propose_suite_flow,
    rebase_policy,
    suite_tasks,
)

if TYPE_CHECKING:
    from skillci.flows.remote import RunnerOptions


def _show(o: ProposeOutcome) -> None:
    p = o.proposal
    console.print(f"[bold]{p.task_id or '?'}[/bold]: {p.status} — {p.reason}", highlight=False)
    if p.diagnosis is not None:
        d = p.diagnosis
        console.print(
            f"  diagnosis: {d.failure_class.value} (confidence {d.confidence:.2f}, "
            f"compilable: {d.skill_compilable})",
            highlight=False,
        )
    if p.upgrade_path is not None:
        console.print(f"  not skill-compilable: upgrade path {p.upgrade_path.value} (no PR opened)")
    if p.before is not None:
        after = f" -> after {p.after.passed}/{p.after.total}" if p.after is not None else ""
        console.print(f"  same instance: before {p.before.passed}/{p.before.total}{after}")
    for failure in p.compiler_failures:
        console.print(f"  [red]compiler failed[/red]: {failure}", highlight=False)
    if p.fallback_used is not None:
        console.print(
            f"  [yellow]fallback[/yellow]: the patch was written by the {p.fallback_used} "
            "compiler (--fallback template), not by the model",
            highlight=False,
        )
    elif p.status == "compiler_failed":
        console.print(
            "  no fallback (--fallback none, the default): pass --fallback template to "
            "propose the template compiler's patch instead",
            highlight=False,
        )
    console.print(f"  {o.message}", highlight=False)


def _describe(
    ctx: RepoContext,
    skill: str,
    model: str,
    base: str,
    iterations: int,
    json_out: bool,
    agent: str | None = None,
    agent_version: str | None = None,
) -> int:
    from skillci.flows.describe import propose_description

    out = propose_description(
        ctx,
        skill,
        model=model,
        base=base,
        iterations=iterations,
        agent=agent,
        agent_version=agent_version,
    )
    if json_out:
        emit_json(
            {
                "target": "description",
                "action": out.action,
                "message": out.message,
                "pr": out.pr.number if out.pr else None,
                "branch": out.branch,
                "patch_id": out.patch.pid if out.patch else None,
                "search": out.search,
            }
        )
        return 0
    found = out.search
    if found.decided_by == "agent":
        console.print(
            f"decided in {found.agent}@{found.agent_version} (its skill loads) on {found.model}",
            highlight=False,
        )
    for s in out.search.steps:
        h, t = s.held_out, s.train
        kept = "  (kept)" if s.iteration == out.search.best else ""
        console.print(
            f"iteration {s.iteration}: train {t.queries_held}/{t.queries}, held-out "
            f"{h.queries_held}/{h.queries}{kept}",
            highlight=False,
        )
    console.print(out.message, highlight=False)
    return 0


_FORGE_HELP = forge_help()

app = typer.Typer(add_completion=False)


GUARD_MODEL_OPT = typer.Option(
    None,
    "--guard-model",
    metavar="ROUTE",
    help="A model route (e.g. sim/guard, local/guard-probe) asked for a second opinion on each "
    "patch's free text (repeatable: each route asked, any caution counts); caution labels the "
    "PR needs-approval, never undoes the guard's rejection.",
)


@app.command("propose")
def propose_cmd(
    task: list[str] = typer.Option([], "--task", help="Task id(s) under evals/tasks."),
    target: ProposeTarget = typer.Option(
        "tasks",
        "--target",
        help="tasks: patch rules from failing trials; description: optimise the SKILL.md "
        "description on the trigger suite (60/40 train/held-out, best on held-out).",
    ),
    iterations: int = typer.Option(
        5, "--iterations", min=1, max=5, help="Candidate descriptions (--target description)."
    ),
    suite: str | None = typer.Option(
        None, "--suite", help="Propose for every failing task of a suite."
    ),
    skill: str = typer.Option(
        "", "--skill", help="Skill folder or name (default: the repository's only skill)."
    ),
    model: str = typer.Option("sim/student", "--model", help="Student route."),
    agent: AgentOpt = None,
    agent_version: AgentVersionOpt = None,
    teacher: str = typer.Option("sim/teacher", "--teacher", help="Teacher route."),
    compiler: str = typer.Option(
        "template", "--compiler", help="'template' or a model route (LLM compiler)."
    ),
    fallback: str = typer.Option(
        DEFAULT_FALLBACK,
        "--fallback",
        help="When a model --compiler gives no valid patch: 'none' (default: no PR, exit 4) "
        "or 'template' (the template compiler's patch, said on the console and in the PR).",
    ),
    guard_model: list[str] | None = GUARD_MODEL_OPT,
    repeat: int = typer.Option(1, "--repeat", min=1, help="Student repeats per evaluation."),
    base: str = typer.Option("main", "--base", help="Branch the PR targets."),
    force: bool = typer.Option(False, "--force", help="Re-propose a patch whose PR was closed."),
    rebase_when: str = typer.Option(
        "",
        "--rebase-when",
        help="When an open candidate is rebuilt on the moved base (each rebuild re-runs "
        "the gate): conflicted (default), behind-base, never. Default: $SKILLCI_REBASE_WHEN.",
    ),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository root (default: current dir)."),
    forge: Forge | None = typer.Option(None, "--forge", help=_FORGE_HELP),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Run and diagnose; write no branch or PR."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    sandbox: SandboxOpt = None,
    runner: RunnerOpt = None,
    env: EnvOpt = None,
    concurrency: ConcurrencyOpt = None,
    max_trials: MaxTrialsOpt = None,
    max_usd: MaxUsdOpt = None,
    harbor: HarborOpt = None,
) -> int:
    """From a failing student trial to a PR with a bounded, evidenced patch."""
    use_policy(sandbox)
    remote = _remote(target, runner, env, concurrency, max_trials, max_usd, harbor)
    from skillci.flows.skills import resolve_skill

    ctx = RepoContext.open(repo, dry_run=dry_run, forge=forge)
    skill = resolve_skill(ctx, skill.strip() or None)
    if target == "description":
        return _describe(ctx, skill, model, base, iterations, json_out, agent, agent_version)
    task = [t for t in task if t.strip()]  # workflow inputs may be empty strings
    suite = suite or None
    if not task and suite is None:
        raise InvalidInputError("nothing to propose for", hint="pass --task ID or --suite NAME")

    policy, fb = rebase_policy(rebase_when), _fallback(fallback)
    from skillci.flows.gate import target_agent

    # no --agent: the one the skill's target_runtime names on the base branch, else builtin
    student, pinned = (agent, None) if agent else target_agent(ctx, skill, base)
    student_version = agent_version or pinned

    def opts(t: str = "") -> ProposeOptions:
        return ProposeOptions(
            skill=skill,
            task=t,
            student=model,
            teacher=teacher,
            compiler=compiler,
            guard_models=tuple(guard_model or ()),
            repeat=repeat,
            base=base,
            force=force,
            rebase_when=policy,
            fallback=fb,
            agent=student,
            agent_version=student_version,
            remote=remote,
        )

    outcomes = [propose(ctx, opts(t)) for t in task]
    if suite is not None:
        outcomes += propose_suite_flow(ctx, opts(), suite_tasks(ctx, suite, task))
    _report(ctx, outcomes, json_out)
    return 0


def _remote(target: str, *flags: Any) -> RunnerOptions | None:
    """The runner flags (exit 2 when invalid, or given with ``--target description``,
    which runs trigger checks, not trials)."""
    remote = remote_from_flags(*flags)
    if remote is not None and target == "description":
        raise InvalidInputError(
            "--runner harbor runs trials: --target description has none to run",
            hint="drop --runner/--env, or use --target tasks",
        )
    return remote


def _report(ctx: RepoContext, outcomes: list[ProposeOutcome], json_out: bool) -> None:
    """Print (or emit as JSON) every outcome; a compiler failure then exits 4."""
    if not json_out:
        for o in outcomes:
            _show(o)
    if json_out:
        emit_json(
            [
                {
                    "task": o.proposal.task_id,
                    "action": o.action,
                    "message": o.message,
                    "pr": o.pr.number if o.pr else None,
                    "branch": o.branch,
                    "patch_id": o.patch_id,
                    "forge": ctx.forge_choice,
                    "proposal": o.proposal,
                }
                for o in outcomes
            ]
        )
    failed = [o for o in outcomes if o.proposal.status == "compiler_failed"]
    if failed:  # recorded and printed; the model (an external part) failed
        raise ModelOutputError(
            f"the compiler gave no valid patch for {', '.join(o.proposal.task_id for o in failed)}",
            hint="see the proposal's compiler failures; pass --fallback template to propose "
            "the template patch, or use another --compiler route",
        )


def _fallback(given: str) -> Fallback:
    for known in FALLBACKS:
        if given == known:
            return known
    raise InvalidInputError(f"--fallback {given!r}", hint=f"use one of {', '.join(FALLBACKS)}")
