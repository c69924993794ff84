"""``skillci pr``: open, list, show, close and merge pull requests on the configured forge."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from skillci.cli.choices import Forge
from skillci.cli.output import console, emit_json
from skillci.errors import UsageError
from skillci.flows.plugins import forge_help
from skillci.flows.pr_open import Forge as ForgeProtocol
from skillci.flows.pr_open import LocalForge, PRState

app = typer.Typer(
    help="Pull requests on the configured forge (local by default, or GitHub).\n\n"
    "The local forge lives inside the repository; pass --forge github for GitHub.",
    no_args_is_help=True,
)

REPO_OPT = typer.Option(Path("."), "--repo", help="Repository root (default: current dir).")
FORGE_OPT = typer.Option(None, "--forge", help=forge_help())


def open_forge(repo: Path, dry_run: bool = False, forge: str | None = None) -> ForgeProtocol:
    from skillci.flows.context import RepoContext

    return RepoContext.open(repo, dry_run=dry_run, forge=forge).forge


@app.command("open")
def open_cmd(
    head: str = typer.Option(..., "--head", help="Branch with your change."),
    base: str = typer.Option("main", "--base", help="Branch the PR targets."),
    title: str | None = typer.Option(None, "--title", help="Default: the head's first subject."),
    skill: str | None = typer.Option(
        None, "--skill", help="Skill folder (default: the one the branch changes)."
    ),
    repo: Path = REPO_OPT,
    forge: Forge | None = FORGE_OPT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be opened."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Open a pull request for a branch a person wrote (LocalForge)."""
    from skillci.flows.context import RepoContext
    from skillci.flows.pr_open import open_branch_pr

    ctx = RepoContext.open(repo, dry_run=dry_run, forge=forge)
    res = open_branch_pr(ctx, head, base=base, title=title, skill=skill)
    if json_out:
        emit_json(res)
        return 0
    what = {"opened": "opened", "exists": "already open:", "would-open": "would open"}[res.action]
    num = f"#{res.number} " if res.number is not None else ""
    console.print(
        f"{what} {num}{res.title} ({res.head_branch} -> {res.base}; skill {res.skill}; "
        f"{len(res.changed)} file(s) changed)",
        markup=False,
    )
    if res.action == "opened":
        console.print(f"next: skillci review --pr {res.number}", markup=False)
    return 0


@app.command("list")
def list_cmd(
    repo: Path = REPO_OPT,
    forge: Forge | None = FORGE_OPT,
    state: PRState | None = typer.Option(None, "--state", help="open, closed or merged."),
    label: str | None = typer.Option(None, "--label", help="Only PRs with this label."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """List pull requests."""
    prs = open_forge(repo, forge=forge).list_prs(state=state, label=label)
    if json_out:
        emit_json(prs)
        return 0
    table = Table(title=f"{len(prs)} pull request(s)")
    for col in ("#", "state", "title", "labels", "head", "gate"):
        table.add_column(col)
    for p in prs:
        gate = p.statuses.get("skillci/gate")
        table.add_row(
            str(p.number),
            p.state.value,
            p.title,
            ", ".join(p.labels),
            p.head_sha[:10],
            f"{gate.state}: {gate.description}" if gate else "-",
        )
    console.print(table)
    return 0


@app.command("show")
def show_cmd(
    number: int = typer.Argument(..., help="PR number."),
    repo: Path = REPO_OPT,
    forge: Forge | None = FORGE_OPT,
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    log: bool = typer.Option(False, "--log", help="Also print the event log."),
) -> int:
    """Show one pull request: body, labels, statuses, comments (and its event log)."""
    f = open_forge(repo, forge=forge)
    if log and not isinstance(f, LocalForge):
        raise UsageError(
            "--log reads LocalForge's event log; a GitHub PR's history is its timeline",
            hint="drop --log, or open the PR on GitHub",
        )
    pr = f.get_pr(number)
    if json_out:
        emit_json({"pr": pr, "log": f.log(number) if isinstance(f, LocalForge) and log else None})
        return 0
    console.print(
        f"[bold]#{pr.number} {pr.title}[/bold]  ({pr.state.value}; {pr.head_branch} -> {pr.base}; head {pr.head_sha[:12]})"
    )
    console.print(f"labels: {', '.join(pr.labels) or '-'}")
    for st in pr.statuses.values():
        console.print(f"status {st.context}: {st.state} — {st.description}")
    console.print(pr.body, markup=False)
    for c in pr.comments:
        console.print(
            f"\n--- comment {c.id} (revisions: {c.revisions}, updated {c.updated_at})", markup=False
        )
        console.print(c.body, markup=False)
    if log and isinstance(f, LocalForge):
        for e in f.log(number):
            console.print(f"{e.get('at', '')} {e['type']}: {e.get('summary', '')}", markup=False)
    return 0


@app.command("close")
def close_cmd(
    number: int = typer.Argument(...),
    repo: Path = REPO_OPT,
    forge: Forge | None = FORGE_OPT,
    comment: str | None = typer.Option(None, "--comment", help="Final comment (the evidence)."),
    keep_branch: bool = typer.Option(False, "--keep-branch", help="Keep the head branch."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would change; change nothing."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Close without merging (the record and the pinned head ref stay)."""
    f = open_forge(repo, forge=forge)
    if dry_run:
        pr = f.get_pr(number)
        console.print(
            f"would close #{number} and delete branch {pr.head_branch}"
            if not keep_branch
            else f"would close #{number}"
        )
        return 0
    pr = f.close(number, comment, delete_branch=not keep_branch)
    if json_out:
        emit_json(pr)
    else:
        console.print(f"closed #{number}")
    return 0


@app.command("merge")
def merge_cmd(
    number: int = typer.Argument(...),
    repo: Path = REPO_OPT,
    forge: Forge | None = FORGE_OPT,
    expected_head: str | None = typer.Option(
        None, "--expected-head", help="Refuse unless the head is this sha."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would change; change nothing."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Squash-merge a PR (prefer `skillci release --pr N`, which checks the gate first)."""
    f = open_forge(repo, forge=forge)
    pr = f.get_pr(number)
    head = expected_head or pr.head_sha
    if dry_run:
        console.print(f"would squash-merge #{number} ({head[:12]}) into {pr.base}")
        return 0
    pr = f.merge(
        number, title=pr.title, message=f"Squashed from PR #{number}", expected_head_sha=head
    )
    if json_out:
        emit_json(pr)
    else:
        console.print(f"merged #{number} into {pr.base} as {pr.merge_sha}")
    return 0
