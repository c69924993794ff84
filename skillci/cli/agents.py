"""``skillci agents``: the agents a trial can run, and installing real ones from npm."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer

from skillci.cli.options import RepoOpt
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
    width = max(len(r.name) for r in rows)
    for r in rows:
        console.print(f"{r.name:<{width}} {r.summary}")
        if not r.real:
            continue
        have = ", ".join(r.versions) if r.versions else "not installed"
        console.print(
            f"{'':<{width}} {r.package} [{have}]  skills: {r.skills_dir}/<name>/  "
            f"wire: {r.wire_api}  interface: {r.interface}"
        )
    return 0


@app.command("install")
def install_cmd(
    spec: str | None = typer.Argument(
        None, help="NAME[@VERSION], e.g. claude-code@2.1.197 (or --for-skill)."
    ),
    for_skill: str | None = typer.Option(
        None,
        "--for-skill",
        help="Install the agent this skill's target_runtime names at --ref (CI: what its "
        "gate runs); nothing when it targets the built-in agent.",
    ),
    ref: str = typer.Option("HEAD", "--ref", help="Commit whose skillci.yaml --for-skill reads."),
    repo: RepoOpt = Path("."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the npm command only."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> int:
    """npm-install a real agent into the agents cache ($SKILLCI_AGENTS_DIR)."""
    from skillci.errors import UsageError
    from skillci.flows.agents import install_agent, target_spec

    if (spec is None) == (for_skill is None):
        raise UsageError(
            "give an agent (NAME[@VERSION]) or --for-skill SKILL, not both",
            hint="skillci agents install claude-code, or --for-skill my-skill --ref main",
        )
    if for_skill is not None:
        spec = target_spec(repo, for_skill, ref)
        if spec is None:
            if json_out:
                emit_json({"skill": for_skill, "ref": ref, "agent": "builtin", "installed": None})
            else:
                console.print(
                    f"{for_skill} targets the built-in agent at {ref}: nothing to install"
                )
            return 0
    assert spec is not None
    res = install_agent(spec, dry_run=dry_run)
    if json_out:
        emit_json(res)
    elif dry_run:
        console.print(f"would run: {shlex.join(res.command)}")
    else:
        console.print(f"installed {res.name}@{res.version} in {res.path}")
    return 0
