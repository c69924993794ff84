"""Proposals are kept in the trace store (blob kind ``proposal``, key = patch id)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillci.flows.context import RepoContext

PROPOSAL_BLOB = "proposal"


@dataclass(frozen=True)
class ProposalSummary:
    """What review and release need from a stored proposal."""

    patch_id: str
    task_id: str | None
    failure_class: str | None
    guard_verdict: str
    guard_findings: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def load_proposal(ctx: RepoContext, patch_id: str) -> ProposalSummary | None:
    try:
        data = ctx.store.get_blob_json(PROPOSAL_BLOB, patch_id)
    except Exception:
        return None
    if not isinstance(data, dict):
        return None
    guard = data.get("guard") or {}
    findings = [
        f"{f.get('code')}: {f.get('message', '')}"
        for f in guard.get("findings", [])
        if isinstance(f, dict)
    ]
    return ProposalSummary(
        patch_id=patch_id,
        task_id=data.get("task_id"),
        failure_class=(data.get("diagnosis") or {}).get("failure_class"),
        guard_verdict=str(guard.get("verdict", "pass")),
        guard_findings=findings,
        raw=data,
    )
