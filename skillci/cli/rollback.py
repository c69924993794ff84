"""``skillci rollback``: clear a running canary, else move stable back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillci.cli.options import DryOpt, JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json
from skillci.cli.release import ActorOpt, open_context, print_event, resolve_actor

app = typer.Typer(add_completion=False)


@app.command("rollback")
def rollback_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    to: Annotated[
        str | None, typer.Option("--to", help="Move stable to this released version.")
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (one line).")] = None,
    mark_only: Annotated[
        bool,
        typer.Option(
            "--mark-only", help="Move nothing; mark rolled-back versions that are not yet."
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Move stable to a version without a passing gate's stamp (recorded).",
        ),
    ] = False,
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Roll back: clear a running canary, else move stable to the previous release.

    The rolled-back version is marked in the skill's CHANGELOG.md and compatibility.
    """
    from skillci.flows.canary import mark_pending, rollback

    if mark_only:
        commits = mark_pending(open_context(repo, dry_run), skill, actor=resolve_actor(actor, repo))
        if json_out:
            emit_json({"marked_commits": commits})
        else:
            console.print(f"{len(commits)} marking commit(s)")
        return 0
    ev, commit, marks = rollback(
        open_context(repo, dry_run),
        skill,
        to=to,
        reason=reason,
        actor=resolve_actor(actor, repo),
        force=force,
    )
    if json_out:
        emit_json({"event": ev, "marked_commit": commit, "marks": marks})
    else:
        print_event(ev, "nothing to roll back")
        for line in marks:
            console.print(escape(line))
        if commit:
            console.print(f"marked rolled back in {commit[:12]}")
    return 0
