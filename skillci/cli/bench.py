"""``skillci bench``: the seed's baselines and ablations on a bundled suite."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from skillci.cli.options import SandboxOpt
from skillci.cli.output import console, emit_json
from skillci.flows.plugins import bench_agent_help, use_policy

if TYPE_CHECKING:
    from skillci.flows.bench import BenchRow

app = typer.Typer(add_completion=False)


@app.command("bench")
def bench_cmd(
    suite: Annotated[
        str, typer.Option("--suite", help="Suite under evals/suites/.")
    ] = "validation",
    skill: Annotated[
        Path | None,
        typer.Option("--skill", help="The original skill (default: skills/repo-debugger)."),
    ] = None,
    student: Annotated[str, typer.Option("--student", help="Student route.")] = "sim/student",
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help=bench_agent_help(),
        ),
    ] = "builtin",
    agent_version: Annotated[
        str | None,
        typer.Option("--agent-version", help="Real agent version (default: the newest)."),
    ] = None,
    teacher: Annotated[str, typer.Option("--teacher", help="Teacher route.")] = "sim/teacher",
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Trials per task.")] = 1,
    parallel: Annotated[int, typer.Option("--parallel", min=1, help="Trials at once.")] = 1,
    opt_iterations: Annotated[
        int,
        typer.Option("--opt-iterations", min=0, help="Mutations the prompt-opt baseline tries."),
    ] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Seed of prompt-opt's mutations.")] = 0,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    home: Annotated[
        Path | None, typer.Option("--home", help="State dir (default: <repo>/.skillci).")
    ] = None,
    arms: Annotated[
        str,
        typer.Option(
            "--arms", help="Comma-separated arms to run (default: all; e.g. skillci,no-taxonomy)."
        ),
    ] = "",
    train_suite: Annotated[
        str,
        typer.Option(
            "--train-suite",
            help="Suite the loop arms propose on and the generated baselines learn from "
            "(never the --suite reported on).",
        ),
    ] = "discovery",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines on stderr.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the docs table.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    sandbox: SandboxOpt = None,
) -> int:
    """Baselines and ablations: success, GCR, regression, tokens, cost, with intervals.

    Runs the student without a skill, with the original skill, and the teacher (sim routes
    by default, any route on request), the skills the baseline generators write from
    --train-suite, then skillci's loop and its ablations on a scratch repository; arms not
    implemented are listed as such (docs/bench.md, docs/design/240, 245, 246).
    """
    use_policy(sandbox)
    from skillci.flows.bench import BenchOptions, check_arms, run_bench
    from skillci.flows.command import default_home
    from skillci.present.bench import markdown_table

    root = repo.resolve()
    picked = tuple(a.strip() for a in arms.split(",") if a.strip())
    check_arms(picked)
    opts = BenchOptions(
        root=root,
        home=(home or default_home(root)).resolve(),
        skill=(skill or root / "skills" / "repo-debugger").resolve(),
        suite=suite,
        student=student,
        teacher=teacher,
        agent=agent,
        agent_version=agent_version,
        repeat=repeat,
        parallel=parallel,
        opt_iterations=opt_iterations,
        seed=seed,
        arms=picked,
        train_suite=train_suite,
    )
    rows = run_bench(opts, say=(lambda _line: None) if quiet else _progress)
    if json_out:
        emit_json(rows)
        return 0
    if markdown:
        typer.echo(markdown_table(rows), nl=False)
        return 0
    who = student if agent == "builtin" else f"{agent} on {student}"
    _print(rows, f"bench on suite {suite} ({who} / {teacher}, {repeat} repeat(s))")
    return 0


def _progress(line: str) -> None:
    typer.echo(line, err=True)


def _print(rows: list[BenchRow], title: str) -> None:
    """The console table, then each unmeasured row's reason and each measured row's note."""
    from skillci.cli.tables import Column, fit_table, print_table
    from skillci.present.bench import fmt

    table = fit_table(
        [
            Column("arm", key=True, no_wrap=True),
            Column("success", key=True),
            Column("GCR", key=True),
            Column("regression", key=True),
            Column("tokens/trial", drop_rank=2),
            Column("USD/trial", drop_rank=1),
        ],
        [
            [
                escape(f"{r.kind[0]} {r.arm}"),
                fmt(r.success, pct=True),
                fmt(r.gcr, digits=2) if r.gcr else f"n/a ({escape(r.gcr_note)})",
                fmt(r.regression, pct=True),
                fmt(r.tokens),
                fmt(r.usd, digits=4),
            ]
            if r.status == "real"
            else [escape(f"{r.kind[0]} {r.arm}"), r.status.replace("_", " "), "", "", "", ""]
            for r in rows
        ],
        title=title,
    )
    print_table(table)
    for r in rows:
        if r.status != "real":
            console.print(f"{escape(r.arm)}: {escape(r.reason)}")
        elif r.note:
            console.print(f"{escape(r.arm)}: {escape(r.note)}")
