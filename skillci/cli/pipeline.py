"""``skillci pipeline``: the resumable compile pipeline for one SkillsBench-style task."""

from __future__ import annotations

from pathlib import Path

import typer

from skillci.cli.choices import StaticMode
from skillci.cli.options import SandboxOpt
from skillci.cli.output import console, emit_json, err_console
from skillci.flows.plugins import use_policy

app = typer.Typer(add_completion=False)


@app.command("pipeline")
def pipeline_cmd(
    harness: str = typer.Option(..., "--harness", help="Agent harness (builtin)."),
    model: str = typer.Option(..., "--model", help="Target student route."),
    external_model: str = typer.Option(
        ..., "--external-model", help="Compiler route (planning, lessons, edits)."
    ),
    task: str = typer.Option(..., "--task", help="Task id under the tasks root."),
    skill: str | None = typer.Option(
        None, "--skill", help="The skill under test, when the task ships several."
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help="results/compile-pipeline/<run-id> (to resume one)."
    ),
    tasks_root: Path | None = typer.Option(
        None, "--tasks-root", help="Tasks dir (default <root>/evals/tasks)."
    ),
    root: Path | None = typer.Option(
        None, "--root", help="Project root (default: the git repo, else the cwd)."
    ),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Trials per eval stage."),
    fast_trajectories: int = typer.Option(
        6, "--fast-trajectories", min=6, help="Static-eval trials Fast learns from."
    ),
    rm_api_url: str = typer.Option(
        "http://127.0.0.1:28080", "--rm-api-url", help="Reward-model server Fast ranks with."
    ),
    no_rm: bool = typer.Option(False, "--no-rm", help="Fast ranks by pre-scores only."),
    deep_rounds: int = typer.Option(2, "--deep-rounds", min=0, help="Deep edits executed."),
    static_mode: StaticMode = typer.Option(
        "hybrid", "--static-mode", help="hybrid adds a planning model."
    ),
    max_parallel: int = typer.Option(1, "--max-parallel", min=1, help="Trials at once."),
    base: str = typer.Option("main", "--base", help="Base branch of the PR (in a repo)."),
    no_pr: bool = typer.Option(False, "--no-pr", help="Do not commit or open a PR."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the preconditions and show the plan."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    sandbox: SandboxOpt = None,
) -> int:
    """raw eval -> static -> eval -> Fast -> eval -> Deep -> final eval (-> PR)."""
    use_policy(sandbox)
    from skillci.flows.command import find_repo_root
    from skillci.flows.pipeline.run import PipelineOptions, run_pipeline

    def say(msg: str) -> None:
        if not (quiet or json_out):
            err_console.print(msg, highlight=False, markup=False)

    opts = PipelineOptions(
        harness=harness,
        model=model,
        external_model=external_model,
        task=task,
        skill=skill,
        root=(root or find_repo_root() or Path.cwd()).resolve(),
        run_dir=run_dir,
        tasks_root=tasks_root,
        repeat=repeat,
        fast_trajectories=fast_trajectories,
        rm_url=rm_api_url,
        no_rm=no_rm,
        max_parallel=max_parallel,
        deep_rounds=deep_rounds,
        static_mode=static_mode,
        publish=not no_pr,
        base=base,
        dry_run=dry_run,
        say=say,
    )
    out = run_pipeline(opts)
    m = out.manifest
    if json_out:
        emit_json(
            {"run_dir": str(out.run_dir), "ran": out.ran, "reused": out.reused, "manifest": m}
        )
        return 0
    if dry_run:
        console.print(f"run dir {out.run_dir} (dry run: nothing written)", highlight=False)
        for s in m.stages:
            console.print(f"  {s.name}: {s.status}", highlight=False)
        return 0
    from skillci.flows.pipeline.run import summary_markdown

    console.print(summary_markdown(m), markup=False)
    console.print(f"run dir {out.run_dir}", highlight=False)
    return 0
