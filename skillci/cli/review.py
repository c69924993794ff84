"""``skillci review``: gate a PR and post its sticky comment and status."""

from __future__ import annotations

from pathlib import Path

import typer

from skillci.cli.choices import Forge
from skillci.cli.gate import progress_printer
from skillci.cli.output import console, emit_json, to_jsonable
from skillci.errors import ExitCode, InvalidInputError
from skillci.flows.context import RepoContext

app = typer.Typer(add_completion=False)


@app.command("review")
def review_cmd(
    pr: int | None = typer.Option(
        None, "--pr", help="Pull request number (with --from-report: default from the event)."
    ),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Repeats per task (max rounds)."),
    model: str = typer.Option("sim/student", "--model", help="Student route."),
    teacher: str | None = typer.Option(
        None,
        "--teacher",
        help="Also run this teacher route and the student without any skill (cached), "
        "for the gap closure rate and teacher trajectories in the report.",
    ),
    suites: str = typer.Option(
        "", "--suites", help="Comma-separated suites (default: what the skill's metadata asks for)."
    ),
    parallel: int = typer.Option(2, "--parallel", min=1, help="Trials at once."),
    repo: Path = typer.Option(Path("."), "--repo", help="Repository root (default: current dir)."),
    forge: Forge | None = typer.Option(
        None, "--forge", help="Default: $SKILLCI_FORGE, else detected."
    ),
    from_report: Path | None = typer.Option(
        None,
        "--from-report",
        help="Post this GateReport JSON (untrusted CI artifact) instead of running the gate.",
    ),
    out: Path | None = typer.Option(None, "--out", help="Also write the GateReport JSON here."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Run the gate; post nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Gate a PR and upsert its sticky comment and `skillci/gate` status."""
    from skillci.flows.review import review

    if from_report is not None:
        return _post_report(repo, forge, from_report, pr, dry_run, json_out)
    if pr is None:
        raise InvalidInputError("--pr is required", hint="e.g. skillci review --pr 3")
    ctx = RepoContext.open(repo, forge=forge)
    names = tuple(s.strip() for s in suites.split(",") if s.strip())
    report = review(
        ctx,
        pr,
        repeat=repeat,
        student=model,
        suites=names,
        parallel=parallel,
        post=not dry_run,
        progress=progress_printer(json_out),
        teacher=teacher,
    )
    if out is not None:
        from skillci.fsutil import atomic_write_text

        atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
    if json_out:
        emit_json({**to_jsonable(report), "forge": to_jsonable(ctx.forge_choice)})
        return int(ExitCode.OK if report.accepted else ExitCode.REJECTED)
    console.print(
        f"PR #{pr}: {report.verdict} (gate {report.gate_id}, forge {ctx.forge_choice.kind})"
        + ("" if not dry_run else " — dry run, nothing posted")
    )
    return int(ExitCode.OK if report.accepted else ExitCode.REJECTED)


def _post_report(
    repo: Path, forge: str | None, path: Path, pr: int | None, dry_run: bool, json_out: bool
) -> int:
    """``review --from-report``: comment + status from a report made in another job."""
    from skillci.flows.review_post import post_report
    from skillci.forge.actions import add_summary, read_event

    ctx = RepoContext.open(repo, dry_run=dry_run, forge=forge)
    posted = post_report(ctx, path, number=pr, event=None if pr is not None else read_event())
    line = f"PR #{posted.pr} ({posted.head_sha[:12]}): skillci/gate {posted.state} — {posted.description}"
    add_summary(line)
    if json_out:
        emit_json({**to_jsonable(posted), "forge": to_jsonable(ctx.forge_choice)})
    else:
        console.print(line + (" (dry run, nothing posted)" if dry_run else ""), markup=False)
    return int(ExitCode.OK if posted.problem is None else ExitCode.INVALID_INPUT)
