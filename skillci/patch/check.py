"""``check``: preconditions + limits + guard, in one report with one verdict.

- The patch does not apply (a precondition fails): ``reject``; the guard still scans the
  patch's texts so that the report shows everything at once.
- Over a limit: ``reject``, naming the limit and by how much.
- Otherwise the guard's verdict: ``pass``, ``needs-approval`` or ``reject``.
- Models' second opinions (``--guard-model``, repeatable; :mod:`skillci.patch.second_opinion`),
  when given, can only make a ``pass`` a ``needs-approval``; a ``reject`` stands (design 407).
  Each route is asked on its own and recorded apart; any one of them cautioning is enough
  (design 458).
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

#: 2: ``guard_models`` (one opinion per ``--guard-model`` route) replaces ``guard_model``
CHECK_SCHEMA_VERSION = 2


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
    guard_models: list[GuardOpinion] = Field(
        default_factory=list,
        description="The guard classifiers' second opinions, one per --guard-model route in "
        "the order given; they only add caution.",
    )


def opinion_reasons(opinions: Sequence[GuardOpinion]) -> list[str]:
    """One line per field a classifier cautions about (ours; its reason is not quoted)."""
    out: list[str] = []
    for opinion in opinions:
        out += [f"guard-model {opinion.route}: {f.verdict} {f.field}" for f in opinion.flagged]
        if opinion.error:
            out.append(f"guard-model {opinion.route}: {opinion.error}")
    return out


def check(
    pkg: SkillPackage,
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
    opinions: Sequence[GuardOpinion] = (),
) -> tuple[CheckReport, Applied | None]:
    """Check ``patch`` against ``pkg``; returns the report and the applied patch (if it
    applies). ``opinions``: classifiers' second opinions, recorded and only adding caution."""
    cfg = config or GuardConfig()
    reasons: list[str] = []
    try:
        applied = apply_detailed(pkg, patch)
    except PatchError as exc:
        report = guard_patch(patch, untrusted, cfg, trusted=trusted_text(pkg))
        reasons.append(f"precondition: {exc.message}")
        reasons += [f"guard {f.code}: {f.message}" for f in report.findings if f.severity != "low"]
        reasons += opinion_reasons(opinions)
        return (
            CheckReport(
                patch_id=patch.pid,
                skill=pkg.manifest.name,
                skill_version=pkg.manifest.version,
                verdict="reject",
                reasons=reasons,
                precondition_error=exc.message,
                guard=report,
                guard_models=list(opinions),
            ),
            None,
        )
    diff_applied(applied)  # raises InternalError when the diff and the ops disagree
    limits = check_limits(applied)
    report = guard(applied, untrusted, cfg)
    reasons += [f"limit {v.message()}" for v in limits.violations]
    reasons += [f"guard {f.code}: {f.message}" for f in report.findings if f.severity != "low"]
    reasons += opinion_reasons(opinions)
    verdict: Verdict = "reject" if not limits.ok else report.verdict
    verdict = combine(verdict, opinions)
    return (
        CheckReport(
            patch_id=patch.pid,
            skill=pkg.manifest.name,
            skill_version=pkg.manifest.version,
            verdict=verdict,
            reasons=reasons,
            limits=limits,
            guard=report,
            guard_models=list(opinions),
        ),
        applied,
    )
