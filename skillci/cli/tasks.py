"""``skillci tasks``: check SkillsBench/Harbor/BenchFlow task dirs."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillci.cli.options import SandboxOpt
from skillci.cli.output import console, emit_json
from skillci.errors import SkillciError, TaskFormatError, UsageError
from skillci.flows.plugins import use_policy
from skillci.flows.tasks import Severity, TaskReport, TaskRunCheck, check_task_dirs, task_rows

app = typer.Typer(help="List and check evaluation task directories.", no_args_is_help=True)


class GraderKind(enum.StrEnum):
    """How a scaffolded task is graded (``tasks new --grader``)."""

    test = "test"
    assertions = "assertions"
    rubric = "rubric"


_STYLE = {Severity.error: "red", Severity.warning: "yellow", Severity.note: "dim"}


@app.command("validate")
def validate_cmd(
    paths: Annotated[
        list[Path], typer.Argument(help="Task dirs, or dirs of task dirs (e.g. evals/tasks).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the reports as JSON.")] = False,
    run: Annotated[
        bool,
        typer.Option(
            "--run",
            help="Also run the oracle (must pass) and a do-nothing agent (must fail) on "
            "each valid task.",
        ),
    ] = False,
    repo: Annotated[Path, typer.Option("--repo", help="Repository (for the state dir).")] = Path(
        "."
    ),
    sandbox: SandboxOpt = None,
) -> int:
    """Check structure, task.toml, verifier (present, executable) and solution.

    With --run each task's verdict is ok, environment_unsupported (this runner cannot give
    its environment), verifier-broken, trivially-satisfied, or error (a cause outside the
    task). Exit 2 when any task has an error finding or, with --run, one of the task's own
    defects (verifier-broken, trivially-satisfied).
    """
    from skillci.flows.tasks import DEFECTS

    if run:
        use_policy(sandbox)
    reports = check_task_dirs(paths)
    errors = sum(1 for r in reports for f in r.findings if f.severity is Severity.error)
    warnings = sum(1 for r in reports for f in r.findings if f.severity is Severity.warning)
    checks = _run_checks(repo, reports) if run else []
    bad = [c for c in checks if c.verdict in DEFECTS]
    if json_out:
        emit_json({"tasks": reports, "errors": errors, "warnings": warnings, "runs": checks})
        return int(TaskFormatError.exit_code) if errors or bad else 0
    for r in reports:
        mark = "[green]ok[/green]" if r.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {escape(r.task_id)} [dim]({r.format or 'unknown format'})[/dim]")
        for f in r.findings:
            style = _STYLE[f.severity]
            where = f"{f.location()}: " if f.location() else ""
            text = escape(f"{where}{f.message} [{f.code}]")
            console.print(f"  [{style}]{f.severity.value}[/{style}] {text}")
    console.print(f"{len(reports)} task(s): {errors} error(s), {warnings} warning(s)")
    for c in checks:
        style = "green" if c.verdict == "ok" else "red" if c.verdict in DEFECTS else "yellow"
        oracle = c.oracle_state or "-"
        noop = c.noop_state or "-"
        console.print(
            f"run [{style}]{c.verdict}[/{style}] {escape(c.task_id)}: oracle {oracle}, "
            f"do-nothing {noop}" + ("" if c.verdict == "ok" else f" — {escape(c.detail)}")
        )
    if checks:
        counts: dict[str, int] = {}
        for c in checks:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        console.print("runs: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    if bad and not errors:
        raise TaskFormatError(
            f"{len(bad)} task(s) with a broken or trivially satisfied verifier: "
            + ", ".join(c.task_id for c in bad),
            hint="the reference solution must pass and doing nothing must fail",
        )
    if errors:
        raise TaskFormatError(
            f"{errors} error(s) in {sum(1 for r in reports if not r.ok)} task(s)",
            hint="fix the findings listed above",
        )
    return 0


def _run_checks(repo: Path, reports: list[TaskReport]) -> list[TaskRunCheck]:
    from skillci.flows.context import RepoContext
    from skillci.flows.tasks import run_checks

    try:
        home = RepoContext.open(repo).state_dir
    except SkillciError:  # not in a repository: a private store beside the tasks
        home = Path(".skillci").resolve()
    return run_checks([Path(r.task_dir) for r in reports if r.ok], home)


@app.command("new")
def new_cmd(
    name: Annotated[
        str | None, typer.Argument(help="Task name (its directory under evals/tasks).")
    ] = None,
    triggers: Annotated[
        bool,
        typer.Option(
            "--triggers",
            help="Scaffold the skill's trigger suite (skillci/evals/triggers.yaml) instead, "
            "seeded from its description.",
        ),
    ] = False,
    skill: Annotated[
        Path | None, typer.Option("--skill", help="Skill package dir (with --triggers).")
    ] = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="Also list it in evals/suites/<suite>.yaml.")
    ] = None,
    grader: Annotated[
        GraderKind,
        typer.Option(
            "--grader",
            help="test: tests/test.sh; assertions or rubric: tests/graders.toml (no test.sh).",
        ),
    ] = GraderKind.test,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be written.")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> int:
    """Scaffold a task in the Harbor layout (instruction, task.toml, environment/,
    solution/solve.sh, tests/test.sh verifier) that passes `validate --run` as written."""
    from skillci.flows.tasks import new_task, new_trigger_suite

    if triggers:
        if skill is None or name is not None:
            raise UsageError("--triggers takes --skill DIR and no task name")
        written = new_trigger_suite(skill, dry_run=dry_run)
        if json_out:
            emit_json({"file": str(written), "dry_run": dry_run})
        else:
            console.print(f"{'would write' if dry_run else 'wrote'} {escape(str(written))}")
            if not dry_run:
                console.print(
                    "next: rewrite the seeded queries as real requests, add near misses, then "
                    f"skillci eval triggers --skill {escape(str(skill))}"
                )
        return 0
    if name is None:
        raise UsageError("give a task name (or --triggers --skill DIR)")
    res = new_task(repo, name, suite=suite, grader=grader.value, dry_run=dry_run)
    if json_out:
        emit_json(res)
        return 0
    verb = "would write" if dry_run else "wrote"
    for f in res.files:
        console.print(f"{verb} {escape(res.task_dir)}/{escape(f)}")
    if res.suite_file:
        console.print(f"{'would add' if dry_run else 'added'} {escape(name)} to {res.suite_file}")
    if not dry_run:
        console.print(
            f"next: edit instruction.md, environment/, solution/solve.sh and "
            f"{'tests/test.sh' if grader is GraderKind.test else 'tests/graders.toml'}; "
            f"then skillci tasks validate --run {escape(res.task_dir)}"
        )
    return 0


@app.command("import")
def import_cmd(
    evals_json: Annotated[Path, typer.Argument(help="A skill-creator evals/evals.json.")],
    skill_root: Annotated[
        Path | None,
        typer.Option("--skill-root", help="Dir its files are relative to (default: ../..)."),
    ] = None,
    prefix: Annotated[
        str | None, typer.Option("--prefix", help="Task id prefix (default: skill_name).")
    ] = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="Also write evals/suites/<suite>.yaml.")
    ] = None,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Write nothing.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> int:
    """Turn skill-creator's evals.json into tasks: prompt -> instruction.md, files ->
    environment/, expectations -> a rubric in tests/graders.toml."""
    from skillci.flows.graders import import_evals

    res = import_evals(
        evals_json, repo, skill_root=skill_root, prefix=prefix, suite=suite, dry_run=dry_run
    )
    if json_out:
        emit_json(res)
        return 0
    verb = "would write" if dry_run else "wrote"
    for t in res.tasks:
        console.print(f"{verb} {escape(t)}")
    if res.suite_file:
        console.print(f"{verb} {escape(res.suite_file)}")
    console.print(f"{len(res.tasks)} task(s), {res.files} input file(s); graded by a rubric")
    return 0


@app.command("export")
def export_cmd(
    out: Annotated[
        Path | None, typer.Option("--out", help="Write evals.json here (default: stdout).")
    ] = None,
    skill_name: Annotated[str | None, typer.Option("--skill-name", help="skill_name.")] = None,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print; write nothing.")] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the evals.json and what it lost as JSON.")
    ] = False,
) -> int:
    """The tasks with rubrics as a skill-creator evals.json (assertions have no form there
    and are listed on stderr)."""
    import json as _json

    from skillci.cli.output import err_console
    from skillci.flows.graders import export_evals

    data, lost = export_evals(repo, skill_name=skill_name)
    if json_out:
        emit_json({"evals_json": data, "lost": lost, "out": str(out) if out else None})
    for line in lost:
        err_console.print(f"[yellow]not exported:[/yellow] {escape(line)}")
    text = _json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if out is None or dry_run:
        if not json_out:
            typer.echo(text, nl=False)
        return 0
    from skillci.fsutil import atomic_write_text

    atomic_write_text(out, text)
    if not json_out:
        console.print(f"wrote {escape(str(out))} ({len(data['evals'])} evals)")
    return 0


@app.command("ls")
def ls_cmd(
    suite: Annotated[str | None, typer.Option("--suite", help="Only this suite's tasks.")] = None,
    repo: Annotated[Path, typer.Option("--repo", help="Repository root.")] = Path("."),
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> int:
    """The tasks under evals/tasks: id, format, and the suites (splits) that list them."""
    from skillci.cli.tables import Column, fit_table, print_table

    rows = task_rows(repo, suite)
    if json_out:
        emit_json(rows)
        return 0
    if not rows:
        console.print(f"no tasks under {escape(str(repo))}/evals/tasks")
        return 0
    table = fit_table(
        [
            Column("task", key=True, no_wrap=True),
            Column("suites", key=True),
            Column("split", drop_rank=2),
            Column("format", drop_rank=1, no_wrap=True),
        ],
        [
            [
                escape(str(r["id"])),
                escape(", ".join(map(str, r["suites"])) or "-"),  # type: ignore[call-overload]
                escape(", ".join(map(str, r["splits"])) or "-"),  # type: ignore[call-overload]
                str(r["format"]),
            ]
            for r in rows
        ],
        title=f"{len(rows)} task(s)" + (f" in suite {suite}" if suite else ""),
    )
    print_table(table)
    return 0


@app.command("plan")
def plan_cmd(
    min_gain: Annotated[
        float | None,
        typer.Option(
            "--min-gain", help="Gain to detect (default: release_gate.min_validation_gain)."
        ),
    ] = None,
    max_regression: Annotated[
        float | None,
        typer.Option("--max-regression", help="The check's allowance (default: release_gate's)."),
    ] = None,
    catch: Annotated[
        float, typer.Option("--catch", help="True regression share of passing tasks to catch.")
    ] = 0.1,
    pass_rate: Annotated[float, typer.Option("--pass-rate", help="Expected base pass rate.")] = 0.6,
    reliability: Annotated[
        float,
        typer.Option("--reliability", help="Per-trial pass probability of a passing task."),
    ] = 0.9,
    repeat: Annotated[
        list[int] | None, typer.Option("--repeat", help="Repeat counts to plan for (repeatable).")
    ] = None,
    task_sd: Annotated[
        float, typer.Option("--task-sd", help="Spread of true per-task effects (0: unknown).")
    ] = 0.0,
    power: Annotated[float, typer.Option("--power", help="Detection probability.")] = 0.8,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> int:
    """How many tasks and repeats a gate threshold needs (docs/design/223).

    Tasks for the gain: a paired test at alpha 0.05 detects ``--min-gain`` with
    ``--power``. Passing tasks for the regression check: a true regression share
    ``--catch`` exceeds ``--max-regression`` with ``--power``; noise: how often repeat noise
    alone rejects an unchanged skill at that size.
    """
    from skillci.cli.tables import Column, fit_table, print_table
    from skillci.flows.tasks import gate_plan

    gain, allowance, rows = gate_plan(
        min_gain=min_gain,
        max_regression=max_regression,
        catch=catch,
        pass_rate=pass_rate,
        reliability=reliability,
        repeats=repeat or [1, 3, 5],
        task_sd=task_sd,
        power=power,
    )
    if json_out:
        emit_json({"min_gain": gain, "max_regression_rate": allowance, "rows": rows})
        return 0
    console.print(
        f"gain {gain:.1%} at pass rate {pass_rate:.0%}; regression share {catch:.0%} against "
        f"allowance {allowance:.1%}; {power:.0%} power, alpha 5%"
    )
    table = fit_table(
        [
            Column("repeats", key=True, no_wrap=True),
            Column("tasks for gain", key=True),
            Column("passing tasks for regression", key=True),
            Column("tasks (at pass rate)", drop_rank=1),
            Column("noise alone rejects", key=True),
        ],
        [
            [
                str(r.repeats),
                str(r.tasks_for_gain),
                str(r.passing_for_regression or "> 5000"),
                str(r.tasks_for_regression or "-"),
                "-" if r.noise_rejection is None else f"{r.noise_rejection:.0%}",
            ]
            for r in rows
        ],
        title="tasks a threshold needs",
    )
    print_table(table)
    return 0
