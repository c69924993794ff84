"""The forge registry: every forge by name (``--forge NAME``, ``$SKILLCI_FORGE``).

One :class:`ForgeEntry` per forge: skillci's own (``local``, ``github``), then the
entry points of the group ``skillci.forges``, whose name is the forge's name and whose value
(``pkg.module:attr``) is a callable taking the repository's :class:`~skillci.vcs.git.Git`
and returning a :class:`~skillci.forge.base.Forge` (a ``Forge`` subclass is such a callable).
``--forge``'s choices and help, :mod:`skillci.forge.select` and
:attr:`skillci.flows.context.RepoContext.forge` all read this one table; adding a forge is
one module and one entry point (docs/architecture.md, "Extension points").
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from skillci.errors import ConfigError

if TYPE_CHECKING:
    from skillci.forge.base import Forge
    from skillci.vcs.git import Git

ENTRY_POINT_GROUP = "skillci.forges"


@dataclass(frozen=True)
class ForgeEntry:
    """One registered forge."""

    name: str
    summary: str
    target: str
    """``module:attr`` of its factory ``(git) -> Forge``, imported only when it is opened."""

    def open(self, git: Git) -> Forge:
        """The forge of the repository ``git`` works in."""
        from skillci.forge.base import Forge

        module, _, attr = self.target.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"forge {self.name!r}: cannot load {self.target} ({exc})",
                hint="install the package that provides it, or fix its skillci.forges entry point",
            ) from exc
        forge = factory(git)
        if not isinstance(forge, Forge):
            raise ConfigError(
                f"forge {self.name!r} ({self.target}) made a {type(forge).__name__}, not a Forge",
                hint="its factory must return a skillci.forge.base.Forge subclass instance",
            )
        return forge


BUILTIN = (
    ForgeEntry(
        "local", "pull requests as refs inside the repository", "skillci.forge.local:LocalForge"
    ),
    ForgeEntry(
        "github",
        "GitHub pull requests ($GITHUB_TOKEN, $GITHUB_REPOSITORY)",
        "skillci.forge.github_env:open_github",
    ),
)


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, ForgeEntry]:
    """Every forge by name: the built-in table, then the ``skillci.forges`` entry points
    (an entry point cannot replace a built-in name)."""
    out = {e.name: e for e in BUILTIN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in out:
            out[ep.name] = ForgeEntry(ep.name, f"entry point {ep.value}", ep.value)
    return out


def names() -> list[str]:
    return list(registry())


def help_text() -> str:
    """``--forge``'s help: each forge and what it is."""
    listed = "; ".join(f"{e.name}: {e.summary}" for e in registry().values())
    return f"{listed}. Default: $SKILLCI_FORGE, else detected."


def open_forge(name: str, git: Git) -> Forge:
    """Forge ``name`` (a registered name) for the repository ``git`` works in."""
    entry = registry().get(name)
    if entry is None:
        raise ConfigError(f"unknown forge {name!r}", hint=f"use one of: {', '.join(names())}")
    return entry.open(git)


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "ForgeEntry",
    "help_text",
    "names",
    "open_forge",
    "registry",
]
