"""Guard findings: one reason to object to a patch, with evidence, and the verdict rule.

Shared by the content scan (``guard``), the effect policy (``policy``) and the gate's
change guard.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillci.patch.normalize import is_hidden

Severity = Literal["high", "medium", "low"]
Verdict = Literal["pass", "needs-approval", "reject"]
#: Keys whose values are bookkeeping, not text a patch says.
SKIP_KEYS = frozenset({"op", "schema_version", "status", "hit_count"})


class Evidence(BaseModel):
    """Where a finding is: a field of the patch and a span of its text."""

    field: str = Field(description="e.g. ops[0].rule.instruction.steps[2], or a file path.")
    start: int = Field(description="Start offset in that field's text.")
    end: int = Field(description="End offset (exclusive).")
    excerpt: str = Field(description="The span, hidden characters shown as \\uXXXX.")


class Finding(BaseModel):
    """One reason the guard objects to a patch."""

    code: str = Field(description="Stable finding code, e.g. injection-override.")
    severity: Severity = Field(description="high -> reject, medium -> needs-approval.")
    op_index: int | None = Field(description="Op it is in; None for metadata or the whole patch.")
    message: str
    evidence: Evidence | None = None


def verdict_of(findings: Iterable[Finding]) -> Verdict:
    """Any high finding rejects; any medium one needs a human; otherwise pass."""
    sev = {f.severity for f in findings}
    return "reject" if "high" in sev else "needs-approval" if "medium" in sev else "pass"


def show(text: str) -> str:
    """An excerpt for people: hidden characters as \\uXXXX, at most 160 characters."""
    out = "".join(f"\\u{ord(c):04x}" if is_hidden(c) else c for c in text)
    return out if len(out) <= 160 else out[:157] + "..."


def walk_strings(data: Any, path: str, out: list[tuple[str, str]]) -> None:
    """Append (field path, string) for every string in ``data``, odd dict keys included."""
    if isinstance(data, str):
        out.append((path, data))
    elif isinstance(data, dict):
        for k, v in data.items():
            if k in SKIP_KEYS:
                continue
            if isinstance(k, str) and not k.isidentifier():
                out.append((f"{path}.<key>", k))
            walk_strings(v, f"{path}.{k}", out)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            walk_strings(v, f"{path}[{i}]", out)
