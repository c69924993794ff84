"""``skillci release|resolve|rollback`` and the ``channel`` / ``canary`` groups.

Registered as top-level commands through :func:`register` (see ``TOP_LEVEL`` in
skillci/cli/main.py). Thin: parse -> call skillci.flows.release / skillci.flows.canary /
skillci.runtime -> render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from skillci.cli.output import console, emit_json
from skillci.errors import ExitCode, InvalidInputError
from skillci.release.models import CanaryAnalysis, Channel, ChannelEvent

RepoOpt = Annotated[Path, typer.Option("--repo", help="Repository root (default: current dir).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
ForgeOpt = Annotated[
    str | None,
    typer.Option("--forge", help="local or github (default: $SKILLCI_FORGE, else detected)."),
]
ActorOpt = Annotated[
    str | None,
    typer.Option("--actor", help="Who is acting (default: $SKILLCI_ACTOR, git identity, user)."),
]

channel_app = typer.Typer(
    help="Release channels (stable, canary) kept as git refs, and their log.",
    no_args_is_help=True,
)
canary_app = typer.Typer(help="Canary a release, analyze it, promote it.", no_args_is_help=True)


def _ctx(repo: Path, dry_run: bool = False, forge: str | None = None):  # type: ignore[no-untyped-def]
    from skillci.flows.context import RepoContext

    return RepoContext.open(repo, dry_run=dry_run, forge=forge)


def _actor(actor: str | None) -> str:
    from skillci.flows.release import actor_name

    return actor or actor_name()


def _moves(ev: ChannelEvent) -> str:
    parts = []
    for m in ev.moves:
        w = f" ({m.weight}%)" if m.weight is not None and m.channel == "canary" else ""
        parts.append(f"{m.channel} {m.from_version or '-'} -> {m.to_version or '-'}{w}")
    return "; ".join(parts) or "no channel moved"


def _print_event(ev: ChannelEvent | None, nothing: str) -> None:
    if ev is None:
        console.print(nothing)
        return
    console.print(f"#{ev.seq} {ev.type}: {escape(_moves(ev))} — {escape(ev.reason)}")


def _split_ref(spec: str) -> tuple[str, str]:
    skill, sep, version = spec.partition("@")
    if not sep or not skill or not version:
        raise InvalidInputError(
            f"{spec!r} is not <skill>@<version>", hint="e.g. repo-debugger@0.7.1"
        )
    return skill, version


# ---------------------------------------------------------------------------- channel


@channel_app.command("init")
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

    ev = channel_init(_ctx(repo, dry_run), skill, ref=ref, actor=_actor(actor))
    if json_out:
        emit_json({"event": ev})
    else:
        _print_event(ev, "stable is already set; nothing to do")
    return 0


@channel_app.command("log")
def channel_log_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Every channel move of a skill (who, what, why, from -> to, gate/analysis, when)."""
    from skillci.release.channels import ChannelStore
    from skillci.vcs.git import Git

    store = ChannelStore(Git(repo))
    events = store.log(skill)
    if not events and skill not in store.skills():
        from skillci.errors import InvalidInputError

        known = store.skills()
        raise InvalidInputError(
            f"{skill} has no channel log in {repo}",
            hint=f"skills with channels: {', '.join(known)}"
            if known
            else f"`skillci channel init {skill}` or release a version first",
        )
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
            escape(_moves(ev)),
            escape(ev.actor),
            escape(ev.reason),
            escape(ev.gate_id or ev.analysis_id or ""),
        )
    console.print(table)
    return 0


@channel_app.command("show")
def channel_show_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """Where stable and canary point now, and every release."""
    from skillci.release.channels import ChannelStore
    from skillci.vcs.git import Git

    state = ChannelStore(Git(repo)).state(skill)
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


# ---------------------------------------------------------------------------- canary


@canary_app.command("start")
def canary_start_cmd(
    spec: Annotated[str, typer.Argument(help="<skill>@<version>, a released version.")],
    weight: Annotated[
        int, typer.Option("--weight", min=1, max=100, help="Percent of requests.")
    ] = 10,
    repo: RepoOpt = Path("."),
    actor: ActorOpt = None,
    dry_run: DryOpt = False,
    json_out: JsonOpt = False,
) -> int:
    """Serve a released version to WEIGHT% of requests (by request-id hash)."""
    from skillci.flows.canary import canary_start

    skill, version = _split_ref(spec)
    ev = canary_start(_ctx(repo, dry_run), skill, version, weight=weight, actor=_actor(actor))
    if json_out:
        emit_json({"event": ev})
    else:
        _print_event(ev, "nothing to do")
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
    if a.action != "none":
        console.print(f"action: {a.action} (channel log #{a.event_seq})")
    if a.note:
        console.print(escape(a.note))


@canary_app.command("analyze")
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

    ctx = _ctx(repo, dry_run, forge)
    a = analyze_synced(ctx, skill, auto=auto)
    if json_out:
        from skillci.cli.output import to_jsonable

        emit_json({**to_jsonable(a), "forge": to_jsonable(ctx.forge_choice)})
    else:
        _print_analysis(a)
    return int(ExitCode.REJECTED if a.outcome == "fail" else ExitCode.OK)


@canary_app.command("list")
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
    ctx = _ctx(repo, forge=forge)
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


@canary_app.command("promote")
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

    ev = promote(_ctx(repo, dry_run), skill, actor=_actor(actor), reason=reason or "")
    if json_out:
        emit_json({"event": ev})
    else:
        _print_event(ev, "nothing to do")
    return 0


# ---------------------------------------------------------------------------- top level


def register(app: typer.Typer) -> None:
    app.add_typer(channel_app, name="channel")
    app.add_typer(canary_app, name="canary")

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

        ctx = _ctx(repo, dry_run, forge)
        if report is not None:
            from skillci.flows.gate import keep_report
            from skillci.flows.review_post import load_report_file

            gate, problem = load_report_file(report)
            if gate is None:
                raise InvalidInputError(f"--report: {problem}")
            keep_report(ctx, gate)
        res = release_pr(ctx, pr, actor=_actor(actor))
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

    @app.command("resolve")
    def resolve_cmd(
        skill: Annotated[str, typer.Argument(help="Skill name.")],
        channel: Annotated[
            str | None, typer.Option("--channel", help="stable or canary (default: by request).")
        ] = None,
        request_id: Annotated[
            str | None, typer.Option("--request-id", help="Bucket this request (sha256 % 100).")
        ] = None,
        repo: RepoOpt = Path("."),
        json_out: JsonOpt = False,
    ) -> int:
        """The version/commit/path a deployment should load for a request."""
        from skillci.runtime import resolve

        if channel not in (None, "stable", "canary"):
            raise InvalidInputError(f"--channel {channel!r} must be stable or canary")
        ch: Channel | None = channel  # type: ignore[assignment]
        r = resolve(repo, skill, request_id=request_id, channel=ch)
        if json_out:
            emit_json(r)
        else:
            b = f" (bucket {r.bucket}" if r.bucket is not None else ""
            if r.weight is not None:
                b += f"{', ' if b else ' ('}canary weight {r.weight}%"
            b += ")" if b else ""
            console.print(f"{r.skill}@{r.version} {r.channel} {r.commit} {r.path}{b}")
        return 0

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
            commits = mark_pending(_ctx(repo, dry_run), skill, actor=_actor(actor))
            if json_out:
                emit_json({"marked_commits": commits})
            else:
                console.print(f"{len(commits)} marking commit(s)")
            return 0
        ev, commit = rollback(_ctx(repo, dry_run), skill, to=to, reason=reason, actor=_actor(actor))
        if json_out:
            emit_json({"event": ev, "marked_commit": commit})
        else:
            _print_event(ev, "nothing to roll back")
            if commit:
                console.print(f"marked rolled back in {commit[:12]}")
        return 0
