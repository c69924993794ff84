"""``check``: preconditions + limits + guard, in one report with one verdict.

- The patch does not apply (a precondition fails): ``reject``; the guard still scans the
  patch's texts so that the report shows everything at once.
- Over a limit: ``reject``, naming the limit and by how much.
- Otherwise the guard's verdict: ``pass``, ``needs-approval`` or ``reject``.
- A model's second opinion (``--guard-model``, :mod:`skillci.patch.second_opinion`), when
  given, can only make a ``pass`` a ``needs-approval``; a ``reject`` stands (design 407).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from skillci.errors import PatchError
from skillci.patch.apply import Applied, apply_detailed
from skillci.patch.diff import diff_applied
from skillci.patch.guard import (
    GuardConfig,
    GuardReport,
    UntrustedText,
    Verdict,
    guard,
    guard_patch,
    trusted_text,
)
from skillci.patch.limits import LimitReport, check_limits
from skillci.patch.models import Patch
from skillci.patch.second_opinion import GuardOpinion, combine
from skillci.skill.package import SkillPackage

CHECK_SCHEMA_VERSION = 1


class CheckReport(BaseModel):
    """Everything `skillci patch check` found about one patch against one package."""

    schema_version: int = CHECK_SCHEMA_VERSION
    patch_id: str
    skill: str
    skill_version: str
    verdict: Verdict
    reasons: list[str] = Field(description="One line per reason the verdict is not pass.")
    precondition_error: str | None = Field(
        default=None, description="Why the patch does not apply."
    )
    limits: LimitReport | None = None
    guard: GuardReport
    guard_model: GuardOpinion | None = Field(
        default=None,
        description="The guard classifier's second opinion (--guard-model); only adds caution.",
    )


def opinion_reasons(opinion: GuardOpinion | None) -> list[str]:
    """One line per field the classifier cautions about (ours; its reason is not quoted)."""
    if opinion is None:
        return []
    out = [f"guard-model {opinion.route}: {f.verdict} {f.field}" for f in opinion.flagged]
    if opinion.error:
        out.append(f"guard-model {opinion.route}: {opinion.error}")
    return out


def check(
    pkg: SkillPackage,
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
    opinion: GuardOpinion | None = None,
) -> tuple[CheckReport, Applied | None]:
    """Check ``patch`` against ``pkg``; returns the report and the applied patch (if it
    applies). ``opinion``: a classifier's second opinion, recorded and only adding caution."""
    cfg = config or GuardConfig()
    reasons: list[str] = []
    try:
        applied = apply_detailed(pkg, patch)
    except PatchError as exc:
        report = guard_patch(patch, untrusted, cfg, trusted=trusted_text(pkg))
        reasons.append(f"precondition: {exc.message}")
        reasons += [f"guard {f.code}: {f.message}" for f in report.findings if f.severity != "low"]
        reasons += opinion_reasons(opinion)
        return (
            CheckReport(
                patch_id=patch.pid,
                skill=pkg.manifest.name,
                skill_version=pkg.manifest.version,
                verdict="reject",
                reasons=reasons,
                precondition_error=exc.message,
                guard=report,
                guard_model=opinion,
            ),
            None,
        )
    diff_applied(applied)  # raises InternalError when the diff and the ops disagree
    limits = check_limits(applied)
    report = guard(applied, untrusted, cfg)
    reasons += [f"limit {v.message()}" for v in limits.violations]
    reasons += [f"guard {f.code}: {f.message}" for f in report.findings if f.severity != "low"]
    reasons += opinion_reasons(opinion)
    verdict: Verdict = "reject" if not limits.ok else report.verdict
    verdict = combine(verdict, [opinion] if opinion is not None else [])
    return (
        CheckReport(
            patch_id=patch.pid,
            skill=pkg.manifest.name,
            skill_version=pkg.manifest.version,
            verdict=verdict,
            reasons=reasons,
            limits=limits,
            guard=report,
            guard_model=opinion,
        ),
        applied,
    )
