"""The dashboard issue: one per repository, kept current by skillci (pure).

Renovate's Dependency Dashboard is the model: open candidate pull requests with their gate
state, patches waiting for a person's approval, rejected patches with their reasons (the
audit trail in one place), running canaries and recent channel moves (releases,
rollbacks). Each actionable row carries a checkbox whose hidden marker names the action
and the PR; a maintainer ticks it, the workflow reacts to the edit (``issues: edited``)
and :func:`ticked` reads the boxes back.

Plain data in (:class:`DashboardData`), Markdown out (:func:`render_dashboard`). Every value
from a PR, a status or a log is escaped with :mod:`skillci.present.mdsafe`, so no value can
add a heading, a link, a mention, HTML or a checkbox marker. A ticked box is only an
action when its PR is in the matching section of the data collected *now*
(:func:`actions_for`): a hand-written line proves nothing.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from skillci.present.mdsafe import md_code, md_text

DASHBOARD_SCHEMA_VERSION = 1
#: The body's first line; the forges find the dashboard by it (forge/ keeps the same
#: string: the two layers import neither way; a unit test holds them equal).
DASHBOARD_MARKER = "<!-- skillci:dashboard -->"
DASHBOARD_TITLE = "skillci dashboard"

ActionKind = Literal["rerun", "approve", "retry"]
GateState = Literal["success", "failure", "error", "pending", "none"]
_BOX = re.compile(
    r"^\s*- \[(?P<mark>[ xX])\] <!-- skillci:(?P<kind>rerun|approve|retry)=(?P<n>\d+) -->"
)
_ICON = {"success": "✅", "failure": "❌", "error": "⚠️", "pending": "⏳", "none": "·"}


class CandidateRow(BaseModel):
    """An open skillci pull request."""

    number: int = Field(description="PR number.")
    title: str = Field(description="PR title (untrusted text).")
    skill: str | None = Field(default=None, description="Skill the PR changes.")
    gate: GateState = Field(default="none", description="State of the skillci/gate status.")
    gate_description: str = Field(default="", description="The status description.")
    needs_approval: bool = Field(
        default=False, description="The patch guard asks a person (new tools/permissions)."
    )
    approved: bool = Field(default=False, description="A maintainer approved it already.")


class RejectedRow(BaseModel):
    """A skillci pull request closed without merge: the patch is not proposed again."""

    number: int = Field(description="PR number.")
    title: str = Field(description="PR title (untrusted text).")
    skill: str | None = Field(default=None, description="Skill the PR changed.")
    reason: str = Field(description="Why it was rejected (the gate status, or 'closed').")
    retrying: bool = Field(default=False, description="A maintainer asked for a retry.")


class CanaryRow(BaseModel):
    """A running canary."""

    skill: str = Field(description="Skill name.")
    canary: str = Field(description="Canary version.")
    stable: str | None = Field(default=None, description="Stable version, if any.")
    weight: int = Field(description="Traffic share of the canary, percent.")


class MoveRow(BaseModel):
    """One entry of a skill's channel log (release, promotion, rollback...)."""

    skill: str = Field(description="Skill name.")
    type: str = Field(description="Event type of the channel log.")
    version: str | None = Field(default=None, description="Version it is about.")
    reason: str = Field(description="Why, one line.")


class DashboardData(BaseModel):
    """Everything the dashboard shows, collected from the forge and the channel refs."""

    schema_version: int = Field(default=DASHBOARD_SCHEMA_VERSION, description="Shape version.")
    repository: str = Field(description="owner/name, or the local repository's folder name.")
    candidates: list[CandidateRow] = Field(default_factory=list, description="Open PRs.")
    rejected: list[RejectedRow] = Field(default_factory=list, description="Closed, unmerged.")
    canaries: list[CanaryRow] = Field(default_factory=list, description="Running canaries.")
    moves: list[MoveRow] = Field(
        default_factory=list, description="Recent channel moves, newest first."
    )


class DashboardAction(BaseModel):
    """A ticked box that stands for something skillci may do."""

    kind: ActionKind = Field(description="rerun (the gate), approve, or retry (a rejected patch).")
    number: int = Field(description="The PR it is about.")


def _pr(n: int, title: str, skill: str | None) -> str:
    where = f" {md_code(skill)}" if skill else ""
    return f"#{n}{where} {md_text(title, limit=120)}"


def _box(kind: ActionKind, n: int, checked: bool, text: str) -> str:
    return f"- [{'x' if checked else ' '}] <!-- skillci:{kind}={n} --> {text}"


def render_dashboard(data: DashboardData) -> str:
    """The issue body (Markdown), starting with :data:`DASHBOARD_MARKER`."""
    out = [
        DASHBOARD_MARKER,
        "This issue lists what skillci is doing in this repository and is rewritten by "
        "skillci after each run. Tick a box to ask for an action; the dashboard workflow "
        "acts on the edit and rewrites the issue.",
        "",
        "## Open candidates",
        "",
    ]
    waiting = [c for c in data.candidates if c.needs_approval and not c.approved]
    for c in data.candidates:
        gate = f"{_ICON[c.gate]} gate **{c.gate}**"
        if c.gate_description:
            gate += f": {md_text(c.gate_description, limit=140)}"
        out.append(
            _box(
                "rerun",
                c.number,
                False,
                f"re-run the gate of {_pr(c.number, c.title, c.skill)} — {gate}",
            )
        )
    if not data.candidates:
        out.append("None.")
    out += ["", "## Pending approvals", ""]
    for c in waiting:
        out.append(
            _box(
                "approve",
                c.number,
                False,
                f"approve {_pr(c.number, c.title, c.skill)} — the patch guard asks a person "
                "(new tools or permissions)",
            )
        )
    if not waiting:
        out.append("None.")
    out += ["", "## Rejected patches", ""]
    for r in data.rejected:
        text = f"retry {_pr(r.number, r.title, r.skill)} — {md_text(r.reason, limit=200)}"
        out.append(
            f"- retry requested: {text}" if r.retrying else _box("retry", r.number, False, text)
        )
    if not data.rejected:
        out.append("None.")
    out += ["", "## Running canaries", ""]
    if data.canaries:
        out += ["| skill | canary | stable | weight |", "|---|---|---|---|"]
        for k in data.canaries:
            out.append(
                f"| {md_code(k.skill, cell=True)} | {md_code(k.canary, cell=True)} | "
                f"{md_code(k.stable or '-', cell=True)} | {k.weight}% |"
            )
    else:
        out.append("None.")
    out += ["", "## Recent channel moves", ""]
    for m in data.moves:
        what = f"{md_code(m.skill)} {md_text(m.type)}"
        if m.version:
            what += f" {md_code(m.version)}"
        out.append(f"- {what}: {md_text(m.reason, limit=200)}")
    if not data.moves:
        out.append("None.")
    return "\n".join(out) + "\n"


def ticked(body: str) -> list[DashboardAction]:
    """The boxes ticked in an (edited) dashboard body, in order, without repeats."""
    seen: list[DashboardAction] = []
    for line in body.splitlines():
        m = _BOX.match(line)
        if m and m.group("mark") in "xX":
            a = DashboardAction(kind=m.group("kind"), number=int(m.group("n")))
            if a not in seen:
                seen.append(a)
    return seen


def actions_for(data: DashboardData, body: str) -> tuple[list[DashboardAction], list[str]]:
    """(actions to take, why other ticked boxes are ignored): a box counts only when its
    PR is in the section that offers that action now."""
    offered = {
        "rerun": {c.number for c in data.candidates},
        "approve": {c.number for c in data.candidates if c.needs_approval and not c.approved},
        "retry": {r.number for r in data.rejected if not r.retrying},
    }
    ok: list[DashboardAction] = []
    ignored: list[str] = []
    for a in ticked(body):
        if a.number in offered[a.kind]:
            ok.append(a)
        else:
            ignored.append(f"{a.kind} #{a.number}: not offered by the dashboard now")
    return ok, ignored


__all__ = [
    "DASHBOARD_MARKER",
    "DASHBOARD_SCHEMA_VERSION",
    "DASHBOARD_TITLE",
    "CanaryRow",
    "CandidateRow",
    "DashboardAction",
    "DashboardData",
    "MoveRow",
    "RejectedRow",
    "actions_for",
    "render_dashboard",
    "ticked",
]
