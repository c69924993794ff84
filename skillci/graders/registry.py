"""The assertion-kind registry: every ``kind = NAME`` of ``[[assertion]]``, by name.

One :class:`GraderKindEntry` per kind: skillci's own (:data:`BUILTIN`, classes of
:mod:`skillci.graders.assertions`), then the entry points of the group ``skillci.graders``,
whose name is the kind's name and whose value (``pkg.module:Class``) is an
:class:`~skillci.graders.kinds.AssertionKind` subclass (any zero-argument factory of one).
An entry point cannot replace a built-in name (docs/design/390, 403). ``graders.toml``
validation (:class:`~skillci.graders.models.Assertion`), :func:`check_assertion
<skillci.graders.assertions.check_assertion>` and the trial cache key of a task that uses
a plug-in kind all read this one table. Listing names costs one entry-point scan; a kind's
module is imported only when an assertion of it is validated or checked.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points

from skillci.errors import ConfigError
from skillci.graders.kinds import AssertionKind

ENTRY_POINT_GROUP = "skillci.graders"


@dataclass(frozen=True)
class GraderKindEntry:
    """One registered assertion kind."""

    name: str
    summary: str
    target: str
    """``module:attr`` of its class, imported only when the kind is used."""
    dist: str | None = None
    """A plug-in's ``package==version`` (part of the trial cache key); None: skillci's own."""

    def load(self) -> AssertionKind:
        """An instance of the kind (a ConfigError naming the entry point otherwise)."""
        module, _, attr = self.target.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"assertion kind {self.name!r}: cannot load {self.target} ({exc})",
                hint=f"install the package that provides it, or fix its {ENTRY_POINT_GROUP} "
                "entry point",
            ) from exc
        try:
            made: object = factory() if callable(factory) else factory
        except Exception as exc:  # a plug-in's constructor: any failure is its own
            raise ConfigError(
                f"assertion kind {self.name!r} ({self.target}) failed to build: "
                f"{type(exc).__name__}: {exc}",
                hint="fix the package that provides it (its class takes no arguments)",
            ) from exc
        if not isinstance(made, AssertionKind):
            raise ConfigError(
                f"assertion kind {self.name!r} ({self.target}) made a {type(made).__name__}, "
                "not an AssertionKind",
                hint="register a subclass of skillci.graders.kinds.AssertionKind",
            )
        return made

    @property
    def identity(self) -> str:
        """What a trial's cache key records of a plug-in kind: the package and version
        that checked it (the target when the package is unknown)."""
        return self.dist or self.target


BUILTIN = tuple(
    GraderKindEntry(name, summary, f"skillci.graders.assertions:{cls}")
    for name, cls, summary in (
        ("exact", "Exact", "the whole text equals value (surrounding whitespace ignored)"),
        ("contains", "Contains", "the text contains value"),
        ("regex", "Regex", "the pattern value matches (multiline)"),
        ("json-schema", "JsonSchema", "the text is JSON valid against schema"),
        ("file-exists", "FileExists", "the file:<path> target exists in the workspace"),
        ("command-exit", "CommandExit", "command exits with expect_exit (verifier's sandbox)"),
    )
)


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, GraderKindEntry]:
    """Every assertion kind by name: the built-in table, then the ``skillci.graders``
    entry points (an entry point cannot replace a built-in name)."""
    out = {e.name: e for e in BUILTIN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in out:
            dist = f"{ep.dist.name}=={ep.dist.version}" if ep.dist is not None else None
            out[ep.name] = GraderKindEntry(ep.name, f"entry point {ep.value}", ep.value, dist)
    return out


def names() -> list[str]:
    return list(registry())


def builtin_names() -> list[str]:
    return [e.name for e in BUILTIN]


def check_kind(name: str) -> str:
    """``name`` when it is a registered kind, else a ValueError listing them (for the
    ``kind`` field of ``[[assertion]]``)."""
    if name not in registry():
        raise ValueError(
            f"unknown assertion kind {name!r}; registered: {', '.join(names())} "
            f"(a plug-in adds one through the {ENTRY_POINT_GROUP} entry points)"
        )
    return name


@functools.cache
def assertion_kind(name: str) -> AssertionKind:
    """The kind ``name`` (one instance per process; a ConfigError for an unknown name)."""
    entry = registry().get(name)
    if entry is None:
        raise ConfigError(
            f"unknown assertion kind {name!r}", hint=f"use one of: {', '.join(names())}"
        )
    return entry.load()


def plugin_identities(kinds: list[str]) -> dict[str, str]:
    """``kind -> package==version`` of the plug-in kinds among ``kinds`` (empty when all
    are skillci's own, so the cache keys of such tasks do not change)."""
    table = registry()
    own = set(builtin_names())
    return {k: table[k].identity for k in sorted(set(kinds)) if k not in own and k in table}


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "GraderKindEntry",
    "assertion_kind",
    "builtin_names",
    "check_kind",
    "names",
    "plugin_identities",
    "registry",
]
