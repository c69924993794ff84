"""``skillci release``, and the options and printers shared by the release commands
(``resolve``, ``rollback``, ``channel``, ``canary``).

Thin: parse -> call skillci.flows.release -> render.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from skillci.cli.options import DryOpt, ForgeOpt, JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json
from skillci.errors import ExitCode, InvalidInputError

if TYPE_CHECKING:
    from skillci.flows.canary import ChannelEvent

ActorOpt = Annotated[
    str | None,
    typer.Option("--actor", help="Who is acting (default: $SKILLCI_ACTOR, git identity, user)."),
]


def open_context(repo: Path, dry_run: bool = False, forge: str | None = None):  # type: ignore[no-untyped-def]
    """The repository context the release commands act in."""
    from skillci.flows.context import RepoContext

    return RepoContext.open(repo, dry_run=dry_run, forge=forge)


def resolve_actor(actor: str | None, repo: Path | None = None) -> str:
    """``--actor``, else who the flows say is acting (env, git identity, user)."""
    from skillci.flows.release import actor_name

    return actor or actor_name(repo)


def moves_text(ev: ChannelEvent) -> str:
    """The channel moves of an event, one line."""
    parts = []
    for m in ev.moves:
        w = f" ({m.weight}%)" if m.weight is not None and m.channel == "canary" else ""
        parts.append(f"{m.channel} {m.from_version or '-'} -> {m.to_version or '-'}{w}")
    return "; ".join(parts) or "no channel moved"


def print_event(ev: ChannelEvent | None, nothing: str) -> None:
    """One line for a channel event, or ``nothing`` when no event was written."""
    if ev is None:
        console.print(nothing)
        return
    console.print(f"#{ev.seq} {ev.type}: {escape(moves_text(ev))} — {escape(ev.reason)}")


def split_ref(spec: str) -> tuple[str, str]:
    """``<skill>@<version>`` -> (skill, version); exit 2 on anything else."""
    skill, sep, version = spec.partition("@")
    if not sep or not skill or not version:
        raise InvalidInputError(
            f"{spec!r} is not <skill>@<version>", hint="e.g. repo-debugger@0.7.1"
        )
    return skill, version


app = typer.Typer(add_completion=False)


@app.command("release")
def release_cmd(
    pr: Annotated[int, typer.Option("--pr", help="Pull request number.")],
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    forge: ForgeOpt = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="GateReport JSON made by a trusted gate job (kept in the trace store first).",
        ),
    ] = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Release a gated PR as <skill>@<version>, or close it if the gate rejected it.

    Needs an accepting gate report for the PR's current head. Bumps the version, writes
    the changelog entry and compatibility, promotes rules, squash-merges and tags.
    """
    from skillci.flows.release import release_pr

    ctx = open_context(repo, dry_run, forge)
    if report is not None:
        from skillci.flows.gate import keep_report
        from skillci.flows.review_post import load_report_file

        gate, problem = load_report_file(report)
        if gate is None:
            raise InvalidInputError(f"--report: {problem}")
        keep_report(ctx, gate)
    res = release_pr(ctx, pr, actor=resolve_actor(actor, repo))
    if json_out:
        from skillci.cli.output import to_jsonable

        emit_json({**to_jsonable(res), "forge": to_jsonable(ctx.forge_choice)})
    elif res.action == "closed":
        console.print(
            f"{'would close' if res.dry_run else 'closed'} PR #{pr}: gate {res.gate_id} rejected it"
        )
        for r in res.reasons:
            console.print(f"- {escape(r)}")
    else:
        verb = "would release" if res.dry_run else "released"
        console.print(
            f"{verb} {res.tag} ({res.from_version or '?'} -> {res.version}, {res.bump or 'resumed'}) "
            f"from PR #{pr}, gate {res.gate_id}"
        )
        console.print(res.entry or "", markup=False)
        if res.merge_sha:
            console.print(f"merge {res.merge_sha[:12]}, tag {res.tag}")
        if res.files:
            console.print("files: " + ", ".join(res.files), markup=False)
    return int(ExitCode.REJECTED if res.action == "closed" else ExitCode.OK)
