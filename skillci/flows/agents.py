"""The agents a trial can run (``skillci agents ls``) and installing real ones
(``skillci agents install NAME[@VERSION]``): the registry plus the npm install cache."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillci.agents.install import (
    agents_dir,
    install,
    install_command,
    installed,
    latest_version,
    parse_spec,
)
from skillci.agents.registry import adapter, real_names, registry


class AgentRow(BaseModel):
    """One registered agent and what of it is installed."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="--agent value.")
    summary: str = Field(description="What it is.")
    real: bool = Field(description="A real agent (an installed CLI behind the gateway).")
    package: str | None = Field(default=None, description="npm package (real agents).")
    skills_dir: str | None = Field(default=None, description="Where it discovers skills.")
    wire_api: str | None = Field(default=None, description="What it sends the gateway.")
    interface: str | None = Field(
        default=None, description="How skillci drives it: headless (its JSON stream) or acp."
    )
    versions: list[str] = Field(default_factory=list, description="Installed, newest first.")
    path: Path | None = Field(default=None, description="Install dir of the newest version.")


def list_agents() -> list[AgentRow]:
    rows = []
    for name, entry in registry().items():
        row = AgentRow(name=name, summary=entry.summary, real=entry.real)
        if entry.real:
            a = adapter(name)
            have = installed(name)
            row.package, row.skills_dir, row.wire_api = a.package, a.skills_dir, a.wire_api
            row.interface = a.interface
            row.versions = [i.version for i in have]
            row.path = have[0].path if have else None
        rows.append(row)
    return rows


class InstallResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    path: Path
    command: list[str] = Field(description="The npm command (run, or to run with --dry-run).")
    dry_run: bool = False


def target_spec(repo: Path, skill: str, ref: str) -> str | None:
    """``NAME[@VERSION]`` of the real agent ``skill``'s ``target_runtime`` names at ``ref``
    (what its gates run: the base branch's, design 372); None for the built-in agent."""
    from skillci.flows.context import RepoContext
    from skillci.flows.gate import target_agent

    name, version = target_agent(RepoContext.open(repo), skill, ref)
    if name not in real_names():
        return None
    return f"{name}@{version}" if version else name


def install_agent(spec: str, *, dry_run: bool = False) -> InstallResult:
    """Install ``NAME[@VERSION]`` (the latest when no version) into the agents cache."""
    name, version = parse_spec(spec)
    version = version or latest_version(name)
    command = install_command(name, version)
    path = agents_dir() / f"{adapter(name).installs_as}-{version}"
    if not dry_run:
        path = install(name, version).path
    return InstallResult(name=name, version=version, path=path, command=command, dry_run=dry_run)


__all__ = ["AgentRow", "InstallResult", "install_agent", "list_agents", "target_spec"]
