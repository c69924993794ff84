"""``skillci gate``: the release gate (and the progress/report printers ``review`` and ``report`` share)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from skillci.cli.choices import TriggerMode
from skillci.cli.options import (
    AgentOpt,
    AgentVersionOpt,
    BaseOpt,
    ConcurrencyOpt,
    EnvOpt,
    GateRerunOpt,
    HarborOpt,
    HeadOpt,
    JsonOpt,
    JudgeOpt,
    MaxTrialsOpt,
    MaxUsdOpt,
    ModelOpt,
    NoImpactOpt,
    NoSeqOpt,
    ParallelOpt,
    RepeatOpt,
    RepoOpt,
    RunnerOpt,
    SameOpt,
    SandboxOpt,
    SkillOpt,
    SuitesOpt,
    TeacherOpt,
    gate_from_flags,
    remote_from_flags,
)
from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode
from skillci.flows.gate import GateReport, TrialRun, run_gate
from skillci.flows.plugins import use_policy
from skillci.present.report import render_markdown


def progress_printer(json_out: bool):  # type: ignore[no-untyped-def]
    """A one-line-per-trial progress printer on stderr (kept quiet for cached trials)."""
    start = time.monotonic()
    counts = {"done": 0}

    def show(o: TrialRun) -> None:
        if o.state in ("queued", "running") or o.cached:
            return
        counts["done"] += 1
        if sys.stderr.isatty() or not json_out:
            err_console.print(
                f"[dim]{time.monotonic() - start:6.1f}s[/dim] {o.task_id} #{o.repeat_index}: {o.state}"
                f" ({o.wall_time_sec:.1f}s)",
                highlight=False,
            )

    return show


def print_report(report: GateReport, json_out: bool) -> int:
    print_student(report)
    if json_out:
        emit_json(report)
    else:
        console.print(render_markdown(report, marker=False), markup=False)
    for w in report.warnings:  # environment_unsupported trials: also on stderr, in --json too
        err_console.print(f"[bold yellow]warning:[/bold yellow] {w}", highlight=False)
    return verdict_exit(report)


def print_student(report: GateReport) -> None:
    """Which student the gate ran, and why (stderr: never a silent default)."""
    source = report.config.get("student_source")
    err_console.print(
        f"student: {report.student}" + (f" ({source})" if source else ""),
        highlight=False,
        markup=False,
    )


def verdict_exit(report: GateReport) -> int:
    """The gate command's exit code: 4 with the first cause on one line when trials
    measured nothing (a model route, sandbox or verifier failed: docs/design/300), else
    the verdict's."""
    errors = report.config.get("measurement_errors")
    if isinstance(errors, dict) and errors:
        counts = ", ".join(f"{side} {len(lines)}" for side, lines in errors.items())
        first = next(iter(errors.values()))[0]
        err_console.print(
            f"error: trials measured nothing ({counts}; left out of the verdict); first: "
            f"{first} (hint: fix the cause and re-run: failed trials are not cached)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        return int(ExitCode.EXTERNAL)
    return int(ExitCode.of_verdict(report.verdict))


app = typer.Typer(add_completion=False)


@app.command("gate")
def gate_cmd(
    skill: SkillOpt = "",
    base: BaseOpt = "main",
    head: HeadOpt = "HEAD",
    suites: SuitesOpt = "",
    repeat: RepeatOpt = 3,
    model: ModelOpt = None,
    agent: AgentOpt = None,
    agent_version: AgentVersionOpt = None,
    teacher: TeacherOpt = None,
    judge: JudgeOpt = None,
    parallel: ParallelOpt = 2,
    no_sequential: NoSeqOpt = False,
    no_impact: NoImpactOpt = False,
    task: SameOpt = None,
    repo: RepoOpt = Path("."),
    out: Path | None = typer.Option(None, "--out", help="Also write the GateReport JSON here."),
    triggers: TriggerMode = typer.Option(
        "auto",
        "--triggers",
        help="Trigger check: auto (when name/description changed), always or never.",
    ),
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
    """Re-run the student on base and head: accept (0), reject (1), inconclusive (5); 4 when
    trials errored.

    Under GitHub Actions also writes ``verdict=`` and ``gate_id=`` to $GITHUB_OUTPUT."""
    use_policy(sandbox)
    remote = remote_from_flags(runner, env, concurrency, max_trials, max_usd, harbor)
    ctx, opts = gate_from_flags(
        repo,
        skill=skill,
        base=base,
        head=head,
        suites=suites,
        repeat=repeat,
        model=model,
        parallel=parallel,
        no_sequential=no_sequential,
        no_impact=no_impact,
        same=task,
        teacher=teacher,
        triggers=triggers,
        rerun=rerun,
        agent=agent,
        agent_version=agent_version,
        judge=judge,
        remote=remote,
    )
    report = run_gate(ctx, opts, progress=progress_printer(json_out))
    from skillci.flows.actions import set_output

    set_output("verdict", report.verdict)
    set_output("gate_id", report.gate_id)
    if out is not None:
        from skillci.fsutil import atomic_write_text

        atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
    return print_report(report, json_out)
