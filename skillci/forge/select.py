"""Which forge a command talks to: ``--forge`` > ``$SKILLCI_FORGE`` > detected > local.

Detection: inside GitHub Actions (``GITHUB_ACTIONS=true``) with a ``GITHUB_TOKEN`` in the
environment, the forge is GitHub; everywhere else it is the embedded LocalForge. The
choice and why it was made travel with the command's ``--json`` output
(:class:`ForgeChoice`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, Field

from skillci.errors import ConfigError
from skillci.forge.registry import names

ForgeKind = str
"""A registered forge's name (:mod:`skillci.forge.registry`)."""
ENV_VAR = "SKILLCI_FORGE"


class ForgeChoice(BaseModel):
    """The forge a command used, and why."""

    kind: ForgeKind = Field(
        description="The forge's registered name: local (PRs inside the repo), github, or a "
        "plug-in's (entry-point group skillci.forges)."
    )
    source: str = Field(description="--forge, $SKILLCI_FORGE, detected (…) or default.")
    repository: str | None = Field(default=None, description="owner/name on GitHub.")


def _kind(value: str, where: str) -> ForgeKind:
    v = value.strip().lower()
    if v in names():
        return v
    raise ConfigError(f"{where} {value!r} is not a forge", hint=f"use one of: {', '.join(names())}")


def choose_forge(flag: str | None = None, env: Mapping[str, str] | None = None) -> ForgeChoice:
    """Resolve the forge kind without connecting to anything."""
    env = os.environ if env is None else env
    repo = env.get("GITHUB_REPOSITORY") or None
    if flag:
        kind = _kind(flag, "--forge")
        return ForgeChoice(
            kind=kind, source="--forge", repository=repo if kind == "github" else None
        )
    if env.get(ENV_VAR):
        kind = _kind(env[ENV_VAR], f"${ENV_VAR}")
        return ForgeChoice(
            kind=kind, source=f"${ENV_VAR}", repository=repo if kind == "github" else None
        )
    if env.get("GITHUB_ACTIONS") == "true" and env.get("GITHUB_TOKEN"):
        return ForgeChoice(
            kind="github",
            source="detected (GITHUB_ACTIONS=true and GITHUB_TOKEN set)",
            repository=repo,
        )
    return ForgeChoice(kind="local", source="default")
