"""``skillci demo``: the whole propose → gate → release → canary → rollback loop, offline."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import typer
from rich.table import Table

from skillci.cli.output import console, emit_json, err_console


def _source_root() -> Path:
    """Where skills/ and evals/ (the bundled skill and tasks) are: the skillci checkout of an
    editable install, else the wheel's package data (skillci/data/, copied in by setup.py)."""
    pkg = Path(__file__).resolve().parents[1]
    for here in (pkg.parent, pkg / "data"):
        if (here / "skills" / "repo-debugger").is_dir() and (here / "evals" / "tasks").is_dir():
            return here
    from skillci.errors import InternalError

    raise InternalError(
        "bundled skills/ and evals/ not found next to the skillci package or in skillci/data/",
        hint="reinstall skillci from its wheel, or run from a checkout (pip install -e .)",
    )


app = typer.Typer(add_completion=False)


@app.command("demo")
def demo_cmd(
    dir: Path | None = typer.Option(
        None, "--dir", help="Where to build the scratch repo (new dir)."
    ),
    no_html: bool = typer.Option(False, "--no-html", help="Skip the HTML report."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Run the whole loop on the embedded default in a fresh scratch repository."""
    from skillci.flows.demo import NO_SANDBOX, demo_state, run_demo, sandbox_kind

    if json_out and sandbox_kind()[0] == "none":  # the terminal path says it in the steps
        err_console.print(NO_SANDBOX)
    dest = dir or Path(tempfile.mkdtemp(prefix="skillci-demo-")) / "repo"
    t0 = time.monotonic()
    say = (lambda s: None) if json_out else (lambda s: console.print(s, highlight=False))
    res = run_demo(_source_root(), dest, say, html=not no_html)
    total = time.monotonic() - t0
    tags, prs, log = demo_state(res.repo)
    if json_out:
        emit_json(
            {
                "repo": str(res.repo),
                "seconds": round(total, 1),
                "sandbox": res.sandbox,
                "steps": [
                    {"step": s, "outcome": o, "seconds": round(d, 1)} for s, o, d in res.steps
                ],
                "prs": [
                    {"number": p.number, "state": p.state.value, "title": p.title} for p in prs
                ],
                "tags": tags,
                "channel_log": log,
                "html_report": str(res.html_report) if res.html_report else None,
            }
        )
        return 0
    table = Table(title="Pull requests")
    for col in ("#", "state", "title", "gate"):
        table.add_column(col)
    for p in prs:
        g = p.statuses.get("skillci/gate")
        table.add_row(str(p.number), p.state.value, p.title, f"{g.state}" if g else "-")
    console.print(table)
    console.print("Tags: " + ", ".join(tags))
    console.print("Channel log:")
    for ev in log:
        moves = ", ".join(
            f"{m.channel}: {m.from_version or '-'} -> {m.to_version or '-'}" for m in ev.moves
        )
        console.print(
            f"  #{ev.seq} {ev.type} {ev.version or ''}: {moves} — {ev.reason}", highlight=False
        )
    if res.html_report:
        console.print(f"HTML gate report: {res.html_report}")
    console.print(f"Scratch repository: {res.repo} (try `skillci pr list --repo {res.repo}`)")
    if res.sandbox == "none":
        console.print("[bold red]Trials ran WITHOUT a sandbox (bubblewrap missing).[/bold red]")
    console.print(f"Done in {total:.0f}s.")
    return 0
