"""``skillci review --from-report FILE``: post a gate report computed elsewhere.

The ``skill-report.yml`` workflow runs on ``workflow_run`` of ``skill-pr.yml``: the gate
ran in the PR's own (read-only, possibly fork) context and uploaded its GateReport as an
artifact; this job has write access and *no* checkout of the PR. The artifact is untrusted
data (docs/design/112-workflows.md):

- it is size-capped and validated as a :class:`GateReport`, never executed;
- the PR and its head commit come from GitHub (the ``workflow_run`` payload, then the
  API), not from the file: a report for another commit is refused;
- the comment says which workflow run produced it; the status is set on the commit the
  report is about.

A missing or unreadable report becomes an ``error`` status (and comment) on the PR, so a
broken gate run never leaves a PR without a verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.forge.base import PRState, PullRequest
from skillci.gate.report import render_markdown, status_line
from skillci.gate.verdict import GateReport

GATE_CONTEXT = "skillci/gate"
MAX_REPORT_BYTES = 10 * 1024 * 1024
MAX_COMMENT_CHARS = 65_000  # GitHub refuses comment bodies over 65,536 characters


class Posted(BaseModel):
    """What ``review --from-report`` posted."""

    pr: int = Field(description="Pull request number.")
    head_sha: str = Field(description="Commit the status was set on.")
    state: str = Field(description="Status state: success, failure or error.")
    description: str = Field(description="Status description.")
    gate_id: str | None = Field(default=None, description="Gate report posted, if any.")
    verdict: str | None = Field(default=None, description="accept or reject, if any.")
    problem: str | None = Field(default=None, description="Why there is no report to post.")


def load_report_file(path: Path) -> tuple[GateReport | None, str | None]:
    """(report, None) or (None, why it cannot be used)."""
    if not path.is_file():
        return None, f"the gate produced no report ({path.name} is missing)"
    if path.stat().st_size > MAX_REPORT_BYTES:
        return None, f"{path.name} is larger than {MAX_REPORT_BYTES} bytes"
    try:
        return GateReport.model_validate_json(path.read_bytes()), None
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0][:200]
        return None, f"{path.name} is not a gate report ({first})"


def _from_event(ctx: RepoContext, event: dict[str, Any]) -> tuple[PullRequest, str, str | None]:
    """(PR, head sha, run url) from a ``workflow_run`` payload."""
    run = event.get("workflow_run")
    if not isinstance(run, dict) or not isinstance(run.get("head_sha"), str):
        raise InvalidInputError(
            "the event is not a workflow_run", hint="pass --pr N outside skill-report.yml"
        )
    head = run["head_sha"]
    url = run.get("html_url") if isinstance(run.get("html_url"), str) else None
    numbers = [
        p["number"]
        for p in run.get("pull_requests") or []
        if isinstance(p, dict) and isinstance(p.get("number"), int)
    ]
    # pull_requests is empty for PRs from forks: find the open PR on that head commit
    prs = [ctx.forge.get_pr(n) for n in numbers] or [
        p for p in ctx.forge.list_prs(state=PRState.open) if p.head_sha == head
    ]
    prs = [p for p in prs if p.state == PRState.open]
    if not prs:
        raise InvalidInputError(
            f"no open pull request has head {head[:12]}",
            hint="the PR was closed or pushed to since the gate ran; nothing to report",
        )
    return prs[0], head, url


def post_report(
    ctx: RepoContext,
    report_file: Path,
    *,
    number: int | None = None,
    event: dict[str, Any] | None = None,
) -> Posted:
    """Upsert the sticky comment and the ``skillci/gate`` status from ``report_file``."""
    forge = ctx.forge
    run_url = None
    if number is not None:
        pr = forge.get_pr(number)
        head = pr.head_sha
    elif event is not None:
        pr, head, run_url = _from_event(ctx, event)
    else:
        raise InvalidInputError(
            "which PR?", hint="pass --pr N, or run inside a workflow_run workflow"
        )
    report, problem = load_report_file(report_file)
    if report is not None and report.head_sha != head:
        problem = (
            f"the report is for commit {(report.head_sha or '?')[:12]}, not the PR head {head[:12]}"
        )
        report = None
    source = f"\n\n<sub>Posted by `skillci review --from-report` from {run_url or 'a CI run'}."
    source += " The report is data from the PR's own run.</sub>\n"
    if report is None:
        assert problem is not None
        state, desc = "error", f"no gate report: {problem}"[:140]
        body = f"## ⚠️ skillci gate: **no report**\n\n{problem}." + source
    else:
        state, desc = status_line(report)
        body = render_markdown(report)
        if len(body) + len(source) > MAX_COMMENT_CHARS:
            body = body[: MAX_COMMENT_CHARS - len(source) - 40] + "\n\n… (truncated)"
        body += source
    if not ctx.dry_run:
        forge.upsert_comment(pr.number, body)
        forge.set_status(pr.number, context=GATE_CONTEXT, state=state, description=desc, sha=head)
    return Posted(
        pr=pr.number,
        head_sha=head,
        state=state,
        description=desc,
        gate_id=report.gate_id if report else None,
        verdict=report.verdict if report else None,
        problem=problem,
    )
