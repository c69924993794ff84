"""Real agents installed from npm into a cache dir, one dir per name and version.

``skillci agents install NAME[@VERSION]`` runs ``npm install --prefix
<cache>/<name>-<version> <package>@<version>``; the cache is ``$SKILLCI_AGENTS_DIR`` or
``~/.cache/skillci/agents``. A trial uses the version its spec pins (recorded in the run
record as the harness version and in the trial key), else the newest installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillci.agents.registry import adapter, real_names
from skillci.errors import ExternalError, UsageError

AGENTS_DIR_ENV = "SKILLCI_AGENTS_DIR"
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+-]*$")


class AgentNotInstalled(ExternalError):
    default_hint = "install it: skillci agents install NAME[@VERSION]"


class InstalledAgent(BaseModel):
    """One installed real agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name, e.g. claude-code.")
    package: str = Field(description="npm package.")
    version: str = Field(description="Installed version.")
    path: Path = Field(description="Install dir (npm --prefix).")
    exe: Path = Field(description="The agent's executable.")


def agents_dir() -> Path:
    env = os.environ.get(AGENTS_DIR_ENV)
    return Path(env) if env else Path.home() / ".cache" / "skillci" / "agents"


def _version_key(v: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.+-]", v))


def installed(name: str | None = None, root: Path | None = None) -> list[InstalledAgent]:
    """Installed agents (of ``name``), newest version first per name."""
    root = root or agents_dir()
    out: list[InstalledAgent] = []
    for agent in real_names():
        if name is not None and agent != name:
            continue
        a = adapter(agent)
        found = []
        for d in root.glob(f"{a.installs_as}-*") if root.is_dir() else []:
            version = d.name[len(a.installs_as) + 1 :]
            exe = d / "node_modules" / ".bin" / a.binary
            if _VERSION.match(version) and exe.exists():
                found.append(
                    InstalledAgent(name=agent, package=a.package, version=version, path=d, exe=exe)
                )
        out += sorted(found, key=lambda i: _version_key(i.version), reverse=True)
    return out


def resolve(name: str, version: str | None = None) -> InstalledAgent:
    """The installed ``name`` at ``version`` (newest when None), or AgentNotInstalled."""
    have = installed(name)
    pick = next((i for i in have if version in (None, i.version)), None)
    if pick is None:
        want = f"{name}@{version}" if version else name
        raise AgentNotInstalled(
            f"agent {want} is not installed in {agents_dir()}",
            hint=f"skillci agents install {want} (or set ${AGENTS_DIR_ENV})",
        )
    return pick


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``NAME[@VERSION]`` -> (name, version)."""
    name, _, version = spec.partition("@")
    if name not in real_names():
        raise UsageError(f"unknown agent {name!r}", hint=f"use one of: {', '.join(real_names())}")
    if version and not _VERSION.match(version):
        raise UsageError(f"bad version {version!r} in {spec!r}", hint="e.g. claude-code@2.1.197")
    return name, version or None


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise AgentNotInstalled("npm is not on PATH", hint="install Node.js 18+ with npm")
    return npm


def latest_version(name: str) -> str:
    pkg = adapter(name).package
    done = subprocess.run(
        [_npm(), "view", pkg, "version"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise AgentNotInstalled(
            f"npm view {pkg} failed: {done.stderr.strip()[-300:]}",
            hint="check npm's registry access",
        )
    return done.stdout.strip().splitlines()[-1]


def install_command(name: str, version: str, root: Path | None = None) -> list[str]:
    a = adapter(name)
    dest = (root or agents_dir()) / f"{a.installs_as}-{version}"
    pkg = a.package
    return [_npm(), "install", "--prefix", str(dest), "--no-audit", "--no-fund", f"{pkg}@{version}"]


def install(name: str, version: str, root: Path | None = None) -> InstalledAgent:
    """``npm install`` ``name``@``version`` into the cache (no-op when present)."""
    root = root or agents_dir()
    have = [i for i in installed(name, root) if i.version == version]
    if have:
        adapter(name).after_install(have[0].exe)
        return have[0]
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        install_command(name, version, root), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AgentNotInstalled(
            f"npm install of {name}@{version} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}",
            hint="check the version exists (npm view PACKAGE versions) and npm's registry access",
        )
    done_install = resolve_in(name, version, root)
    adapter(name).after_install(done_install.exe)
    return done_install


def resolve_in(name: str, version: str, root: Path) -> InstalledAgent:
    for i in installed(name, root):
        if i.version == version:
            return i
    raise AgentNotInstalled(f"{name}@{version}: npm finished but {adapter(name).binary} is missing")


__all__ = [
    "AGENTS_DIR_ENV",
    "AgentNotInstalled",
    "InstalledAgent",
    "agents_dir",
    "install",
    "install_command",
    "installed",
    "latest_version",
    "parse_spec",
    "resolve",
]
