"""Check a proposed patch: apply in memory, then limits, guard and lint on the result.

A compiler's output is a proposal. Before anything is written or proposed:

1. ``apply_detailed`` (preconditions: ids exist, no collisions, ...);
2. ``check_limits`` against the *before* package's ``patch_limits`` and token budget;
3. ``guard`` with the untrusted texts of the supporting runs (verbatim copies, injection
   and exfiltration shapes, gated fields, sensitive topics -> needs-approval);
4. ``lint`` of the patched package: errors the patch introduces (vague phrases, unknown
   tools, conflicts) count against it; errors the package already had do not.

:func:`untrusted_texts` collects what the guard must treat as untrusted from run records:
tool call arguments, tool results, assistant/tool messages, untrusted error messages, the
final output and the verifier's output.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from skillci.errors import PatchError
from skillci.patch.apply import Applied, apply_detailed
from skillci.patch.guard import GuardConfig, GuardReport, UntrustedText, guard
from skillci.patch.limits import LimitReport, check_limits, lift
from skillci.patch.models import Patch
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage
from skillci.trace.models import ErrorEvent, MessageEvent, RunRecord, ToolCallEvent, ToolResultEvent

CHECK_SCHEMA_VERSION = 1


class PatchCheck(BaseModel):
    """Result of checking one patch against one package."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=CHECK_SCHEMA_VERSION, description="Shape version.")
    patch_id: str = Field(description="Id of the checked patch.")
    apply_error: str | None = Field(
        default=None, description="Why the patch does not apply (null when it does)."
    )
    limits: LimitReport | None = Field(default=None, description="Limit results (when applied).")
    guard: GuardReport | None = Field(default=None, description="Guard verdict (when applied).")
    lint_errors: list[str] = Field(
        default_factory=list, description="Lint errors the patch introduces (code: message)."
    )

    @property
    def applies(self) -> bool:
        return self.apply_error is None

    @property
    def within_limits(self) -> bool:
        return self.limits is not None and self.limits.ok

    @property
    def guard_verdict(self) -> str:
        return self.guard.verdict if self.guard is not None else "reject"

    @property
    def ok(self) -> bool:
        """Applies, within limits, not rejected by the guard, no new lint errors."""
        return (
            self.applies
            and self.within_limits
            and self.guard_verdict != "reject"
            and not self.lint_errors
        )

    @property
    def needs_approval(self) -> bool:
        return self.guard_verdict == "needs-approval"

    def problems(self) -> list[str]:
        """One line per reason the patch is not ok (ours; guard excerpts are not included)."""
        out: list[str] = []
        if self.apply_error:
            out.append(f"does not apply: {self.apply_error}")
        if self.limits is not None:
            out += [f"limit {v.message()}" for v in self.limits.violations]
        if self.guard is not None and self.guard.verdict == "reject":
            out += [
                f"guard {f.code}: {f.message}" for f in self.guard.findings if f.severity == "high"
            ]
        out += [f"lint {e}" for e in self.lint_errors]
        return out


def _lint_keys(pkg: SkillPackage) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for f in lint(pkg).findings:
        if f.severity == "error":
            out[(f.code, f.message)] = f"{f.code}: {f.message}"
    return out


def new_lint_errors(before: SkillPackage, after: SkillPackage) -> list[str]:
    """Lint errors of ``after`` that ``before`` did not have."""
    old = _lint_keys(before)
    return [msg for key, msg in sorted(_lint_keys(after).items()) if key not in old]


def check_patch(
    package: SkillPackage,
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
    *,
    lifted: Collection[str] = (),
) -> tuple[PatchCheck, Applied | None]:
    """Check ``patch`` on ``package`` (see the module docstring). Never raises for a bad
    patch: the reasons are in the returned :class:`PatchCheck`. ``lifted``: limits
    measured but not enforced (``skillci bench`` ablations only)."""
    pid = patch.pid
    try:
        applied = apply_detailed(package, patch)
    except PatchError as exc:
        return PatchCheck(patch_id=pid, apply_error=exc.message), None
    limits = lift(check_limits(applied), lifted)
    report = guard(applied, untrusted, config)
    lint_errors = new_lint_errors(package, applied.after)
    return PatchCheck(patch_id=pid, limits=limits, guard=report, lint_errors=lint_errors), applied


def untrusted_texts(records: Iterable[RunRecord]) -> list[UntrustedText]:
    """Every untrusted text of ``records``, labelled with run id and step."""
    out: list[UntrustedText] = []

    def add(text: str, run_id: str, event: str, source: str) -> None:
        if text and text.strip():
            out.append(UntrustedText(text=text, run_id=run_id, event=event, source=source))

    for rec in records:
        rid = rec.run_id
        for ev in rec.events:
            if isinstance(ev, ToolCallEvent):
                add(
                    json.dumps(ev.arguments, ensure_ascii=False, sort_keys=True),
                    rid,
                    f"step {ev.step}",
                    "tool_call",
                )
                for v in ev.arguments.values():
                    if isinstance(v, str) and len(v) > 20:
                        add(v, rid, f"step {ev.step}", "tool_call")
            elif isinstance(ev, ToolResultEvent):
                add(ev.output, rid, f"step {ev.step}", "tool_result")
                add(ev.error or "", rid, f"step {ev.step}", "tool_result")
            elif isinstance(ev, MessageEvent) and ev.untrusted:
                add(ev.content, rid, f"step {ev.step}", "model")
            elif isinstance(ev, ErrorEvent) and ev.untrusted:
                add(ev.message, rid, f"step {ev.step}", "error")
        add(rec.final_output or "", rid, "final_output", "model")
        add(rec.evaluation.verifier_output, rid, "verifier_output", "verifier")
    return out


__all__ = ["PatchCheck", "check_patch", "new_lint_errors", "untrusted_texts"]
