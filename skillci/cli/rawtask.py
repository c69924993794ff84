"""``skillci eval raw-task``: seed 000's raw-task evaluation (test-NNN attempt dirs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from skillci.cli.choices import RawRunner
from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode
from skillci.flows.plugins import raw_runner_help

if TYPE_CHECKING:
    from skillci.flows.rawtask import RawTaskRequest, RawTaskResult

_WIDTH = 5


def progress_line(name: str, i: int, n: int, phase: str, frac: float, elapsed: float) -> str:
    """``test-001 (1/3) [#----] 5% preparing elapsed=02:57``"""
    filled = min(_WIDTH, max(0, round(frac * _WIDTH)))
    if frac > 0 and filled == 0:
        filled = 1
    mins, secs = divmod(int(elapsed), 60)
    bar = "#" * filled + "-" * (_WIDTH - filled)
    return f"{name} ({i}/{n}) [{bar}] {round(frac * 100)}% {phase} elapsed={mins:02d}:{secs:02d}"


RUNNER_HELP = raw_runner_help()


def raw_task_cmd(
    harness: str = typer.Option(
        ..., "--harness", help="builtin or oracle (local/docker), or a BenchFlow/Harbor agent."
    ),
    model: str = typer.Option(..., "--model", help="provider/model-id."),
    task: Path = typer.Option(..., "--task", help="The task dir."),
    skill_source: Path = typer.Option(
        None,
        "--skill-source",
        help="The skill dir, or a skills root (a task's environment/skills): the whole set "
        "is installed for each attempt.",
    ),
    skill: str = typer.Option(
        None, "--skill", help="The skill under test, when the skills root holds several."
    ),
    output: Path = typer.Option(..., "--output", help="Result dir: test-NNN/ per attempt."),
    require_skill: bool = typer.Option(
        False, "--require-skill", help="An attempt passes only if it invoked the skill."
    ),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Attempts."),
    max_parallel: int = typer.Option(1, "--max-parallel", min=1, help="Attempts at once."),
    image: str = typer.Option(None, "--image", help="Run in this local image (no build)."),
    runner: RawRunner = typer.Option("benchflow", "--runner", help=RUNNER_HELP),
    bench: str = typer.Option(None, "--bench", help="BenchFlow's bench ($SKILLCI_BENCH)."),
    harbor: str = typer.Option(None, "--harbor", help="Harbor's harbor ($SKILLCI_HARBOR)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the tools and list what would run or be reused."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Evaluate one task with one skill, `--repeat` times, into OUTPUT/test-NNN/ (complete
    attempts are reused, incomplete ones moved to OUTPUT/.incomplete/)."""
    from skillci.flows import rawtask as rt

    req = rt.RawTaskRequest(
        harness=harness,
        model=model,
        task=task.resolve(),
        skill_source=skill_source.resolve() if skill_source else None,
        skill=skill,
        output=output.resolve(),
        require_skill=require_skill,
        repeat=repeat,
        max_parallel=max_parallel,
        image=image,
        runner=str(runner),
        bench=bench,
        harbor=harbor,
    )
    if dry_run:
        _print_plan(req, json_out=json_out)
        return 0

    def show(name: str, i: int, n: int, phase: str, frac: float, elapsed: float) -> None:
        err_console.print(
            progress_line(name, i, n, phase, frac, elapsed), markup=False, highlight=False
        )
        sys.stderr.flush()

    result = rt.run_raw_task(req, progress=None if json_out else show)
    if json_out:
        emit_json(result)
    else:
        _print_result(req, result)
    return int(ExitCode.EXTERNAL if result.errors else ExitCode.OK)


def _print_plan(req: RawTaskRequest, *, json_out: bool) -> None:
    """``--dry-run``: per attempt, whether it would be reused, quarantined and run, or run."""
    from skillci.flows import rawtask as rt

    t, under_test = rt.preflight(req)
    key = rt.request_key(req, t, under_test)
    rows = []
    for n in range(1, req.repeat + 1):
        path = req.output / rt.attempt_name(n)
        done = rt.read_attempt(path, key) is not None
        what = "reuse" if done else ("quarantine and run" if path.exists() else "run")
        rows.append({"attempt": path.name, "action": what})
    if json_out:
        emit_json(
            {
                "task": t.id,
                "skill": str(under_test) if under_test else None,
                "installed_with": [p.name for p in rt.companions(req)],
                "attempts": rows,
            }
        )
    else:
        for r in rows:
            console.print(f"would {r['action']} {r['attempt']}", highlight=False)


def _print_result(req: RawTaskRequest, result: RawTaskResult) -> None:
    """One line per attempt (state, reward, time), the errors, then the pass rate."""
    for q in result.quarantined:
        console.print(f"moved incomplete {q}", highlight=False)
    for a in result.attempts:
        skill_note = "" if a.skill_ok else " (skill not invoked)"
        console.print(
            f"{a.name}: {a.state}{skill_note} reward={a.reward if a.reward is not None else '-'}"
            f" {a.duration_sec:.1f}s" + (" (reused)" if a.name in result.reused else ""),
            highlight=False,
        )
    for name, err in result.errors.items():
        console.print(f"[red]{name}: did not complete: {err}[/red]", highlight=False)
    rate = result.pass_rate
    console.print(
        f"{len(result.attempts)}/{req.repeat} complete, pass rate "
        + ("-" if rate is None else f"{rate:.2f}")
        + f"; results in {req.output}",
        highlight=False,
    )


__all__ = ["progress_line", "raw_task_cmd"]
