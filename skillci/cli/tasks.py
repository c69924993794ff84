"""``skillci tasks``: check SkillsBench/Harbor/BenchFlow task dirs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillci.cli.output import console, emit_json
from skillci.errors import TaskFormatError
from skillci.tasks.validate import Severity, TaskReport, expand_task_dirs, validate_task

app = typer.Typer(help="List and check evaluation task directories.", no_args_is_help=True)

_STYLE = {Severity.error: "red", Severity.warning: "yellow", Severity.note: "dim"}


@app.command("validate")
def validate_cmd(
    paths: Annotated[
        list[Path], typer.Argument(help="Task dirs, or dirs of task dirs (e.g. evals/tasks).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the reports as JSON.")] = False,
) -> int:
    """Check structure, task.toml, verifier (present, executable) and solution.

    Exit 2 when any task has an error.
    """
    reports: list[TaskReport] = [validate_task(p) for p in expand_task_dirs(paths)]
    errors = sum(1 for r in reports for f in r.findings if f.severity is Severity.error)
    warnings = sum(1 for r in reports for f in r.findings if f.severity is Severity.warning)
    if json_out:
        emit_json({"tasks": reports, "errors": errors, "warnings": warnings})
        return int(TaskFormatError.exit_code) if errors else 0
    for r in reports:
        mark = "[green]ok[/green]" if r.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {escape(r.task_id)} [dim]({r.format or 'unknown format'})[/dim]")
        for f in r.findings:
            style = _STYLE[f.severity]
            where = f"{f.location()}: " if f.location() else ""
            text = escape(f"{where}{f.message} [{f.code}]")
            console.print(f"  [{style}]{f.severity.value}[/{style}] {text}")
    console.print(f"{len(reports)} task(s): {errors} error(s), {warnings} warning(s)")
    if errors:
        raise TaskFormatError(
            f"{errors} error(s) in {sum(1 for r in reports if not r.ok)} task(s)",
            hint="fix the findings listed above",
        )
    return 0
