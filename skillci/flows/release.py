"""``skillci release --pr N``: a gated PR becomes a tagged, changelogged version — or is closed.

Load: the PR, the latest gate report for its *current* head, the skill at the merge base,
the head and the base tip. Decide (pure, skillci.release): the change list and bump, the
changelog entry, the compatibility row, the rule promotions. Act: one release commit on the
head branch (plumbing, CAS), squash-merge through the forge with the head-sha guard, the
annotated tag ``<skill>@<version>``, a ``released`` event in the channel log. A PR whose gate
rejected is closed with the report as its final comment and its branch deleted.

Re-running after an interruption resumes: a head that is already skillci's release commit
for an accepted gate is merged as is; a merged PR without its tag gets the tag.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillci.errors import (
    ConflictError,
    InvalidInputError,
    NeedsApproval,
    ReleaseRefused,
    SkillciError,
)
from skillci.flows.context import RepoContext
from skillci.flows.gate import GATE_BLOB
from skillci.forge.base import APPROVED_LABEL, NEEDS_APPROVAL_LABEL, PRState, PullRequest
from skillci.gate.verdict import GateReport
from skillci.patch.version import ChangeList, compare, next_version
from skillci.present.report import render_markdown
from skillci.release import changelog, compat
from skillci.release.channels import ChannelStore, Draft
from skillci.release.manifest_text import MANIFEST, set_compatibility, set_version
from skillci.release.models import ChannelEvent, ChannelState, ReleaseInfo, utcnow
from skillci.release.promote import promote_candidates
from skillci.release.tags import report_digest, tag_name, with_stamp
from skillci.skill.models import CompatEntry, Manifest
from skillci.vcs.candidate import parse_trailers

RELEASE_TRAILER = "Skillci-Release"
GATE_TRAILER = "Gate-Id"
BOT = "skillci[bot]"


def actor_name(git_root: str | os.PathLike[str] | None = None) -> str:
    """Who is acting (docs/design/221-actor-identity.md), first found of:
    ``$SKILLCI_ACTOR``; the forge identity (``$GITHUB_ACTOR`` inside GitHub Actions);
    ``$GIT_COMMITTER_NAME`` / ``$GIT_AUTHOR_NAME``; ``git config user.name`` of the repo at
    ``git_root`` (its local, global and system config); the OS user."""
    if os.environ.get("SKILLCI_ACTOR"):
        return os.environ["SKILLCI_ACTOR"]
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_ACTOR"):
        return os.environ["GITHUB_ACTOR"]
    for key in ("GIT_COMMITTER_NAME", "GIT_AUTHOR_NAME"):
        if os.environ.get(key):
            return os.environ[key]
    from skillci.vcs.git import Git

    try:
        name = Git(Path(git_root or ".")).read("config", "user.name", check=False).strip()
    except SkillciError:
        name = ""
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # pragma: no cover - no passwd entry
        return "unknown"


class ReleaseResult(BaseModel):
    """What ``skillci release --pr N`` did (or, under --dry-run, would do)."""

    pr: int = Field(description="Pull request number.")
    action: Literal["released", "closed", "tagged"] = Field(
        description="released: merged and tagged; closed: gate rejected; tagged: resumed tag."
    )
    skill: str = Field(description="Skill name.")
    gate_id: str | None = Field(description="Gate report the decision rests on.")
    from_version: str | None = Field(default=None, description="Version before.")
    version: str | None = Field(default=None, description="Released version.")
    bump: str | None = Field(default=None, description="major, minor or patch.")
    tag: str | None = Field(default=None, description="Release tag name.")
    tag_sha: str | None = Field(default=None, description="Annotated tag object.")
    release_commit: str | None = Field(default=None, description="Commit on the head branch.")
    merge_sha: str | None = Field(default=None, description="Squash-merge commit on the base.")
    entry: str | None = Field(default=None, description="Changelog entry = tag message.")
    promoted: list[str] = Field(default_factory=list, description="Rules candidate -> active.")
    files: list[str] = Field(default_factory=list, description="Files the release commit wrote.")
    reasons: list[str] = Field(default_factory=list, description="Gate reasons when closed.")
    dry_run: bool = Field(default=False, description="Nothing was written.")


# ---------------------------------------------------------------------------- load


def gate_reports(ctx: RepoContext) -> list[GateReport]:
    """Every stored gate report, oldest first."""
    out = []
    for key in ctx.store.list_blobs(GATE_BLOB) if ctx.store.index_path.exists() else []:
        try:
            out.append(ctx.store.get_blob(GATE_BLOB, key, GateReport))
        except Exception:  # noqa: S112 - an unreadable old report is not this PR's gate
            continue
    return out


def find_gate(ctx: RepoContext, pr: PullRequest, head: str, skill: str) -> GateReport:
    """The latest gate report on ``head``; refuses naming what is missing."""
    reports = [r for r in gate_reports(ctx) if r.skill == skill]
    on_head = sorted((r for r in reports if r.head_sha == head), key=lambda r: r.created_at)
    if on_head:
        return on_head[-1]
    base = pr.base_sha or ctx.git.rev(f"refs/heads/{pr.base}") or ""
    history = set(ctx.git.read("rev-list", f"{base}..{head}").split()) if base else set()
    older = sorted(
        (r for r in reports if r.head_sha in history), key=lambda r: r.created_at, reverse=True
    )
    if older:
        raise ReleaseRefused(
            f"PR #{pr.number}: the gate ran on an older head {(older[0].head_sha or '')[:12]} "
            f"({older[0].gate_id}), not on the current head {head[:12]}",
            hint=f"run `skillci review --pr {pr.number}` to gate the current head",
        )
    raise ReleaseRefused(
        f"PR #{pr.number}: no gate run for its head {head[:12]}",
        hint=f"run `skillci review --pr {pr.number}` first",
    )


def stamped(entry: str, report: GateReport) -> str:
    """The tag message: the changelog entry, then the gate stamp (id, report hash, verdict)."""
    digest = report_digest(report.model_dump_json())
    return with_stamp(entry, report.gate_id, digest, report.verdict)


def stored_gate(ctx: RepoContext, gate_id: str | None) -> GateReport | None:
    """The gate report kept in the trace store under ``gate_id``; None when there is none
    (no id, no store, no such blob): release and the gated channels read it."""
    if not gate_id or not ctx.store.index_path.exists():
        return None
    try:
        return ctx.store.get_blob(GATE_BLOB, gate_id, GateReport)
    except InvalidInputError:
        return None


def _trailers(ctx: RepoContext, commit: str) -> dict[str, str]:
    return parse_trailers(ctx.git.read("log", "-1", "--format=%B", commit))


def _skill_of(ctx: RepoContext, pr: PullRequest) -> tuple[str, str]:
    """(skill name, skill dir) of the PR."""
    hint = pr.skill or _trailers(ctx, pr.head_sha).get("Skill")
    if not hint:  # a PR a person opened on GitHub: the one skill it changes
        from skillci.flows.skills import changed_skill

        hint = changed_skill(ctx, pr.base_sha or pr.base, pr.head_sha)
    d = ctx.skill_dir(hint)
    return ctx.package_at(pr.head_sha, d).manifest.name, d


# ---------------------------------------------------------------------------- decide


def release_reason(
    ctx: RepoContext, pr: PullRequest, base: str, head: str, report: GateReport
) -> str:
    """Why, from structured data only: failure class + taxonomy summary + counts."""
    parts: list[str] = []
    fc = None
    for sha in ctx.git.read("rev-list", f"{base}..{head}").split():
        fc = fc or _trailers(ctx, sha).get("Failure-Class")
    if fc:
        try:
            from skillci.analyze.taxonomy import info

            parts.append(f"{fc} ({info(fc).summary})")
        except (KeyError, ValueError):
            parts.append(fc)
    if pr.patch_id:
        from skillci.flows.proposal_store import load_proposal

        summary = load_proposal(ctx, pr.patch_id)
        before = summary.proposal.before if summary and summary.proposal else None
        if before is not None and before.total:
            parts.append(
                f"student failed {before.total - before.passed}/{before.total} run(s) "
                f"on {summary.task_id if summary else '?'}"
            )
    parts.append(changelog.reason_counts(report))
    return "; ".join(parts)


def verified_runtime(ctx: RepoContext, report: GateReport, manifest: Manifest) -> CompatEntry:
    """(model, quantization, harness) the gate re-ran: from its run records, else the
    manifest's target runtime; a real agent's harness is ``NAME@VERSION`` from the report."""
    quant = harness = None
    run_ids = [rid for sides in report.evidence.values() for rid in sides.get("head", [])]
    for rid in run_ids[:1]:
        try:
            rec = ctx.store.get(rid)
        except Exception:  # noqa: S112 - records may live in another store (CI shards)
            continue
        quant, harness = rec.model.quantization, rec.runtime.harness
    tr = manifest.target_runtime
    if quant is None and tr.model == report.student:
        quant = tr.quantization
    if report.agent != "builtin":  # a real agent: its name and the version that ran
        harness = f"{report.agent}@{report.agent_version or 'unknown'}"
    elif harness is None or tr.agent_harness.startswith(harness):
        harness = tr.agent_harness
    return CompatEntry(model=report.student, quantization=quant, harness=harness)


class _Plan(BaseModel):
    changes: ChangeList
    files: dict[str, bytes]
    entry: str
    promoted: list[str]


def plan_files(
    ctx: RepoContext, pr: PullRequest, report: GateReport, skill_dir: str, gated_head: str
) -> _Plan:
    base_tip = ctx.git.rev(f"refs/heads/{pr.base}")
    if base_tip is None:
        raise InvalidInputError(f"base branch {pr.base!r} is gone")
    mb = ctx.git.merge_base(base_tip, gated_head) or base_tip
    before = ctx.package_at(mb, skill_dir)
    after = ctx.package_at(gated_head, skill_dir)
    current = ctx.package_at(base_tip, skill_dir)
    changes = compare(before, after, release_reason(ctx, pr, mb, gated_head, report))
    if changes.bump == "none":
        raise ReleaseRefused(
            f"PR #{pr.number} changes nothing in {skill_dir}",
            hint="close it: there is nothing to release",
        )
    frm = current.manifest.version
    changes = changes.model_copy(
        update={"from_version": frm, "to_version": next_version(frm, changes.bump)}
    )
    val = report.suite("validation")
    head_side = val.metrics.sides.get("head") if val else None
    if head_side is None:
        raise ReleaseRefused(f"gate {report.gate_id} has no validation pass rate for the head")
    rt = verified_runtime(ctx, report, after.manifest)
    new_compat = compat.record_verified(
        after.manifest.compatibility,
        model=rt.model or report.student,
        quantization=rt.quantization,
        harness=rt.harness or after.manifest.target_runtime.agent_harness,
        score=head_side.pass_rate.pass_rate,
        eval_id=report.gate_id,
        version=changes.to_version,
    )
    row = next(r for r in new_compat.verified if r.eval_id == report.gate_id)
    text = set_version(after.text(MANIFEST), changes.to_version)
    text = set_compatibility(text, new_compat)
    rule_files, promoted = promote_candidates(after, report.gate_id)
    entry = changelog.entry(changes, report, verified=row, unverified=new_compat.unverified)
    footer = f"PR #{pr.number} · gate `{report.gate_id}` · {utcnow():%Y-%m-%d}"
    old_log = (
        after.text(changelog.CHANGELOG_FILE) if changelog.CHANGELOG_FILE in after.files else None
    )
    log_text = changelog.prepend(
        old_log, after.manifest.name, changes.to_version, entry, footer=footer
    )
    rel_files: dict[str, bytes] = {
        MANIFEST: text.encode(),
        changelog.CHANGELOG_FILE: log_text.encode(),
        compat.COMPAT_FILE: compat.render_markdown(
            after.manifest.name, changes.to_version, new_compat
        ).encode(),
        **rule_files,
    }
    files = {f"{skill_dir}/{rel}": data for rel, data in sorted(rel_files.items())}
    return _Plan(changes=changes, files=files, entry=entry, promoted=promoted)


# ---------------------------------------------------------------------------- act


def _close_rejected(ctx: RepoContext, pr: PullRequest, report: GateReport) -> ReleaseResult:
    comment = (
        f"Closed by `skillci release`: the gate rejected head `{(report.head_sha or '')[:12]}`. "
        "The record and `refs/skillci/pr/{n}/head` stay as the audit trail.\n\n".replace(
            "{n}", str(pr.number)
        )
        + render_markdown(report, marker=False)
    )
    res = ReleaseResult(
        pr=pr.number,
        action="closed",
        skill=report.skill,
        gate_id=report.gate_id,
        reasons=report.reasons,
        dry_run=ctx.dry_run,
    )
    if not ctx.dry_run:
        # a person's branch (no patch id) stays; skillci's candidate branch goes
        ctx.forge.close(pr.number, comment, delete_branch=pr.patch_id is not None)
    return res


def _record_release(
    ctx: RepoContext, skill: str, skill_dir: str, base: str, info: ReleaseInfo, actor: str
) -> None:
    def build(state: ChannelState) -> Draft | None:
        if info.version in state.releases:
            return None
        state.releases[info.version] = info
        state.path, state.base = skill_dir, base
        ev = ChannelEvent(
            seq=1,
            type="released",
            version=info.version,
            actor=actor,
            command=f"skillci release --pr {info.pr}",
            reason=f"PR #{info.pr} accepted by gate {info.gate_id}; tagged {info.tag}",
            gate_id=info.gate_id,
            at=utcnow(),
        )
        return Draft(ev, state)

    ChannelStore(ctx.git).append(skill, ChannelState(skill=skill, path=skill_dir, base=base), build)


def _entry_from_message(message: str) -> str:
    """The changelog entry inside a release/merge commit message: after the title, before
    the trailer block (entry lines look like trailers, so the blank line is the border)."""
    _title, _sep, body = message.partition("\n\n")
    entry, _sep, trailers = body.rstrip("\n").rpartition("\n\n")
    if not parse_trailers(trailers):
        entry = body.rstrip("\n")
    return entry + "\n"


def _tag_merged(ctx: RepoContext, pr: PullRequest, actor: str) -> ReleaseResult:
    """Resume: a PR merged by skillci release whose tag is missing."""
    assert pr.merge_sha is not None
    msg = ctx.git.read("log", "-1", "--format=%B", pr.merge_sha)
    tr = parse_trailers(msg)
    version, gid = tr.get(RELEASE_TRAILER), tr.get(GATE_TRAILER)
    if not version:
        raise ReleaseRefused(
            f"PR #{pr.number} is already merged (not by skillci release)",
            hint="nothing to release",
        )
    skill, skill_dir = _skill_of(ctx, pr)
    tag = tag_name(skill, version)
    if ctx.git.ref_target(f"refs/tags/{tag}") is not None:
        raise ReleaseRefused(
            f"PR #{pr.number} is already released as {tag}", hint="see `skillci channel log`"
        )
    entry = _entry_from_message(msg)
    res = ReleaseResult(
        pr=pr.number,
        action="tagged",
        skill=skill,
        gate_id=gid,
        version=version,
        tag=tag,
        merge_sha=pr.merge_sha,
        entry=entry,
        dry_run=ctx.dry_run,
    )
    if not ctx.dry_run:
        report = stored_gate(ctx, gid)
        message = stamped(entry, report) if report is not None else entry
        res.tag_sha = ctx.forge.publish_tag(ctx.git, tag, pr.merge_sha, message)
        info = ReleaseInfo(
            version=version,
            commit=pr.merge_sha,
            tag=tag,
            gate_id=gid,
            pr=pr.number,
            released_at=utcnow(),
        )
        _record_release(ctx, skill, skill_dir, pr.base, info, actor)
        ctx.forge.push_state(ctx.git, skill=skill)
    return res


def _check_base(ctx: RepoContext, pr: PullRequest, report: GateReport, skill_dir: str) -> None:
    """Refuse when the base changed the skill since the gate ran: the verdict compared the
    head with a base that no longer is (a base that moved elsewhere is fine)."""
    tip = ctx.git.rev(f"refs/heads/{pr.base}")
    if tip is None or report.base_sha is None or tip == report.base_sha:
        return
    prefix = skill_dir.rstrip("/") + "/"
    moved = [p for p in ctx.git.changed_paths(report.base_sha, tip) if p.startswith(prefix)]
    if moved:
        raise ReleaseRefused(
            f"PR #{pr.number}: {pr.base} changed {skill_dir} since gate {report.gate_id} ran "
            f"(gate base {report.base_sha[:12]}, {pr.base} now {tip[:12]}: {moved[0]}"
            + (f" and {len(moved) - 1} more" if len(moved) > 1 else "")
            + ")",
            hint=f"update the candidate branch (re-run `skillci propose`), then "
            f"`skillci review --pr {pr.number}`",
        )


def _ensure_stable(ctx: RepoContext, skill: str, base: str, actor: str) -> None:
    """The first release of a skill makes the version it replaces stable (tagged if needed),
    so that the new release can be canaried against it and rolled back to."""
    state = ChannelStore(ctx.git).state(skill)
    if state is None or state.stable is None:
        from skillci.flows.canary import channel_init

        channel_init(ctx, skill, ref=base, actor=actor)


def _publish_release_commit(
    ctx: RepoContext,
    pr: PullRequest,
    gated: str,
    files: dict[str, bytes],
    message: str,
    tag: str,
) -> str:
    """Commit the release files on top of the gated head and push the PR's branch to it."""
    tree = ctx.git.tree_with(gated, files)
    commit = ctx.git.commit_tree(tree, [gated], message, bot=True)
    try:
        ctx.forge.publish_branch(
            ctx.git, pr.head_branch, commit, gated, reason=f"skillci release {tag}"
        )
    except ConflictError:
        raise ConflictError(
            f"branch {pr.head_branch} moved while releasing PR #{pr.number}",
            hint=f"run `skillci review --pr {pr.number}` on the new head",
        ) from None
    ctx.forge.refresh_head(pr.number)
    return commit


def _refuse_inconclusive(number: int, report: GateReport) -> None:
    """No information is no verdict: the PR stays open and nothing is closed or refused for
    ever (design 290); more evidence (tasks, repeats, a fixed route) can decide."""
    if report.verdict == "inconclusive":
        raise ReleaseRefused(
            f"PR #{number}: gate {report.gate_id} was inconclusive — "
            + ("; ".join(report.reasons[:2]) or "the evidence could not decide"),
            hint="gather evidence that can decide (more tasks or repeats, or fix the errored "
            "trials), re-run `skillci review`, then release",
        )


def release_pr(ctx: RepoContext, number: int, *, actor: str | None = None) -> ReleaseResult:
    """Release PR ``number`` if an accepting gate report covers its current head; close it
    when the gate rejected it; refuse (ReleaseRefused) otherwise."""
    actor = actor or actor_name(ctx.root)
    forge = ctx.forge
    pr = forge.get_pr(number)
    ctx.forge.fetch_pr(ctx.git, pr)
    ctx.forge.pull_state(ctx.git)
    if pr.state == PRState.merged:
        return _tag_merged(ctx, pr, actor)
    if pr.state != PRState.open:
        raise ReleaseRefused(f"PR #{number} is {pr.state.value}", hint="only open PRs release")
    if NEEDS_APPROVAL_LABEL in pr.labels and APPROVED_LABEL not in pr.labels:
        raise NeedsApproval(
            f"PR #{number} is marked {NEEDS_APPROVAL_LABEL} and no human approved it: "
            "neither merged nor closed"
        )
    if not ctx.dry_run:
        pr = forge.refresh_head(number)
    skill, skill_dir = _skill_of(ctx, pr)
    head = pr.head_sha
    tr = _trailers(ctx, head)
    resume = RELEASE_TRAILER in tr and GATE_TRAILER in tr
    gated = ctx.git.rev(f"{head}^") if resume else head
    assert gated is not None
    report = find_gate(ctx, pr, gated, skill)
    if resume and report.gate_id != tr[GATE_TRAILER]:
        raise ReleaseRefused(f"PR #{number}: release commit {head[:12]} names another gate")
    _refuse_inconclusive(number, report)
    if not report.accepted:
        return _close_rejected(ctx, pr, report)
    _check_base(ctx, pr, report, skill_dir)
    if resume:
        version = tr[RELEASE_TRAILER]
        entry = _entry_from_message(ctx.git.read("log", "-1", "--format=%B", head))
        frm = ctx.package_at(gated, skill_dir).manifest.version
        files: list[str] = ctx.git.changed_paths(gated, head)
        promoted: list[str] = []
        bump = None
        release_commit = head
    else:
        plan = plan_files(ctx, pr, report, skill_dir, gated)
        version, entry = plan.changes.to_version, plan.entry
        frm, bump, promoted = plan.changes.from_version, plan.changes.bump, plan.promoted
        files = sorted(plan.files)
    tag = tag_name(skill, version)
    if ctx.git.ref_target(f"refs/tags/{tag}") is not None:
        raise ReleaseRefused(
            f"{tag} already exists", hint="the base moved: re-run `skillci review`, then release"
        )
    res = ReleaseResult(
        pr=number,
        action="released",
        skill=skill,
        gate_id=report.gate_id,
        from_version=frm,
        version=version,
        bump=bump,
        tag=tag,
        entry=entry,
        promoted=promoted,
        files=files,
        dry_run=ctx.dry_run,
    )
    if ctx.dry_run:
        return res
    _ensure_stable(ctx, skill, pr.base, actor)
    trailers = f"{RELEASE_TRAILER}: {version}\n{GATE_TRAILER}: {report.gate_id}\nPR: #{number}\n"
    if not resume:
        message = f"release {skill} {version}\n\n{entry}\n{trailers}"
        release_commit = _publish_release_commit(ctx, pr, gated, plan.files, message, tag)
    res.release_commit = release_commit
    merged = forge.merge(
        number,
        title=f"{skill} {version}: {pr.title} (#{number})",
        message=f"{entry}\n{trailers}",
        expected_head_sha=release_commit,
    )
    assert merged.merge_sha is not None
    res.merge_sha = merged.merge_sha
    ctx.forge.fetch_branch(ctx.git, pr.base)
    res.tag_sha = ctx.forge.publish_tag(ctx.git, tag, merged.merge_sha, stamped(entry, report))
    info = ReleaseInfo(
        version=version,
        commit=merged.merge_sha,
        tag=tag,
        gate_id=report.gate_id,
        pr=number,
        released_at=utcnow(),
    )
    _record_release(ctx, skill, skill_dir, pr.base, info, actor)
    ctx.forge.push_state(ctx.git, skill=skill)
    return res
