"""``skillci evals plan | run --shard i/N | decide | merge``: the release gate split over CI
jobs.

``plan`` prints (and writes to ``$GITHUB_OUTPUT``) the GitHub Actions matrix; each matrix
job runs ``run --shard i/N --out DIR`` and uploads DIR as ``eval-<i>``; one last job
downloads them all and ``merge`` writes the GateReport an unsharded ``skillci gate`` would
have written (docs/design/110-sharded-gate.md). In rounds (docs/design/417): the matrix
runs ``run --round 1``; ``decide`` over the rounds so far says whether round K+1 is
dispatched (``run --round K+1 ... DIRS`` of rounds 1..K); ``merge`` takes every round's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from skillci.cli.options import (
    BaseOpt,
    HeadOpt,
    JsonOpt,
    JudgeOpt,
    ModelOpt,
    NoImpactOpt,
    NoSeqOpt,
    ParallelOpt,
    RepeatOpt,
    RepoOpt,
    SameOpt,
    SandboxOpt,
    SkillOpt,
    SuitesOpt,
    TeacherOpt,
    gate_from_flags,
)
from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode, InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.plugins import use_policy

app = typer.Typer(
    help="The release gate sharded over CI jobs: plan the matrix, run a shard (or a round "
    "of it), decide between rounds, merge.",
    no_args_is_help=True,
)


@app.command("plan")
def plan_cmd(
    skill: SkillOpt = "auto",
    base: BaseOpt = "main",
    head: HeadOpt = "HEAD",
    suites: SuitesOpt = "",
    repeat: RepeatOpt = 3,
    model: ModelOpt = None,
    shards: Annotated[int, typer.Option("--shards", min=1, help="Jobs to split into.")] = 3,
    no_sequential: NoSeqOpt = False,
    no_impact: NoImpactOpt = False,
    same: SameOpt = None,
    teacher: TeacherOpt = None,
    judge: JudgeOpt = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Print the matrix of shard jobs (also ``matrix=`` in $GITHUB_OUTPUT)."""
    from skillci.flows.actions import set_output
    from skillci.flows.gate_shard import effective_shards, plan_gate

    ctx, opts = gate_from_flags(
        repo,
        skill=skill,
        base=base,
        head=head,
        suites=suites,
        repeat=repeat,
        model=model,
        parallel=1,
        no_sequential=no_sequential,
        no_impact=no_impact,
        same=same,
        teacher=teacher,
        judge=judge,
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
    model: ModelOpt = None,
    parallel: ParallelOpt = 2,
    no_sequential: NoSeqOpt = False,
    no_impact: NoImpactOpt = False,
    same: SameOpt = None,
    teacher: TeacherOpt = None,
    judge: JudgeOpt = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
    sandbox: SandboxOpt = None,
    rnd: Annotated[
        int,
        typer.Option(
            "--round",
            min=0,
            help="Run round K only (1: base, references and head round 1; K>1: head round K "
            "of the suites still open after PREVIOUS). 0: every round at once.",
        ),
    ] = 0,
    remaining: Annotated[
        bool, typer.Option("--remaining", help="With --round K: run rounds K..--repeat.")
    ] = False,
    previous: Annotated[
        list[Path] | None,
        typer.Argument(help="With --round K>1: every shard directory of rounds 1..K-1."),
    ] = None,
) -> int:
    """Run one shard's trials (every round, or round --round) and write them to --out."""
    use_policy(sandbox)
    from skillci.flows.gate_rounds import run_round
    from skillci.flows.gate_shard import parse_shard, run_shard

    i, n = parse_shard(shard)
    ctx, opts = gate_from_flags(
        repo,
        skill=skill,
        base=base,
        head=head,
        suites=suites,
        repeat=repeat,
        model=model,
        parallel=parallel,
        no_sequential=no_sequential,
        no_impact=no_impact,
        same=same,
        teacher=teacher,
        judge=judge,
    )
    if rnd > 1:
        res = run_round(ctx, opts, i, n, out, previous or [], rnd=rnd, remaining=remaining)
    elif previous:
        raise InvalidInputError(
            "shard directories are read only with --round K > 1",
            hint="round 1 and the one-shot run (no --round) start from nothing",
        )
    else:
        res = run_shard(ctx, opts, i, n, out, rnd=rnd, remaining=remaining)
    if json_out:
        emit_json(res)
    else:
        what = f"round {res.round}" + (f"..{res.last_round}" if res.last_round > res.round else "")
        console.print(
            f"shard {i}/{n} of {res.gate_id}{f' ({what})' if res.round else ''}: "
            f"{len(res.units)} unit(s), {len(res.trials)} trial(s) ({res.ran} run, "
            f"{res.cached} cached) -> {out}"
        )
    errors = sum(1 for t in res.trials if t.run_id is None)
    return int(ExitCode.EXTERNAL if errors else ExitCode.OK)


@app.command("decide")
def decide_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Every shard directory of rounds 1..K.")],
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Between rounds: has the gate decided after rounds 1..K, or does round K+1 run?
    (also ``decided=true|false``, ``next_round=`` and the next round's ``matrix=`` in
    $GITHUB_OUTPUT)."""
    from skillci.flows.actions import set_output
    from skillci.flows.gate_rounds import decide_round

    d = decide_round(RepoContext.open(repo), dirs)
    set_output("decided", "true" if d.decided else "false")
    set_output("next_round", str(d.next_round or ""))
    set_output("rounds", str(d.rounds))
    set_output("matrix", json.dumps(d.matrix, separators=(",", ":")))  # the next round's shards
    if json_out:
        emit_json(d)
    elif d.decided:
        console.print(f"{d.gate_id}: decided after {d.rounds} of {d.repeat} round(s)")
    else:
        still = "; ".join(f"{s}: {', '.join(t)}" for s, t in d.open.items())
        console.print(
            f"{d.gate_id}: round {d.next_round} of {d.repeat} runs ({still})", markup=False
        )
    return 0


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
    from skillci.flows.actions import add_summary, set_output
    from skillci.flows.gate_shard import merge_shards
    from skillci.fsutil import atomic_write_text
    from skillci.present.report import render_markdown

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
    return int(ExitCode.of_verdict(report.verdict))
