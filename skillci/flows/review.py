"""``skillci review --pr N``: gate a PR, then one sticky comment and one status on it."""

from __future__ import annotations

from filelock import FileLock

from skillci.compile.proposal import Proposal
from skillci.errors import SkillciError
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, GateRerun, Progress, gate_options, run_gate
from skillci.flows.remote import RunnerOptions, preflight
from skillci.forge.base import APPROVED_LABEL, NEEDS_APPROVAL_LABEL, PRState, PullRequest
from skillci.gate.decision import worst
from skillci.gate.verdict import GateReport
from skillci.present.report import render_markdown, status_line
from skillci.vcs.candidate import parse_trailers

GATE_CONTEXT = "skillci/gate"


def pr_gate_options(
    ctx: RepoContext,
    pr: PullRequest,
    *,
    repeat: int,
    student: str | None,
    suites: tuple[str, ...],
    parallel: int,
    teacher: str | None = None,
    rerun: GateRerun = "errors",
    agent: str | None = None,
    agent_version: str | None = None,
    judge: str | None = None,
    remote: RunnerOptions | None = None,
) -> GateOptions:
    """Gate options for a PR: its skill, base/head, the proposal's guard/same-instance, and
    the student: ``student`` (``--model``), else the one the proposal's runs used, else
    the skill's target runtime (:func:`~skillci.flows.gate.resolve_student`)."""
    msg = ctx.git.read("log", "-1", "--format=%B", pr.head_sha)
    trailers = parse_trailers(msg)
    guard_verdict = "needs-approval" if NEEDS_APPROVAL_LABEL in pr.labels else "pass"
    findings: list[str] = []
    same_task = trailers.get("Same-Instance-Task")
    proposal = None
    if pr.patch_id:
        from skillci.flows.proposal_store import load_proposal

        proposal = load_proposal(ctx, pr.patch_id)
    if proposal is not None:  # the label stays a floor: a stored proposal never lowers it
        guard_verdict = worst(guard_verdict, proposal.guard_verdict)
        findings = proposal.guard_findings
        same_task = same_task or proposal.task_id
    source = "--model" if student is not None else ""
    if student is None and proposal is not None and proposal.proposal is not None:
        student = proposal_student(ctx, proposal.proposal)
        if student is not None:
            source = f"the student patch {pr.patch_id} was proposed for"
    if guard_verdict == "needs-approval" and APPROVED_LABEL in pr.labels:
        guard_verdict = "pass"  # a maintainer approved it (label, or the dashboard)
        findings = [*findings, f"approved by a maintainer ({APPROVED_LABEL})"]
    return gate_options(
        ctx,
        skill=pr.skill or trailers.get("Skill", ""),
        pr=pr.number,
        base=pr.base,
        head=pr.head_sha,
        suites=suites,
        repeat=repeat,
        student=student,
        student_source=source,
        parallel=parallel,
        same_instance_task=same_task,
        guard_verdict=guard_verdict,
        guard_findings=findings,
        teacher=teacher,
        rerun=rerun,
        agent=agent,
        agent_version=agent_version,
        judge=judge,
        remote=remote,
    )


def proposal_student(ctx: RepoContext, proposal: Proposal) -> str | None:
    """The model route of the student runs a proposal was measured with (its baseline or
    patched runs in the trace store), or None when none is on this machine."""
    for summary in (proposal.before, proposal.after):
        for run_id in summary.run_ids if summary is not None else []:
            try:
                return ctx.store.get(run_id).model.route
            except (SkillciError, KeyError, FileNotFoundError):
                continue
    return None


def review(
    ctx: RepoContext,
    number: int,
    *,
    repeat: int,
    student: str | None,
    suites: tuple[str, ...],
    parallel: int = 2,
    post: bool = True,
    progress: Progress | None = None,
    teacher: str | None = None,
    rerun: GateRerun = "errors",
    agent: str | None = None,
    agent_version: str | None = None,
    judge: str | None = None,
    remote: RunnerOptions | None = None,
) -> GateReport:
    if remote is not None:  # missing credentials or Harbor: exit 4 before the PR is touched
        preflight(remote)
    # one review of a PR at a time in this state dir: a second one waits, then finds
    # the first one's trials in the cache and posts after it (never interleaved)
    ctx.state_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(ctx.state_dir / f"review-pr-{number}.lock")):
        return _review(
            ctx,
            number,
            repeat=repeat,
            student=student,
            suites=suites,
            parallel=parallel,
            post=post,
            progress=progress,
            teacher=teacher,
            rerun=rerun,
            agent=agent,
            agent_version=agent_version,
            judge=judge,
            remote=remote,
        )


def _review(
    ctx: RepoContext,
    number: int,
    *,
    repeat: int,
    student: str | None,
    suites: tuple[str, ...],
    parallel: int,
    post: bool,
    progress: Progress | None,
    teacher: str | None,
    rerun: GateRerun,
    agent: str | None = None,
    agent_version: str | None = None,
    judge: str | None = None,
    remote: RunnerOptions | None = None,
) -> GateReport:
    forge = ctx.forge
    pr = forge.refresh_head(number)
    if pr.state != PRState.open:
        from skillci.errors import InvalidInputError

        raise InvalidInputError(
            f"PR #{number} is {pr.state.value}", hint="only open PRs are reviewed"
        )
    ctx.forge.fetch_pr(ctx.git, pr)
    if post:
        forge.set_status(
            number,
            context=GATE_CONTEXT,
            state="pending",
            description="skillci gate running",
            sha=pr.head_sha,
        )
    opts = pr_gate_options(
        ctx,
        pr,
        repeat=repeat,
        student=student,
        suites=suites,
        parallel=parallel,
        teacher=teacher,
        rerun=rerun,
        agent=agent,
        agent_version=agent_version,
        judge=judge,
        remote=remote,
    )
    report = run_gate(ctx, opts, progress=progress)
    if post:
        forge.upsert_comment(number, render_markdown(report))
        state, desc = status_line(report)
        forge.set_status(
            number, context=GATE_CONTEXT, state=state, description=desc, sha=pr.head_sha
        )
    return report
