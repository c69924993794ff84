"""What an assertion kind is (``kind = NAME`` in ``[[assertion]]``): the interface a plug-in
implements (pure).

An assertion kind is one :class:`AssertionKind` subclass, registered by name in
:mod:`skillci.graders.registry` (skillci's own in :mod:`skillci.graders.assertions`, a
plug-in's through an entry point of the group ``skillci.graders``; docs/design/403):

- :meth:`AssertionKind.validate` runs when ``tests/graders.toml`` loads: it refuses an
  assertion of its kind that cannot be checked (a regex that does not compile, a bad
  JSON Schema, a plug-in's ``params``) by raising :class:`InvalidAssertion`, whose ``field``
  locates the error at its line;
- :meth:`AssertionKind.check` runs in each trial on a :class:`Subject` — the target's text
  and a way to run a command in the verifier's sandbox — and says whether the check held
  and why. ``negate``, ``weight``, the score and the record are the caller's.

A kind never runs anything itself: :attr:`Subject.run` is given by the adapter
(:mod:`skillci.runners.grading`, the verifier's sandbox shell, cwd the workspace).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from skillci.graders.models import Assertion


@dataclass(frozen=True)
class Ran:
    """A command's outcome in the verifier's sandbox."""

    exit_code: int | None
    """None: it did not finish (timed out)."""
    output: str


CommandRun = Callable[[str], Ran]
"""Runs a shell command in the verifier's sandbox, cwd the workspace."""


def no_commands(command: str) -> Ran:
    """The :attr:`Subject.run` of grading without a sandbox: refuses to run anything."""
    raise RuntimeError(f"no sandbox to run {command!r} in (grading without a shell)")


@dataclass(frozen=True)
class Subject:
    """What an assertion looks at in one trial."""

    where: str
    """``the final answer`` or the workspace path of a ``file:`` target (for details)."""
    text: str | None
    """The target's text (a file: its first MAX_READ bytes, decoded); None: missing."""
    run: CommandRun = no_commands
    """Run a command in the verifier's sandbox (only when the kind needs to)."""


class InvalidAssertion(ValueError):
    """An assertion its kind cannot check; ``field`` (a key of ``[[assertion]]``, e.g.
    ``value``, ``schema``, ``params``) is where the error is, for its line in the file."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class AssertionKind:
    """One kind of assertion. Subclass it, set the class attributes, implement
    :meth:`check` (and :meth:`validate` when the kind takes ``params`` or its fields need
    more than being set), and register the class under the kind's name."""

    requires: ClassVar[tuple[str, ...]] = ()
    """Keys of ``[[assertion]]`` that must be set: ``value``, ``schema``, ``command``."""
    file_only: ClassVar[bool] = False
    """The target must be ``file:<path>`` (not the final answer)."""
    needs_target: ClassVar[bool] = True
    """A missing target fails the assertion before :meth:`check` (which then always gets
    text); False: :meth:`check` is called with ``subject.text = None`` too."""

    def validate(self, a: Assertion) -> None:
        """Raise :class:`InvalidAssertion` when ``a`` cannot be checked. The default
        refuses ``params``: a kind that reads them overrides this."""
        if a.params:
            raise InvalidAssertion(
                f"kind = {a.kind!r} takes no params (got {', '.join(sorted(a.params))})",
                field="params",
            )

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        """Whether the check holds for ``subject``, and a one-line detail (what was looked
        for, what was found: shown in reports)."""
        raise NotImplementedError


__all__ = ["AssertionKind", "CommandRun", "InvalidAssertion", "Ran", "Subject", "no_commands"]
