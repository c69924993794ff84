"""``skillci eval run``: run a suite for a skill and a model, with a live trial display."""

from __future__ import annotations

import dataclasses
import enum
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.live import Live
from rich.table import Table

from skillci.cli.choices import Rerun, Role, Sandbox
from skillci.cli.options import (
    JUDGE_HELP,
    ConcurrencyOpt,
    EnvOpt,
    HarborOpt,
    MaxTrialsOpt,
    RunnerOpt,
    remote_from_flags,
)
from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode
from skillci.flows.command import default_home
from skillci.flows.evalrun import (
    Budget,
    EvalRequest,
    EvalResult,
    TrialRun,
    agent_names,
    cached,
    first_error,
    plan_eval,
    run_eval,
    sandbox_mode,
)
from skillci.flows.plugins import eval_agent_help, sandbox_help

app = typer.Typer(help="Run evaluation suites.", no_args_is_help=True)

if TYPE_CHECKING:
    AgentName = str
else:  # the choices come from the agent registry (plug-ins included)
    AgentName = enum.StrEnum("AgentName", {n: n for n in agent_names()})

_STYLE = {
    "passed": "green",
    "failed": "red",
    "running": "yellow",
    "queued": "dim",
    "skipped": "dim",
}


class TrialBoard:
    """Per-trial state and elapsed time: a live table on a terminal, lines otherwise."""

    def __init__(self, live: bool) -> None:
        self.rows: dict[str, TrialRun] = {}
        self.started: dict[str, float] = {}
        self.live = live

    def update(self, o: TrialRun) -> None:
        if o.state == "running":
            self.started[o.key] = time.monotonic()
        self.rows[o.key] = o
        if not self.live and o.state not in ("queued", "running"):
            tag = "cached" if o.cached else f"{o.wall_time_sec:.1f}s"
            err_console.print(f"{o.task_id} #{o.repeat_index}: {o.state} ({tag})", highlight=False)

    def __rich__(self) -> Table:
        table = Table(box=None, pad_edge=False)
        for col in ("task", "#", "state", "elapsed"):
            table.add_column(col)
        now = time.monotonic()
        for o in self.rows.values():
            if o.state == "running":
                elapsed = f"{now - self.started.get(o.key, now):.1f}s"
            elif o.cached:
                elapsed = "cached"
            else:
                elapsed = f"{o.wall_time_sec:.1f}s" if o.state not in ("queued", "skipped") else ""
            style = _STYLE.get(o.state, "magenta")
            table.add_row(o.task_id, str(o.repeat_index), f"[{style}]{o.state}[/]", elapsed)
        return table


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def render_summary(res: EvalResult) -> None:
    table = Table(title="pass rate per task")
    for col in ("task", "trials", "passed", "pass rate", "mean reward", "no verdict"):
        table.add_column(col, justify="left" if col == "task" else "right")
    for t in res.tasks:
        table.add_row(
            t.task_id,
            str(t.trials),
            str(t.passed),
            _rate(t.pass_rate),
            _rate(t.mean_reward),
            str(t.errors),
        )
    console.print(table)
    known = [t for t in res.trials if t.input_tokens is not None and t.output_tokens is not None]
    tokens = sum((t.input_tokens or 0) + (t.output_tokens or 0) for t in known)
    unknown = len(res.trials) - len(known)  # imported/unknown counts are not 0
    usd = sum(t.usd or 0.0 for t in res.trials)
    console.print(
        f"overall pass rate {_rate(res.pass_rate)}; {res.cached} cached, {res.ran} run"
        + (f", {res.skipped} skipped" if res.skipped else "")
        + (f", {res.errors} errors" if res.errors else "")
        + (f", {res.unsupported} environment unsupported" if res.unsupported else "")
        + f"; {tokens} tokens"
        + (f" (+ {unknown} trial(s) with unknown tokens)" if unknown else "")
        + f", ${usd:.4f}",
        highlight=False,
    )
    if res.budget_stop:
        console.print(f"[yellow]stopped early: {res.budget_stop}[/yellow]")
    for w in res.warnings:
        err_console.print(f"[bold red]warning:[/bold red] {w}")


SANDBOX_HELP = sandbox_help()
AGENT_HELP = eval_agent_help()


@app.command("run")
def run_cmd(
    suite: str = typer.Option(None, "--suite", help="Suite name (evals/suites/<name>.yaml)."),
    task: list[str] = typer.Option(
        [], "--task", help="Task id or dir (repeatable) instead of a suite."
    ),
    skill: str = typer.Option("none", "--skill", help="Skill package dir, or 'none'."),
    model: str = typer.Option("sim/student", "--model", help="Model route (provider_routes.json)."),
    role: Role = typer.Option("student", "--role", help="Role recorded in the runs."),
    agent: AgentName = typer.Option(
        "builtin",
        "--agent",
        help=AGENT_HELP,
    ),
    agent_version: str = typer.Option(
        None, "--agent-version", help="Real agent version (default: newest installed)."
    ),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Trials per task."),
    parallel: int = typer.Option(1, "--parallel", min=1, help="Model calls at once (not trials)."),
    seed: int = typer.Option(0, "--seed", help="Seed of repeat 0 (repeat i uses seed + i)."),
    max_steps: int = typer.Option(None, "--max-steps", min=1, help="Model calls per trial."),
    sandbox: Sandbox | None = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    require_skill: bool = typer.Option(
        False, "--require-skill", help="Fail trials that never loaded the skill."
    ),
    cache_responses: bool = typer.Option(
        False, "--cache-responses", help="Cache student answers too."
    ),
    max_usd: float = typer.Option(None, "--max-usd", min=0, help="Budget for the whole command."),
    max_tokens: int = typer.Option(
        None, "--max-tokens", min=0, help="Token budget for the command."
    ),
    max_calls: int = typer.Option(
        None, "--max-calls", min=0, help="Model-call budget for the command."
    ),
    trial_max_usd: float = typer.Option(None, "--trial-max-usd", min=0, help="Budget per trial."),
    trial_max_tokens: int = typer.Option(
        None, "--trial-max-tokens", min=0, help="Tokens per trial."
    ),
    keep_workspace: bool = typer.Option(False, "--keep-workspace", help="Keep trial workspaces."),
    judge: str = typer.Option(None, "--judge", help=JUDGE_HELP),
    rerun: Rerun = typer.Option(
        "errors",
        "--rerun",
        help="errors: reuse complete trials, re-run failed measurements (the default); "
        "all: re-run every trial.",
    ),
    home: Path = typer.Option(None, "--home", help="State dir (default: <repo>/.skillci)."),
    root: Path = typer.Option(Path("."), "--root", help="Repo root holding evals/."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the trials; run nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    runner: RunnerOpt = None,
    env: EnvOpt = None,
    concurrency: ConcurrencyOpt = None,
    max_trials: MaxTrialsOpt = None,
    harbor: HarborOpt = None,
) -> int:
    """Run trials of a suite: `skillci eval run --suite validation --skill skills/x --model sim/student`."""
    remote = remote_from_flags(runner, env, concurrency, max_trials, None, harbor)
    if remote is not None and max_usd is not None:  # the command's budget, held remotely
        remote = dataclasses.replace(remote, max_usd=max_usd)
    req = EvalRequest(
        root=root.resolve(),
        suite=suite,
        tasks=task,
        skill=None if skill == "none" else Path(skill),
        agent=str(agent),
        agent_version=agent_version,
        model=model,
        role=role,
        repeats=repeat,
        parallel=parallel,
        seed=seed,
        max_steps=max_steps,
        sandbox=sandbox_mode(sandbox),
        require_skill=require_skill,
        cache_responses=cache_responses,
        keep_workspace=keep_workspace,
        judge=judge,
        rerun=rerun,
        trial_budget=Budget(max_usd=trial_max_usd, max_tokens=trial_max_tokens),
        command_budget=Budget(max_usd=max_usd, max_tokens=max_tokens, max_calls=max_calls),
        home=(home or default_home(root.resolve())).resolve(),
        remote=remote,
    )
    if dry_run:
        return _dry_run(req, json_out)
    board = TrialBoard(live=console.is_terminal and not json_out)
    if board.live:
        with Live(board, console=console, refresh_per_second=4, transient=False):
            result = run_eval(req, progress=board.update)
    else:
        result = run_eval(req, progress=board.update if not json_out else None)
    if json_out:
        emit_json(result)
    else:
        render_summary(result)
    return measurement_errors(result)


def _dry_run(req: EvalRequest, json_out: bool) -> int:
    """``eval run --dry-run``: the trials, and which would be reused."""
    rows = [
        {
            "task": s.task.id,
            "repeat": s.repeat_index,
            "seed": s.seed,
            "cached": req.rerun != "all" and cached(s),
        }
        for s in plan_eval(req)
    ]
    if json_out:
        emit_json(rows)
        return 0
    for r in rows:
        console.print(
            f"would {'reuse' if r['cached'] else 'run'} {r['task']} #{r['repeat']} (seed {r['seed']})"
        )
    n = sum(bool(r["cached"]) for r in rows)
    console.print(f"{len(rows)} trials: {n} cached, {len(rows) - n} to run")
    return 0


def measurement_errors(result: EvalResult) -> int:
    """Exit 4 with the first cause on one line when trials failed to measure (a model
    route, sandbox or verifier failed: no verdict, nothing cached; docs/design/300)."""
    cause = first_error(result)
    if cause is None:
        return int(ExitCode.OK)
    err_console.print(
        f"error: {result.errors} trial(s) measured nothing (not the skill's failure); "
        f"first: {cause} (hint: fix the cause and re-run: failed trials are not cached)",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return int(ExitCode.EXTERNAL)


@app.command("regrade")
def regrade_cmd(
    suite: str = typer.Option(None, "--suite", help="Suite name (evals/suites/<name>.yaml)."),
    task: list[str] = typer.Option(
        [], "--task", help="Task id or dir (repeatable) instead of a suite."
    ),
    home: Path = typer.Option(None, "--home", help="State dir (default: <repo>/.skillci)."),
    root: Path = typer.Option(Path("."), "--root", help="Repo root holding evals/."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be regraded."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Re-run only the verifier on stored trials whose task changed in its tests alone:
    `skillci eval regrade --suite validation`. Regraded trials are reused by `eval run`
    and the gate (docs/eval.md)."""
    from skillci.flows.regrade import regrade

    res = regrade(
        root.resolve(),
        (home or default_home(root.resolve())).resolve(),
        suite=suite,
        tasks=task,
        dry_run=dry_run,
    )
    if json_out:
        emit_json(res)
        return 0
    for t in res.trials:
        if t.skipped is not None:
            console.print(f"{t.task_id} #{t.repeat_index} {t.old_run_id}: skipped ({t.skipped})")
        elif res.dry_run:
            console.print(
                f"would regrade {t.task_id} #{t.repeat_index} {t.old_run_id} "
                f"({t.old_state}, reward {t.old_reward})",
                highlight=False,
            )
        else:
            console.print(
                f"{t.task_id} #{t.repeat_index} {t.old_run_id} -> {t.new_run_id}: reward "
                f"{t.old_reward} -> {t.new_reward} ({t.old_state} -> {t.new_state})",
                highlight=False,
            )
    table = Table(title="regrade: reward per task (old -> new)")
    for col in ("task", "trials", "old reward", "new reward", "passed old -> new"):
        table.add_column(col, justify="left" if col == "task" else "right")
    for d in res.tasks:
        new_passed = "-" if d.new_passed is None else str(d.new_passed)
        table.add_row(
            d.task_id,
            str(d.trials),
            _rate(d.old_mean_reward),
            _rate(d.new_mean_reward),
            f"{d.old_passed} -> {new_passed}",
        )
    console.print(table)
    n = sum(t.skipped is None for t in res.trials)
    verb = "would regrade" if res.dry_run else "regraded"
    console.print(f"{verb} {n} trial(s); {len(res.trials) - n} skipped", highlight=False)
    return 0


# `skillci eval raw-task` (seed 000's raw-task evaluation) lives in its own module.
from skillci.cli.rawtask import raw_task_cmd  # noqa: E402

app.command("raw-task")(raw_task_cmd)

# `skillci eval triggers` (issue 20) lives in its own module.
from skillci.cli.triggers import triggers_cmd  # noqa: E402

app.command("triggers")(triggers_cmd)
