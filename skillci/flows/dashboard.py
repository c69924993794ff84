"""``skillci dashboard``: collect what skillci is doing, render it, keep the one dashboard
issue current (GitHub: an issue; LocalForge: ``refs/skillci/dashboard``), and act on the
boxes a maintainer ticked.

Load (the forge's skillci pull requests and their gate statuses, the channel refs) ->
decide (:mod:`skillci.present.dashboard`: rows, Markdown, which ticked boxes count) -> act
(write the body; re-run a gate, label a PR approved, label a rejected PR for a retry).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from skillci.flows.canary_ci import active_canaries
from skillci.flows.context import RepoContext
from skillci.flows.review import GATE_CONTEXT
from skillci.forge.base import (
    APPROVED_LABEL,
    RERUN_LABEL,
    RETRY_LABEL,
    DashboardIssue,
    PRState,
    PullRequest,
)
from skillci.present.dashboard import (
    DASHBOARD_TITLE,
    CanaryRow,
    CandidateRow,
    DashboardAction,
    DashboardData,
    MoveRow,
    RejectedRow,
    actions_for,
    render_dashboard,
)
from skillci.release.channels import ChannelStore

BOT_LABEL = "skillci"
MAX_MOVES = 10
MAX_REJECTED = 20


class DashboardResult(BaseModel):
    """What ``skillci dashboard update|apply`` did."""

    data: DashboardData = Field(description="What the dashboard shows.")
    body: str = Field(description="The rendered body.")
    location: str | None = Field(default=None, description="Issue URL or ref written.")
    written: bool = Field(default=False, description="The body was written (not a dry run).")
    actions: list[DashboardAction] = Field(default_factory=list, description="Acted on.")
    outcomes: list[str] = Field(default_factory=list, description="One line per action.")
    ignored: list[str] = Field(default_factory=list, description="Ticked boxes not acted on.")


def _gate(pr: PullRequest) -> tuple[str, str]:
    st = pr.statuses.get(GATE_CONTEXT)
    return (st.state, st.description) if st else ("none", "")


def collect(ctx: RepoContext) -> DashboardData:
    """The dashboard's rows, from the forge and the channel refs."""
    forge = ctx.forge
    candidates: list[CandidateRow] = []
    rejected: list[RejectedRow] = []
    listed = [p for p in forge.list_prs() if p.state != PRState.merged]
    closed = [p for p in listed if p.state == PRState.closed][-MAX_REJECTED:]
    for summary in [p for p in listed if p.state == PRState.open] + closed:
        pr = forge.get_pr(summary.number)  # with its head's statuses
        state, desc = _gate(pr)
        if BOT_LABEL not in pr.labels and state == "none":
            continue  # neither skillci's PR nor one its gate reviewed
        if pr.state == PRState.open:
            candidates.append(
                CandidateRow(
                    number=pr.number,
                    title=pr.title,
                    skill=pr.skill,
                    gate=state,
                    gate_description=desc,
                    needs_approval="needs-approval" in pr.labels,
                    approved=APPROVED_LABEL in pr.labels,
                )
            )
        else:
            rejected.append(
                RejectedRow(
                    number=pr.number,
                    title=pr.title,
                    skill=pr.skill,
                    reason=desc or "closed without merge",
                    retrying=RETRY_LABEL in pr.labels,
                )
            )
    canaries = [
        CanaryRow(skill=c.skill, canary=c.canary, stable=c.stable, weight=c.weight or 0)
        for c in active_canaries(ctx)
    ]
    store = ChannelStore(ctx.git)
    events = [(e.at, s, e) for s in store.skills() for e in store.log(s)]
    moves = [
        MoveRow(skill=s, type=str(e.type), version=e.version, reason=e.reason)
        for _, s, e in sorted(events, key=lambda t: (t[0], t[2].seq), reverse=True)[:MAX_MOVES]
    ]
    return DashboardData(
        repository=getattr(forge, "full_name", None) or ctx.root.name,
        candidates=sorted(candidates, key=lambda c: c.number),
        rejected=sorted(rejected, key=lambda r: -r.number)[:MAX_REJECTED],
        canaries=canaries,
        moves=moves,
    )


def show(ctx: RepoContext) -> DashboardIssue | None:
    return ctx.forge.read_dashboard()


def update(ctx: RepoContext) -> DashboardResult:
    """Collect, render, write (unless ``ctx.dry_run``)."""
    data = collect(ctx)
    body = render_dashboard(data)
    if ctx.dry_run:
        return DashboardResult(data=data, body=body)
    where = ctx.forge.write_dashboard(DASHBOARD_TITLE, body)
    return DashboardResult(data=data, body=body, location=where.location, written=True)


Rerun = Callable[[RepoContext, int], str]


def rerun_by_label(ctx: RepoContext, number: int) -> str:
    """Re-run by asking the PR workflow (GitHub): the ``skillci:rerun`` label, removed
    first when present so that adding it is a new ``labeled`` event."""
    if RERUN_LABEL in ctx.forge.get_pr(number).labels:
        ctx.forge.remove_label(number, RERUN_LABEL)
    ctx.forge.add_labels(number, [RERUN_LABEL])
    return f"requested (labelled {RERUN_LABEL}: the PR workflow gates it again)"


def apply(ctx: RepoContext, body: str | None, rerun: Rerun) -> DashboardResult:
    """Act on the boxes ticked in ``body`` (default: the dashboard as the forge has it)
    that the dashboard offers now, then rewrite it (the boxes come back unticked)."""
    if body is None:
        current = ctx.forge.read_dashboard()
        body = current.body if current else ""
    actions, ignored = actions_for(collect(ctx), body)
    outcomes: list[str] = []
    for a in actions:
        if ctx.dry_run:
            outcomes.append(f"would {a.kind} #{a.number}")
        elif a.kind == "rerun":
            outcomes.append(f"#{a.number}: gate {rerun(ctx, a.number)}")
        elif a.kind == "approve":
            ctx.forge.add_labels(a.number, [APPROVED_LABEL])
            outcomes.append(
                f"#{a.number}: labelled {APPROVED_LABEL} (the guard's question answered)"
            )
        else:
            ctx.forge.add_labels(a.number, [RETRY_LABEL])
            outcomes.append(
                f"#{a.number}: labelled {RETRY_LABEL} (the next proposal may reopen it)"
            )
    res = update(ctx)
    return res.model_copy(update={"actions": actions, "outcomes": outcomes, "ignored": ignored})


__all__ = ["DashboardResult", "apply", "collect", "rerun_by_label", "show", "update"]
