"""``skillci evals plan | run --shard i/N | merge``: the release gate split over CI jobs.

``plan`` prints (and writes to ``$GITHUB_OUTPUT``) the GitHub Actions matrix; each matrix
job runs ``run --shard i/N --out DIR`` and uploads DIR as ``eval-<i>``; one last job
downloads them all and ``merge`` writes the GateReport an unsharded ``skillci gate`` would
have written (docs/design/110-sharded-gate.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions

app = typer.Typer(
    help="The release gate sharded over CI jobs: plan the matrix, run a shard, merge.",
    no_args_is_help=True,
)

SkillOpt = Annotated[
    str,
    typer.Option(
        "--skill",
        help="Skill package (skills/<name> or a name); 'auto': the one base..head changes.",
    ),
]
BaseOpt = Annotated[str, typer.Option("--base", help="Base ref.")]
HeadOpt = Annotated[str, typer.Option("--head", help="Head ref (the candidate).")]
SuitesOpt = Annotated[
    str,
    typer.Option(
        "--suites", help="Comma-separated suites (default: what the skill's metadata asks for)."
    ),
]
RepeatOpt = Annotated[int, typer.Option("--repeat", min=1, help="Repeats per task (max rounds).")]
ModelOpt = Annotated[str, typer.Option("--model", help="Student route.")]
NoSeqOpt = Annotated[bool, typer.Option("--no-sequential", help="No sequential early stop.")]
NoImpactOpt = Annotated[bool, typer.Option("--no-impact", help="Re-run every task on head.")]
SameOpt = Annotated[
    str | None, typer.Option("--same-instance", help="Task the patch was proposed for.")
]
TeacherOpt = Annotated[
    str | None,
    typer.Option(
        "--teacher", help="Also run this teacher and the skill-free student (GCR references)."
    ),
]
RepoOpt = Annotated[Path, typer.Option("--repo", help="Repository root.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def gate_options(
    repo: Path,
    skill: str,
    base: str,
    head: str,
    suites: str,
    repeat: int,
    model: str,
    parallel: int,
    no_sequential: bool,
    no_impact: bool,
    same: str | None,
    teacher: str | None = None,
) -> tuple[RepoContext, GateOptions]:
    """The repository and the gate options of the CLI's flags (``gate`` and ``evals``);
    ``--skill auto`` (or none) is the one skill base..head changes; no ``--suites`` means
    the suites the skill's metadata asks for."""
    from skillci.flows.gate import suites_for
    from skillci.flows.skills import changed_skill

    names = tuple(s.strip() for s in suites.split(",") if s.strip())
    ctx = RepoContext.open(repo)
    if not skill or skill == "auto":
        skill = changed_skill(ctx, base, head)
    if not names:
        names = suites_for(ctx, skill, head)
    opts = GateOptions(
        skill=skill,
        base=base,
        head=head,
        suites=names,
        repeat=repeat,
        student=model,
        parallel=parallel,
        sequential=not no_sequential,
        impact=not no_impact,
        same_instance_task=same,
        teacher=teacher,
    )
    return ctx, opts


@app.command("plan")
def plan_cmd(
    skill: SkillOpt = "auto",
    base: BaseOpt = "main",
    head: HeadOpt = "HEAD",
    suites: SuitesOpt = "",
    repeat: RepeatOpt = 3,
    model: ModelOpt = "sim/student",
    shards: Annotated[int, typer.Option("--shards", min=1, help="Jobs to split into.")] = 3,
    no_sequential: NoSeqOpt = False,
    no_impact: NoImpactOpt = False,
    same: SameOpt = None,
    teacher: TeacherOpt = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Print the matrix of shard jobs (also ``matrix=`` in $GITHUB_OUTPUT)."""
    from skillci.flows.gate_shard import effective_shards, plan_gate
    from skillci.forge.actions import set_output

    ctx, opts = gate_options(
        repo, skill, base, head, suites, repeat, model, 1, no_sequential, no_impact, same, teacher
    )
    plan = plan_gate(ctx, opts)
    matrix = plan.matrix(shards)
    set_output("matrix", json.dumps(matrix, separators=(",", ":")))
    set_output("skill", opts.skill)
    set_output("gate_id", plan.gate_id)
    set_output("shards", str(effective_shards(plan, shards)))
    if json_out:
        emit_json({"plan": plan, "matrix": matrix})
    else:
        console.print(json.dumps(matrix, separators=(",", ":")), markup=False)
        err_console.print(
            f"{len(plan.units)} unit(s) of {plan.gate_id} over "
            f"{effective_shards(plan, shards)} shard(s) (plan {plan.plan_id})"
        )
    return 0


@app.command("run")
def run_cmd(
    shard: Annotated[str, typer.Option("--shard", help="i/N: this job's shard (0-based).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for shard.json + records/.")],
    skill: SkillOpt = "auto",
    base: BaseOpt = "main",
    head: HeadOpt = "HEAD",
    suites: SuitesOpt = "",
    repeat: RepeatOpt = 3,
    model: ModelOpt = "sim/student",
    parallel: Annotated[int, typer.Option("--parallel", min=1, help="Trials at once.")] = 2,
    no_sequential: NoSeqOpt = False,
    no_impact: NoImpactOpt = False,
    same: SameOpt = None,
    teacher: TeacherOpt = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Run one shard's trials (all rounds) and write them to --out."""
    from skillci.flows.gate_shard import parse_shard, run_shard

    i, n = parse_shard(shard)
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
        same,
        teacher,
    )
    res = run_shard(ctx, opts, i, n, out)
    if json_out:
        emit_json(res)
    else:
        console.print(
            f"shard {i}/{n} of {res.gate_id}: {len(res.units)} unit(s), {len(res.trials)} "
            f"trial(s) ({res.ran} run, {res.cached} cached) -> {out}"
        )
    errors = sum(1 for t in res.trials if t.run_id is None)
    return int(ExitCode.EXTERNAL if errors else ExitCode.OK)


@app.command("merge")
def merge_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Every shard's --out directory.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the GateReport JSON here.")
    ] = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """One GateReport from all shards (kept in the trace store); exit 1 when rejected."""
    from skillci.flows.gate_shard import merge_shards
    from skillci.forge.actions import add_summary, set_output
    from skillci.fsutil import atomic_write_text
    from skillci.gate.report import render_markdown

    ctx = RepoContext.open(repo)
    report = merge_shards(ctx, dirs)
    if out is not None:
        atomic_write_text(out, report.model_dump_json(indent=2) + "\n")
    set_output("gate_id", report.gate_id)
    set_output("verdict", report.verdict)
    add_summary(render_markdown(report, marker=False))
    if json_out:
        emit_json(report)
    else:
        console.print(render_markdown(report, marker=False), markup=False)
    return int(ExitCode.OK if report.accepted else ExitCode.REJECTED)
