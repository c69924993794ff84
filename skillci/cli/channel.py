"""``skillci channel``: release channels (stable, canary) kept as git refs, and their log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from skillci.cli.options import DryOpt, JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json
from skillci.cli.release import ActorOpt, moves_text, open_context, print_event, resolve_actor

app = typer.Typer(
    help="Release channels (stable, canary) kept as git refs, and their log.",
    no_args_is_help=True,
)


@app.command("init")
def channel_init_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name or dir.")],
    ref: Annotated[
        str, typer.Option("--ref", help="Branch whose version becomes stable.")
    ] = "main",
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Point stable at the skill's current version (tagging <skill>@<version> if untagged)."""
    from skillci.flows.canary import channel_init

    ev = channel_init(open_context(repo, dry_run), skill, ref=ref, actor=resolve_actor(actor, repo))
    if json_out:
        emit_json({"event": ev})
    else:
        print_event(ev, "stable is already set; nothing to do")
    return 0


@app.command("log")
def channel_log_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Every channel move of a skill (who, what, why, from -> to, gate/analysis, when)."""
    from skillci.flows.canary import channel_log

    events = channel_log(repo, skill)
    if json_out:
        emit_json(events)
        return 0
    table = Table(title=escape(f"channel log of {skill} ({len(events)} event(s))"))
    for col in ("#", "when", "event", "moves", "who", "why", "evidence"):
        table.add_column(col, overflow="fold")
    for ev in events:
        table.add_row(
            str(ev.seq),
            f"{ev.at:%Y-%m-%d %H:%M:%S}",
            ev.type + (f" {ev.version}" if ev.version else ""),
            escape(moves_text(ev)),
            escape(ev.actor),
            escape(ev.reason),
            escape(ev.gate_id or ev.analysis_id or ""),
        )
    console.print(table)
    return 0


@app.command("show")
def channel_show_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Where stable and canary point now, and every release."""
    from skillci.flows.canary import channel_state

    state = channel_state(repo, skill)
    if json_out:
        emit_json(state)
        return 0
    if state is None:
        console.print(f"{skill} has no channels (run `skillci channel init {skill}`)")
        return 0
    for name in ("stable", "canary"):
        p = state.pointer(name)
        if p is None:
            console.print(f"{name}: -")
        else:
            w = f", weight {p.weight}%" if p.weight is not None else ""
            console.print(f"{name}: {p.version} ({p.tag}, {p.commit[:12]}{w}) since {p.since}")
    for v, info in state.releases.items():
        rb = f" — rolled back: {info.rolled_back}" if info.rolled_back else ""
        console.print(f"release {v}: {info.tag} gate {info.gate_id or '-'}{escape(rb)}")
    return 0
