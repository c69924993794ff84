"""One assertion over the agent's final answer and the files it wrote (pure).

The caller gives the answer, a reader for workspace files (``None`` when a file is absent
or unreadable) and, for ``command-exit``, the command's exit code: running it is the
adapter's job (:mod:`skillci.runners.grading`, in the verifier's sandbox).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from skillci.graders.models import Assertion, GraderResult

#: Largest file an assertion reads (bytes); a bigger one is read up to this size.
MAX_READ = 1 << 20
Reader = Callable[[str], bytes | None]


def _result(a: Assertion, held: bool, detail: str) -> GraderResult:
    passed = held != a.negate
    if a.negate:
        detail = f"negated: {detail}"
    return GraderResult(
        id=a.id or a.kind,
        kind=a.kind,
        passed=passed,
        score=1.0 if passed else 0.0,
        weight=a.weight,
        detail=detail,
    )


def _short(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def check_schema(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    import jsonschema  # lazy: only tasks with json-schema assertions need it

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


def _json_schema(a: Assertion, text: str) -> tuple[bool, str]:
    import jsonschema

    try:
        data = json.loads(text)
    except ValueError as exc:
        return False, f"not JSON: {exc}"
    assert a.json_schema is not None
    errors = sorted(
        jsonschema.Draft202012Validator(a.json_schema).iter_errors(data), key=lambda e: e.path
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        return False, f"{len(errors)} schema error(s); first at {where}: {errors[0].message}"
    return True, "matches the schema"


def check_assertion(
    a: Assertion, *, answer: str, read: Reader, exit_code: int | None = None, output: str = ""
) -> GraderResult:
    """The result of ``a``. ``exit_code``/``output``: the command's, for ``command-exit``."""
    if a.kind == "command-exit":
        if exit_code is None:
            return _result(a, False, f"{a.command!r} did not finish (timed out)")
        tail = output.strip().splitlines()[-1:] or [""]
        return _result(
            a,
            exit_code == a.expect_exit,
            f"exit {exit_code} (want {a.expect_exit}) {tail[0][:120]}",
        )
    if a.target == "answer":
        text: str | None = answer
        where = "the final answer"
    else:
        raw = read(a.target[5:])
        where = a.target[5:]
        if a.kind == "file-exists":
            return _result(
                a, raw is not None, f"{where} {'exists' if raw is not None else 'is missing'}"
            )
        text = None if raw is None else raw[:MAX_READ].decode("utf-8", errors="replace")
    if text is None:
        return _result(a, False, f"{where} is missing")
    if a.kind == "json-schema":
        held, why = _json_schema(a, text)
        return _result(a, held, f"{where}: {why}")
    value = a.value or ""
    hay, needle = (text, value) if a.case_sensitive else (text.casefold(), value.casefold())
    if a.kind == "exact":
        held = hay.strip() == needle.strip()
        return _result(a, held, f"{where} {'equals' if held else 'differs from'} {_short(value)}")
    if a.kind == "contains":
        held = needle in hay
        return _result(a, held, f"{where} {'contains' if held else 'lacks'} {_short(value)}")
    flags = re.MULTILINE | (0 if a.case_sensitive else re.IGNORECASE)
    m = re.search(value, text, flags)
    found = f"matched {_short(m.group(0), 60)}" if m else "no match"
    return _result(a, m is not None, f"{where} /{value}/: {found}")


__all__ = ["MAX_READ", "Reader", "check_assertion", "check_schema"]
