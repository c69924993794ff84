"""skillci's own assertion kinds, and one assertion over a trial's output (pure).

The kinds (``exact``, ``contains``, ``regex``, ``json-schema``, ``file-exists``,
``command-exit``) are :class:`~skillci.graders.kinds.AssertionKind` subclasses, registered
in :mod:`skillci.graders.registry` like a plug-in's. :func:`check_assertion` is the one
dispatch from an assertion to its kind. The caller gives the answer, a reader for
workspace files (``None`` when a file is absent or unreadable) and a way to run a command
(``command-exit``): running it is the adapter's job (:mod:`skillci.runners.grading`, in
the verifier's sandbox).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from skillci.graders.kinds import (
    AssertionKind,
    CommandRun,
    InvalidAssertion,
    Subject,
    no_commands,
)
from skillci.graders.models import Assertion, GraderResult
from skillci.graders.registry import assertion_kind

#: Largest file an assertion reads (bytes); a bigger one is read up to this size.
MAX_READ = 1 << 20
Reader = Callable[[str], bytes | None]


def _short(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def _folded(a: Assertion, text: str) -> tuple[str, str]:
    value = a.value or ""
    return (text, value) if a.case_sensitive else (text.casefold(), value.casefold())


class Exact(AssertionKind):
    requires = ("value",)

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        hay, needle = _folded(a, subject.text or "")
        held = hay.strip() == needle.strip()
        verb = "equals" if held else "differs from"
        return held, f"{subject.where} {verb} {_short(a.value or '')}"


class Contains(AssertionKind):
    requires = ("value",)

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        hay, needle = _folded(a, subject.text or "")
        held = needle in hay
        verb = "contains" if held else "lacks"
        return held, f"{subject.where} {verb} {_short(a.value or '')}"


class Regex(AssertionKind):
    requires = ("value",)

    def validate(self, a: Assertion) -> None:
        super().validate(a)
        try:
            re.compile(a.value or "")
        except re.error as exc:
            raise InvalidAssertion(
                f"regex {a.value!r} does not compile: {exc}", field="value"
            ) from None

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        value = a.value or ""
        flags = re.MULTILINE | (0 if a.case_sensitive else re.IGNORECASE)
        m = re.search(value, subject.text or "", flags)
        found = f"matched {_short(m.group(0), 60)}" if m else "no match"
        return m is not None, f"{subject.where} /{value}/: {found}"


def check_schema(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    import jsonschema  # lazy: only tasks with json-schema assertions need it

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


class JsonSchema(AssertionKind):
    requires = ("schema",)

    def validate(self, a: Assertion) -> None:
        super().validate(a)
        why = check_schema(a.json_schema or {})
        if why is not None:
            raise InvalidAssertion(f"schema is not a valid JSON Schema: {why}", field="schema")

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        import jsonschema

        try:
            data = json.loads(subject.text or "")
        except ValueError as exc:
            return False, f"{subject.where}: not JSON: {exc}"
        errors = sorted(
            jsonschema.Draft202012Validator(a.json_schema or {}).iter_errors(data),
            key=lambda e: e.path,
        )
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            first = f"first at {where}: {errors[0].message}"
            return False, f"{subject.where}: {len(errors)} schema error(s); {first}"
        return True, f"{subject.where}: matches the schema"


class FileExists(AssertionKind):
    file_only = True
    needs_target = False

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        held = subject.text is not None
        return held, f"{subject.where} {'exists' if held else 'is missing'}"


class CommandExit(AssertionKind):
    requires = ("command",)
    needs_target = False

    def validate(self, a: Assertion) -> None:
        super().validate(a)
        if not (a.command or "").strip():
            raise InvalidAssertion("command is empty", field="command")

    def check(self, a: Assertion, subject: Subject) -> tuple[bool, str]:
        ran = subject.run(a.command or "")
        if ran.exit_code is None:
            return False, f"{a.command!r} did not finish (timed out)"
        tail = ran.output.strip().splitlines()[-1:] or [""]
        held = ran.exit_code == a.expect_exit
        return held, f"exit {ran.exit_code} (want {a.expect_exit}) {tail[0][:120]}"


def check_assertion(
    a: Assertion, *, answer: str, read: Reader, run: CommandRun = no_commands
) -> GraderResult:
    """The result of ``a``: its kind's check of its target (``answer`` or a file ``read``
    gives), ``run`` running its commands; ``negate`` applied."""
    kind = assertion_kind(a.kind)
    if a.target == "answer":
        subject = Subject(where="the final answer", text=answer, run=run)
    else:
        raw = read(a.target[5:])
        text = None if raw is None else raw[:MAX_READ].decode("utf-8", errors="replace")
        subject = Subject(where=a.target[5:], text=text, run=run)
    if subject.text is None and kind.needs_target:
        held, detail = False, f"{subject.where} is missing"
    else:
        held, detail = kind.check(a, subject)
    passed = held != a.negate
    return GraderResult(
        id=a.id or a.kind,
        kind=a.kind,
        passed=passed,
        score=1.0 if passed else 0.0,
        weight=a.weight,
        detail=f"negated: {detail}" if a.negate else detail,
    )


__all__ = [
    "MAX_READ",
    "CommandExit",
    "Contains",
    "Exact",
    "FileExists",
    "JsonSchema",
    "Reader",
    "Regex",
    "check_assertion",
    "check_schema",
]
