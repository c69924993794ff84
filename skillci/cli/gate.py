"""``skillci gate`` and ``skillci review``: the release gate, and the PR review around it."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from skillci.cli.output import console, emit_json, err_console, to_jsonable
from skillci.errors import ExitCode, InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.gate import DEFAULT_SUITES, run_gate
from skillci.gate.report import render_markdown
from skillci.gate.verdict import GateReport
from skillci.runners.outcome import TrialOutcome


def _progress(json_out: bool):  # type: ignore[no-untyped-def]
    """A one-line-per-trial progress printer on stderr (kept quiet for cached trials)."""
    start = time.monotonic()
    counts = {"done": 0}

    def show(o: TrialOutcome) -> None:
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


def _print(report: GateReport, json_out: bool) -> int:
    if json_out:
        emit_json(report)
    else:
        console.print(render_markdown(report, marker=False), markup=False)
    return int(ExitCode.OK if report.accepted else ExitCode.REJECTED)


def register(app: typer.Typer) -> None:
    @app.command("gate")
    def gate_cmd(
        skill: str = typer.Option(..., "--skill", help="Skill package (skills/<name> or a name)."),
        base: str = typer.Option("main", "--base", help="Base ref."),
        head: str = typer.Option("HEAD", "--head", help="Head ref (the candidate)."),
        suites: str = typer.Option(
            ",".join(DEFAULT_SUITES), "--suites", help="Comma-separated suites."
        ),
        repeat: int = typer.Option(3, "--repeat", min=1, help="Repeats per task (max rounds)."),
        model: str = typer.Option("sim/student", "--model", help="Student route."),
        teacher: str | None = typer.Option(
            None,
            "--teacher",
            help="Also run this teacher route and the student without any skill (cached), "
            "for the gap closure rate and teacher trajectories in the report.",
        ),
        parallel: int = typer.Option(2, "--parallel", min=1),
        no_sequential: bool = typer.Option(False, "--no-sequential", help="Run every round."),
        no_impact: bool = typer.Option(False, "--no-impact", help="Re-run every task on head."),
        task: str | None = typer.Option(
            None, "--same-instance", help="Task the patch was proposed for."
        ),
        repo: Path = typer.Option(Path("."), "--repo"),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Re-run the student on base and head; accept (exit 0) or reject (exit 1)."""
        from skillci.cli.evals import gate_options

        ctx, opts = gate_options(
            repo,
            skill,
            base,
            head,
            suites,
            repeat,
            model,
            parallel,
            no_sequential,
            no_impact,
            task,
            teacher,
        )
        report = run_gate(ctx, opts, progress=_progress(json_out))
        return _print(report, json_out)

    @app.command("review")
    def review_cmd(
        pr: int | None = typer.Option(
            None, "--pr", help="Pull request number (with --from-report: default from the event)."
        ),
        repeat: int = typer.Option(3, "--repeat", min=1),
        model: str = typer.Option("sim/student", "--model"),
        teacher: str | None = typer.Option(
            None,
            "--teacher",
            help="Also run this teacher route and the student without any skill (cached), "
            "for the gap closure rate and teacher trajectories in the report.",
        ),
        suites: str = typer.Option(",".join(DEFAULT_SUITES), "--suites"),
        parallel: int = typer.Option(2, "--parallel", min=1),
        repo: Path = typer.Option(Path("."), "--repo"),
        forge: str | None = typer.Option(
            None, "--forge", help="local or github (default: $SKILLCI_FORGE, else detected)."
        ),
        from_report: Path | None = typer.Option(
            None,
            "--from-report",
            help="Post this GateReport JSON (untrusted CI artifact) instead of running the gate.",
        ),
        out: Path | None = typer.Option(None, "--out", help="Also write the GateReport JSON here."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Run the gate; post nothing."),
        json_out: bool = typer.Option(False, "--json"),
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
            progress=_progress(json_out),
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

    @app.command("report")
    def report_cmd(
        gate_id: str = typer.Argument(..., help="Gate id (see `skillci gate --json`)."),
        html: Path | None = typer.Option(
            None, "--html", help="Write a self-contained HTML report here."
        ),
        repo: Path = typer.Option(Path("."), "--repo"),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Show a stored gate report (markdown, JSON, or HTML with --html DIR)."""
        from skillci.flows.gate import load_report

        ctx = RepoContext.open(repo)
        report = load_report(ctx, gate_id)
        if html is not None:
            import importlib

            path = importlib.import_module("skillci.flows.html_report").write_html(
                ctx, report, html
            )
            console.print(f"wrote {path}")
            return 0
        return _print(report, json_out) and 0


def _post_report(
    repo: Path, forge: str | None, path: Path, pr: int | None, dry_run: bool, json_out: bool
) -> int:
    """``review --from-report``: comment + status from a report made in another job."""
    from skillci.flows.actions import add_summary, read_event
    from skillci.flows.review_post import post_report

    ctx = RepoContext.open(repo, dry_run=dry_run, forge=forge)
    posted = post_report(ctx, path, number=pr, event=None if pr is not None else read_event())
    line = f"PR #{posted.pr} ({posted.head_sha[:12]}): skillci/gate {posted.state} — {posted.description}"
    add_summary(line)
    if json_out:
        emit_json({**to_jsonable(posted), "forge": to_jsonable(ctx.forge_choice)})
    else:
        console.print(line + (" (dry run, nothing posted)" if dry_run else ""), markup=False)
    return int(ExitCode.OK if posted.problem is None else ExitCode.INVALID_INPUT)
