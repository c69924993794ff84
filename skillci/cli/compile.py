"""``skillci compile``: model profiles, static compile, Fast and Deep optimization."""

from __future__ import annotations

from pathlib import Path

import typer

from skillci.cli.choices import Scorer, StaticMode
from skillci.cli.output import console, emit_json, err_console

app = typer.Typer(
    help="Compile a skill for a target student: profile, static, fast, deep.",
    no_args_is_help=True,
)
deep_app = typer.Typer(
    help="Deep optimization: scored local edits, re-executed.", no_args_is_help=True
)
app.add_typer(deep_app, name="deep")


def _root() -> Path:
    from skillci.flows.command import find_repo_root

    return find_repo_root() or Path.cwd()


def _say(quiet: bool):  # type: ignore[no-untyped-def]
    def say(msg: str) -> None:
        if not quiet:
            err_console.print(msg, highlight=False, markup=False)

    return say


@app.command("profile")
def profile_cmd(
    model: str = typer.Option(..., "--model", help="Student route (provider_routes.json)."),
    from_store: bool = typer.Option(
        False, "--from-store", help="Measure traits from the trace store's runs of this route."
    ),
    harness: str = typer.Option("skillci-builtin", "--harness", help="Agent harness."),
    home: Path | None = typer.Option(None, "--home", help="Trace store (default .skillci)."),
    out: Path | None = typer.Option(
        None, "--out", help="Profile file (default profiles/<route slug>.yaml)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print it; write nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Build the student's profile: config, plus traits measured from its runs."""
    from skillci.flows.profile import build_student_profile, dump_profile

    built = build_student_profile(
        model, harness, root=_root(), from_store=from_store, home=home, out=out, dry_run=dry_run
    )
    path, prof = built.path, built.profile
    if json_out:
        emit_json(
            {"path": str(path), "written": not dry_run, "revision": prof.revision, "profile": prof}
        )
    else:
        console.print(dump_profile(prof), markup=False, end="")
        verb = "would write" if dry_run else "wrote"
        err_console.print(f"{verb} {path} ({prof.traits.runs} run(s) measured)")
    return 0


@app.command("static")
def static_cmd(
    model: str = typer.Option(..., "--model", help="Target student route."),
    input_dir: Path = typer.Option(
        ..., "--input", help="Skill package, plain skill folder, or a folder with one skill."
    ),
    out_root: Path = typer.Option(
        Path("results/static-compiled-skills"), "--out-root", help="Output root."
    ),
    mode: StaticMode = typer.Option(
        "deterministic", "--mode", help="hybrid adds a planning model."
    ),
    external_model: str | None = typer.Option(
        None, "--external-model", help="Planning model route (hybrid mode; required there)."
    ),
    harness: str = typer.Option(
        "skillci-builtin", "--harness", help="Harness the student runs in."
    ),
    profile: Path | None = typer.Option(None, "--profile", help="Profile file to use."),
    base: str = typer.Option("main", "--base", help="Base branch of the PR (in a repo)."),
    no_pr: bool = typer.Option(False, "--no-pr", help="Write files only; no branch or PR."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing, call no model."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Rewrite a skill for the student: steps, concrete checks, budget, verification."""
    from skillci.flows.pipeline.static_stage import StaticRequest, default_out, run_static
    from skillci.flows.profile import load_profile

    root = _root()
    req = StaticRequest(
        model=model,
        input=input_dir,
        out=default_out(out_root, model),
        mode=mode,
        external_model=external_model,
        dry_run=dry_run,
        harness=harness,
        profile=load_profile(profile) if profile else None,
        profile_roots=[Path.cwd(), root],
        state_dir=root / ".skillci",
        propose=not no_pr,
        base=base,
    )
    o = run_static(req)
    r = o.report
    if json_out:
        emit_json(
            {
                "out": str(o.out),
                "skill_dir": str(o.skill_dir),
                "written": o.written,
                "pr": o.pr_notes,
                "report": r,
            }
        )
        return 0
    console.print(
        f"{'would write' if dry_run else 'wrote'} {o.skill_dir} ({r.mode}, plan: {r.plan_source})",
        highlight=False,
    )
    for s in r.sections:
        if s.status != "unchanged":
            why = "; ".join(s.reasons) if s.reasons else "; ".join(s.changes)
            console.print(
                f"  {s.file} § {s.title or '(preamble)'}: {s.status} — {why}", highlight=False
            )
    for op in r.ops:
        console.print(
            f"  {op.kind}: {'applied' if op.applied else 'skipped'} — {op.detail}", highlight=False
        )
    console.print(
        f"  bootstrap {r.bootstrap_before} -> {r.bootstrap_after} tokens (budget "
        f"{r.bootstrap_budget}); lint errors {r.lint_errors_before} -> {r.lint_errors_after}",
        highlight=False,
    )
    for n in r.notes:
        console.print(f"  note: {n}", highlight=False)
    for n in o.pr_notes:
        console.print(f"  repo: {n}", highlight=False)
    return 0


@app.command("fast")
def fast_cmd(
    traces: str = typer.Option(
        ..., "--traces", help="Dir of run records / trial dirs, or store:task=<id>[,skill=<hash>]."
    ),
    skill: Path = typer.Option(..., "--skill", help="The skill package the traces ran with."),
    model: str = typer.Option(..., "--model", help="Compiler route (lessons)."),
    rm_api_url: str = typer.Option(
        "http://127.0.0.1:28080", "--rm-api-url", help="AgentRM-compatible reward model."
    ),
    no_rm: bool = typer.Option(False, "--no-rm", help="Rank by the deterministic pre-scores."),
    score_output: Path | None = typer.Option(None, "--score-output", help="Scores JSON file."),
    output: Path | None = typer.Option(None, "--output", help="Output dir."),
    max_parallel: int = typer.Option(1, "--max-parallel", min=1, help="Compiler calls at once."),
    force: bool = typer.Option(False, "--force", help="Ignore the cache."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Lessons from >= 6 scored trajectories -> one bounded patch -> a candidate."""
    from skillci.flows.pipeline.fast_stage import FastRequest, run_fast_stage

    out = output or Path("results/fast") / skill.resolve().name
    o = run_fast_stage(
        FastRequest(
            traces=traces,
            skill=skill,
            model=model,
            output=out,
            rm_url=rm_api_url,
            no_rm=no_rm,
            score_output=score_output,
            max_parallel=max_parallel,
            force=force,
            state_dir=_root() / ".skillci",
        )
    )
    r = o.report
    if json_out:
        emit_json({"candidate": str(o.candidate_dir), "cached": o.cached, "report": r})
        return 0
    console.print(
        f"candidate {o.candidate_dir}{' (cached)' if o.cached else ''}: "
        + (f"patch {r.patch.pid}" if r.patch else "unchanged (no new lesson)"),
        highlight=False,
    )
    console.print(
        f"  {r.trajectories} trajectories; scoring: "
        + (
            f"reward model {r.reward_model}" if r.reward_model else f"pre-scores only ({r.rm_note})"
        ),
        highlight=False,
    )
    for m in r.merged:
        console.print(f"  {m.kind}: {m.text} (support {m.support})", highlight=False)
    for c in r.conflicts:
        console.print(f"  conflict dropped: {c}", highlight=False)
    return 0


def _deep_summary(output: Path, json_out: bool) -> int:
    from skillci.flows.pipeline.deep_stage import load_state

    st = load_state(output)
    if json_out:
        emit_json({"output": str(output), "s_final": str(output / "S_final"), "state": st})
        return 0
    console.print(f"S_final {output / 'S_final'} ({(st.final_hash or '')[:12]})", highlight=False)
    for e in st.edits:
        console.print(
            f"  edit {e.index} {e.unit} {e.dimension}: {e.status}"
            + (f" — {'; '.join(e.reasons)}" if e.reasons else ""),
            highlight=False,
        )
    return 0


@deep_app.command("run")
def deep_run_cmd(
    skill: Path = typer.Option(..., "--skill", help="The skill package (Fast's candidate)."),
    traces: str | None = typer.Option(
        None, "--traces", help="Rollouts of --skill (baseline); omit to roll out first."
    ),
    output: Path = typer.Option(..., "--output", help="Deep run dir."),
    model: str = typer.Option(..., "--model", help="Compiler route (edits; simulators: curated)."),
    student: str | None = typer.Option(None, "--student", help="Student route (default: traces')."),
    task: str | None = typer.Option(None, "--task", help="Task id or dir (default: traces')."),
    tasks_root: Path | None = typer.Option(None, "--tasks-root", help="Default evals/tasks."),
    rounds: int = typer.Option(3, "--rounds", min=0, help="Edits executed at most."),
    scorer: Scorer = typer.Option(
        "rubric", "--scorer", help="rubric (deterministic) or model (the compiler scores)."
    ),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Rollouts per batch."),
    max_parallel: int = typer.Option(1, "--max-parallel", min=1, help="Trials at once."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Score, edit, validate, re-run; commit only edits that help without regressions."""
    from skillci.flows.pipeline.deep_cmd import DeepRequest, start_deep
    from skillci.flows.pipeline.deep_stage import run_deep

    root = _root()
    ctx, state = start_deep(
        DeepRequest(
            skill=skill,
            output=output,
            model=model,
            traces=traces,
            student=student,
            task=Path(task) if task else None,
            tasks_root=tasks_root or root / "evals" / "tasks",
            rounds=rounds,
            repeat=repeat,
            max_parallel=max_parallel,
            scorer=scorer,
            progress=_say(quiet or json_out),
        )
    )
    run_deep(ctx, state)
    return _deep_summary(output, json_out)


@deep_app.command("resume")
def deep_resume_cmd(
    run: Path = typer.Option(..., "--run", help="The Deep run dir to continue."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Continue a Deep run exactly where it stopped."""
    from skillci.flows.pipeline.deep_cmd import resume_deep
    from skillci.flows.pipeline.deep_stage import run_deep

    ctx, state = resume_deep(run, progress=_say(quiet or json_out))
    run_deep(ctx, state)
    return _deep_summary(run, json_out)
