"""``skillci agents``: the agents a trial can run, and installing real ones from npm."""

from __future__ import annotations

import shlex

import typer

from skillci.cli.output import console, emit_json

app = typer.Typer(help="List and install the agents trials run.", no_args_is_help=True)


@app.command("ls")
def ls_cmd(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> int:
    """Every registered agent, and the installed versions of the real ones."""
    from skillci.flows.agents import list_agents

    rows = list_agents()
    if json_out:
        emit_json(rows)
        return 0
    for r in rows:
        if not r.real:
            console.print(f"{r.name:<12} {r.summary}")
            continue
        have = ", ".join(r.versions) if r.versions else "not installed"
        console.print(f"{r.name:<12} {r.summary}")
        console.print(
            f"{'':<12} {r.package} [{have}]  skills: {r.skills_dir}/<name>/  wire: {r.wire_api}"
        )
    return 0


@app.command("install")
def install_cmd(
    spec: str = typer.Argument(..., help="NAME[@VERSION], e.g. claude-code@2.1.197."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the npm command only."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> int:
    """npm-install a real agent into the agents cache ($SKILLCI_AGENTS_DIR)."""
    from skillci.flows.agents import install_agent

    res = install_agent(spec, dry_run=dry_run)
    if json_out:
        emit_json(res)
    elif dry_run:
        console.print(f"would run: {shlex.join(res.command)}")
    else:
        console.print(f"installed {res.name}@{res.version} in {res.path}")
    return 0
