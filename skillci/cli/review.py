"""``skillci review``: gate a PR and post its sticky comment and status."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillci.cli.choices import Forge
from skillci.cli.gate import print_student, progress_printer, verdict_exit
from skillci.cli.options import (
    AgentOpt,
    AgentVersionOpt,
    ConcurrencyOpt,
    EnvOpt,
    ForgeOpt,
    GateRerunOpt,
    HarborOpt,
    JsonOpt,
    JudgeOpt,
    MaxTrialsOpt,
    MaxUsdOpt,
    ModelOpt,
    ParallelOpt,
    RepeatOpt,
    RepoOpt,
    RunnerOpt,
    SandboxOpt,
    SuitesOpt,
    TeacherOpt,
    remote_from_flags,
    split_csv,
)
from skillci.cli.output import console, emit_json, to_jsonable
from skillci.errors import ExitCode, InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.gate import DEFAULT_STUDENT, GateOptions, GateReport
from skillci.flows.plugins import use_policy
from skillci.flows.review_post import GATE_WORKFLOW_PATH, decisive_lines

app = typer.Typer(add_completion=False)

FromShardsOpt = Annotated[
    Path | None,
    typer.Option(
        "--from-shards",
        help="Recompute the verdict from a CI run's shard directories (eval-*/ under this "
        "one) and post it, instead of running the gate (skill-report.yml).",
    ),
]
GateWorkflowOpt = Annotated[
    str,
    typer.Option(
        "--gate-workflow",
        help="With --from-shards: the workflow file whose runs are trusted (the caller of "
        "the skillci-gate reusable workflow).",
    ),
]


@app.command("review")
def review_cmd(
    pr: int | None = typer.Option(
        None, "--pr", help="Pull request number (with --from-shards: default from the event)."
    ),
    repeat: RepeatOpt = 3,
    model: ModelOpt = None,
    agent: AgentOpt = None,
    agent_version: AgentVersionOpt = None,
    teacher: TeacherOpt = None,
    judge: JudgeOpt = None,
    suites: SuitesOpt = "",
    parallel: ParallelOpt = 2,
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    from_shards: FromShardsOpt = None,
    gate_workflow: GateWorkflowOpt = GATE_WORKFLOW_PATH,
    from_report: Path | None = typer.Option(
        None,
        "--from-report",
        help="Refused: a report file alone proves nothing (use --from-shards).",
        hidden=True,
    ),
    out: Path | None = typer.Option(None, "--out", help="Also write the GateReport JSON here."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Run the gate; post nothing."),
    rerun: GateRerunOpt = "errors",
    json_out: JsonOpt = False,
    sandbox: SandboxOpt = None,
    runner: RunnerOpt = None,
    env: EnvOpt = None,
    concurrency: ConcurrencyOpt = None,
    max_trials: MaxTrialsOpt = None,
    max_usd: MaxUsdOpt = None,
    harbor: HarborOpt = None,
) -> int:
    """Gate a PR and upsert its sticky comment and `skillci/gate` status."""
    use_policy(sandbox)
    remote = remote_from_flags(runner, env, concurrency, max_trials, max_usd, harbor)
    from skillci.flows.review import review

    if from_report is not None:
        raise InvalidInputError(
            f"--from-report {from_report}: a gate report file cannot be verified, so it "
            "sets no status",
            hint="post from the run's records: skillci review --from-shards DIR "
            "(docs/github.md, 'What to trust')",
        )
    if from_shards is not None:
        if remote is not None:
            raise InvalidInputError("--from-shards runs no trial: --runner harbor has no use")
        expected = GateOptions(
            skill="",
            base="",
            head="",
            suites=split_csv(suites),
            repeat=repeat,
            student=model or DEFAULT_STUDENT,
            student_source="--model" if model else "",
            teacher=teacher,
            agent=agent,
            agent_version=agent_version,
            judge=judge,
        )
        return _post_verified(
            repo, forge, from_shards, expected, pr, dry_run, json_out, gate_workflow
        )
    if pr is None:
        raise InvalidInputError("--pr is required", hint="e.g. skillci review --pr 3")
    ctx = RepoContext.open(repo, forge=forge)
    report = review(
        ctx,
        pr,
        repeat=repeat,
        student=model,
        suites=split_csv(suites),
        parallel=parallel,
        post=not dry_run,
        progress=progress_printer(json_out),
        teacher=teacher,
        rerun=rerun,
        agent=agent,
        agent_version=agent_version,
        judge=judge,
        remote=remote,
    )
    if out is not None:
        from skillci.fsutil import atomic_write_text

        atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
    from skillci.flows.actions import set_output

    set_output("verdict", report.verdict)
    set_output("gate_id", report.gate_id)
    return _print_review(report, ctx, pr, repo, dry_run=dry_run, json_out=json_out)


def _print_review(
    report: GateReport, ctx: RepoContext, pr: int, repo: Path, *, dry_run: bool, json_out: bool
) -> int:
    """The review's result: the student, the verdict with its decisive checks, the exit."""
    print_student(report)
    if json_out:
        emit_json({**to_jsonable(report), "forge": to_jsonable(ctx.forge_choice)})
        return verdict_exit(report)
    console.print(
        f"PR #{pr}: {report.verdict} (gate {report.gate_id}, forge {ctx.forge_choice.kind})"
        + ("" if not dry_run else " — dry run, nothing posted"),
        highlight=False,
    )
    for line in decisive_lines(report):
        console.print(f"  {line}", markup=False, highlight=False)
    console.print(
        f"  report: skillci report show {report.gate_id} --repo {repo}",
        markup=False,
        highlight=False,
    )
    return verdict_exit(report)


def _post_verified(
    repo: Path,
    forge: Forge | None,
    root: Path,
    expected: GateOptions,
    pr: int | None,
    dry_run: bool,
    json_out: bool,
    gate_workflow: str,
) -> int:
    """``review --from-shards``: comment + status recomputed from another job's records."""
    from skillci.flows.actions import add_summary, read_event, set_output
    from skillci.flows.review_post import post_verified

    ctx = RepoContext.open(repo, dry_run=dry_run, forge=forge)
    posted = post_verified(
        ctx,
        root,
        expected=expected,
        number=pr,
        event=None if pr is not None else read_event(),
        gate_workflow=gate_workflow,
    )
    set_output("verdict", posted.verdict or "")
    line = f"PR #{posted.pr} ({posted.head_sha[:12]}): skillci/gate {posted.state} — {posted.description}"
    add_summary(line)
    if json_out:
        emit_json({**to_jsonable(posted), "forge": to_jsonable(ctx.forge_choice)})
    else:
        console.print(line + (" (dry run, nothing posted)" if dry_run else ""), markup=False)
    return int(ExitCode.OK if posted.problem is None else ExitCode.INVALID_INPUT)
