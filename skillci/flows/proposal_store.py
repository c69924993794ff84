"""Proposals are kept in the trace store (blob kind ``proposal``, key = patch id)."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillci.compile.proposal import Proposal
from skillci.errors import SkillciError
from skillci.flows.context import RepoContext
from skillci.patch.check import opinion_reasons

PROPOSAL_BLOB = "proposal"


@dataclass(frozen=True)
class ProposalSummary:
    """What review and release need from a stored proposal."""

    patch_id: str
    task_id: str | None
    failure_class: str | None
    guard_verdict: str
    guard_findings: list[str] = field(default_factory=list)
    proposal: Proposal | None = None


def load_proposal(ctx: RepoContext, patch_id: str) -> ProposalSummary | None:
    """The stored proposal of a patch, or None when this machine never proposed it."""
    try:
        prop = ctx.store.get_blob(PROPOSAL_BLOB, patch_id, Proposal)
    except (SkillciError, FileNotFoundError, KeyError):
        return None
    verdict = "pass"
    findings: list[str] = []
    for r in prop.rounds:
        if r.check is None or r.check.guard is None:
            continue
        if r.check.guard_verdict == "reject":
            verdict = "reject"
        elif r.check.guard_verdict == "needs-approval" and verdict == "pass":
            verdict = "needs-approval"
        findings += [f"{f.code}: {f.message}" for f in r.check.guard.findings]
    # the classifiers only add caution (designs 407, 458)
    if verdict == "pass" and any(op.verdict == "needs-approval" for op in prop.guard_opinions):
        verdict = "needs-approval"
    findings += opinion_reasons(prop.guard_opinions)
    return ProposalSummary(
        patch_id=patch_id,
        task_id=prop.task_id or None,
        failure_class=prop.failure_class,
        guard_verdict=verdict,
        guard_findings=findings,
        proposal=prop,
    )
