"""``skillci dashboard``: show, update, apply (docs/github.md, "The dashboard issue")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillci.cli.options import DryOpt, ForgeOpt, JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json, to_jsonable
from skillci.errors import UsageError

app = typer.Typer(
    help="The repository's dashboard issue: show, update, act on ticked boxes.",
    no_args_is_help=True,
)


def _ctx(repo: Path, dry_run: bool, forge: str | None):  # type: ignore[no-untyped-def]
    from skillci.flows.context import RepoContext

    return RepoContext.open(repo, dry_run=dry_run, forge=forge)


@app.command("show")
def show_cmd(
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Render from the current state; write nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> int:
    """Print the dashboard as the forge keeps it (or --fresh: as it would be now)."""
    from skillci.flows import dashboard

    ctx = _ctx(repo, True, forge)
    if fresh:
        res = dashboard.update(ctx)
        if json_out:
            emit_json({"data": res.data, "body": res.body})
        else:
            console.print(res.body, markup=False, end="")
        return 0
    current = dashboard.show(ctx)
    if json_out:
        emit_json({"dashboard": current})
    elif current is None:
        console.print("no dashboard yet (skillci dashboard update writes it)")
    else:
        console.print(current.body, markup=False, end="")
    return 0


@app.command("update")
def update_cmd(
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Collect PRs, gate states, canaries and channel moves; rewrite the dashboard."""
    from skillci.flows import dashboard

    ctx = _ctx(repo, dry_run, forge)
    res = dashboard.update(ctx)
    if json_out:
        emit_json({**to_jsonable(res), "forge": to_jsonable(ctx.forge_choice)})
    elif dry_run:
        console.print(res.body, markup=False, end="")
    else:
        console.print(f"dashboard written: {res.location}", markup=False)
    return 0


@app.command("apply")
def apply_cmd(
    repo: RepoOpt = Path("."),
    forge: ForgeOpt = None,
    model: Annotated[str, typer.Option("--model", help="Student route for re-runs.")] = (
        "sim/student"
    ),
    rerun_mode: Annotated[
        str,
        typer.Option(
            "--rerun",
            help="How a ticked re-run is done: 'gate' runs the gate here and posts it; "
            "'label' adds skillci:rerun so the PR workflow gates it (GitHub).",
        ),
    ] = "gate",
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Act on the ticked boxes (the edited issue of an ``issues: edited`` event, else the
    dashboard as the forge keeps it), then rewrite the dashboard."""
    from skillci.flows import dashboard
    from skillci.flows.actions import read_event
    from skillci.flows.review import review

    ctx = _ctx(repo, dry_run, forge)
    event = read_event() or {}
    issue = event.get("issue") if isinstance(event.get("issue"), dict) else None
    body = str(issue.get("body") or "") if issue else None

    def rerun(c, number: int) -> str:  # type: ignore[no-untyped-def]
        return review(c, number, repeat=3, student=model, suites=(), post=True).verdict

    if rerun_mode not in ("gate", "label"):
        raise UsageError(f"--rerun {rerun_mode!r}", hint="use gate or label")
    res = dashboard.apply(ctx, body, rerun if rerun_mode == "gate" else dashboard.rerun_by_label)
    if json_out:
        emit_json({**to_jsonable(res), "forge": to_jsonable(ctx.forge_choice)})
        return 0
    for line in [*res.outcomes, *(f"ignored: {x}" for x in res.ignored)]:
        console.print(line, markup=False)
    if not res.actions:
        console.print("no ticked box to act on", markup=False)
    return 0
