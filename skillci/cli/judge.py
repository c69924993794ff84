"""``skillci judge``: the rubric judge of task graders — is it fit to trust?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillci.cli.options import JUDGE_HELP
from skillci.cli.output import console, emit_json
from skillci.errors import ExitCode

app = typer.Typer(
    help="The rubric judge of task graders: calibrate it against human labels.",
    no_args_is_help=True,
)


@app.command("calibrate")
def calibrate_cmd(
    suite: Annotated[
        str | None,
        typer.Option("--suite", help="Suite whose judge: section names examples and minimum."),
    ] = None,
    examples: Annotated[
        Path | None, typer.Option("--examples", help="Labelled examples file (YAML or JSON).")
    ] = None,
    min_kappa: Annotated[
        float | None,
        typer.Option("--min-kappa", min=-1.0, max=1.0, help="Override the suite's minimum."),
    ] = None,
    judge: Annotated[str | None, typer.Option("--judge", help=JUDGE_HELP)] = None,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    home: Annotated[
        Path | None, typer.Option("--home", help="State dir (default: <repo>/.skillci).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> int:
    """Judge human-labelled examples; report accuracy and Cohen's kappa (95% CI).

    Exits 1 when the judge is below the minimum agreement (the suite's judge.min_kappa or
    --min-kappa): a gate must not use its verdicts."""
    from skillci.flows.command import default_home
    from skillci.flows.graders import calibrate

    root = repo.resolve()
    report = calibrate(
        root=root,
        home=(home or default_home(root)).resolve(),
        judge=judge,
        suite=suite,
        examples=examples,
        min_kappa=min_kappa,
    )
    unfit = report.fit is not None and not report.fit.fit
    if json_out:
        emit_json(report)
        return int(ExitCode.REJECTED if unfit else ExitCode.OK)
    a = report.agreement
    console.print(
        f"judge {escape(report.judge)} on {a.n} labelled examples "
        f"({escape(report.examples_file)}): accuracy {a.accuracy:.2f}, kappa {a.kappa} "
        f"(95% CI {a.kappa_low}..{a.kappa_high}); confusion {a.confusion}"
    )
    if report.disagreements:
        console.print(f"disagrees on: {escape(', '.join(report.disagreements))}")
    if report.unreadable:
        console.print(
            f"unreadable answers (not the judge's JSON, counted as wrong): "
            f"{escape(', '.join(report.unreadable))}"
        )
    u = report.usage
    console.print(
        f"judge calls: {u['model_calls']} ({u['cached_calls']} cached), "
        f"{u['input_tokens']}+{u['output_tokens']} tokens, ${u['usd']:.4f}"
    )
    if report.fit is not None:
        style = "green" if report.fit.fit else "bold red"
        console.print(f"[{style}]{escape(report.fit.reason)}[/{style}]")
    return int(ExitCode.REJECTED if unfit else ExitCode.OK)
