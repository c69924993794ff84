"""``skillci canary``: canary a release, analyze it, promote it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from skillci.cli.options import DryOpt, ForgeOpt, JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json
from skillci.cli.release import ActorOpt, open_context, print_event, resolve_actor, split_ref
from skillci.errors import ExitCode

if TYPE_CHECKING:
    from skillci.flows.canary import CanaryAnalysis

app = typer.Typer(help="Canary a release, analyze it, promote it.", no_args_is_help=True)


@app.command("start")
def canary_start_cmd(
    spec: Annotated[str, typer.Argument(help="<skill>@<version>, a released version.")],
    weight: Annotated[
        int, typer.Option("--weight", min=1, max=100, help="Percent of requests.")
    ] = 10,
    force: Annotated[
        bool,
        typer.Option("--force", help="Canary a version without a passing gate's stamp (recorded)."),
    ] = False,
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Serve a released version to WEIGHT% of requests (by request-id hash)."""
    from skillci.flows.canary import canary_start

    skill, version = split_ref(spec)
    ev = canary_start(
        open_context(repo, dry_run),
        skill,
        version,
        weight=weight,
        actor=resolve_actor(actor, repo),
        force=force,
    )
    if json_out:
        emit_json({"event": ev})
    else:
        print_event(ev, "nothing to do")
    return 0


def _print_analysis(a: CanaryAnalysis) -> None:
    color = {"pass": "green", "fail": "red", "inconclusive": "yellow"}[a.outcome]
    console.print(
        f"[bold {color}]{a.outcome.upper()}[/] {escape(a.skill)} canary {a.canary.version} vs "
        f"stable {a.stable.version} since {a.window_start} ({a.analysis_id})"
    )
    table = Table()
    for col in ("check", "value", "threshold", ""):
        table.add_column(col, overflow="fold")
    for c in a.checks:
        mark = "n/a" if c.passed is None else ("pass" if c.passed else "[red]FAIL[/]")
        table.add_row(c.name, escape(c.value), escape(c.threshold), mark)
    console.print(table)
    for r in a.reasons:
        console.print(f"- {escape(r)}")
    if a.excluded:
        console.print(
            "not counted: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in a.excluded.items())
        )
    if a.action != "none":
        console.print(f"action: {a.action} (channel log #{a.event_seq})")
    if a.note:
        console.print(escape(a.note))


@app.command("analyze")
def canary_analyze_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    auto: Annotated[
        bool, typer.Option("--auto", help="Promote on pass, roll back on fail.")
    ] = False,
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Compare canary vs stable production records since the canary started.

    Outcome pass (exit 0), fail (exit 1) or inconclusive (exit 0: keep waiting).
    With the GitHub forge, channel refs are fetched first and pushed after a move.
    """
    from skillci.flows.canary_ci import analyze_synced

    ctx = open_context(repo, dry_run, forge)
    a = analyze_synced(ctx, skill, auto=auto)
    if json_out:
        from skillci.cli.output import to_jsonable

        emit_json({**to_jsonable(a), "forge": to_jsonable(ctx.forge_choice)})
    else:
        _print_analysis(a)
    return int(ExitCode.REJECTED if a.outcome == "fail" else ExitCode.OK)


@app.command("list")
def canary_list_cmd(
    active: Annotated[bool, typer.Option("--active", help="Only skills with a canary.")] = False,
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    json_out: JsonOpt = False,
) -> int:
    """Skills with a running canary (the matrix of the scheduled canary workflow).

    Also writes ``skills=<JSON list>`` to $GITHUB_OUTPUT under GitHub Actions.
    """
    import json

    from skillci.flows.actions import set_output
    from skillci.flows.canary_ci import active_canaries

    _ = active  # only active canaries are listed; the flag says so in workflows
    ctx = open_context(repo, forge=forge)
    rows = active_canaries(ctx)
    set_output("skills", json.dumps([r.skill for r in rows]))
    if json_out:
        emit_json(rows)
    elif not rows:
        console.print("no canary is running")
    for r in rows if not json_out else []:
        console.print(
            f"{escape(r.skill)}: canary {r.canary} ({r.weight}%) vs stable {r.stable or '-'} "
            f"since {r.since}"
        )
    return 0


@app.command("promote")
def canary_promote_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Why (one line).")] = None,
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Move stable to the running canary by hand."""
    from skillci.flows.canary import promote

    ev = promote(
        open_context(repo, dry_run), skill, actor=resolve_actor(actor, repo), reason=reason or ""
    )
    if json_out:
        emit_json({"event": ev})
    else:
        print_event(ev, "nothing to do")
    return 0
