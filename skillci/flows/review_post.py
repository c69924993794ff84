"""``skillci review --from-shards DIR``: the PR's status, recomputed from a CI run's records.

The ``skill-report.yml`` workflow runs on ``workflow_run`` of ``skill-pr.yml``: the gate's
trials ran in the PR's own (read-only, possibly fork) context, which may have edited
``skill-pr.yml`` itself and uploaded anything. This job has write access, runs the default
branch's skillci and *never* takes a verdict from the artifact
(docs/design/170-gate-status-trust.md):

- the PR, its head and its base branch come from GitHub (the ``workflow_run`` payload and
  the API) and git, never from the files;
- the run counts only if the PR changes nothing but ``skills/`` and ``evals/`` (so the run
  executed the base branch's workflow file and skillci), the shards gated exactly that head,
  a base on the PR's base branch and the skill the PR changes
  (:func:`skillci.gate.trust.problems`);
- the verdict is recomputed here: ``merge_shards`` with options built on this side replays
  the gate's own decision over the run records, which must be the records of exactly the
  trials the trusted plan asks for (task, role, skill package hash);
- anything else is an ``error`` status ("not verified") and a comment saying why — never a
  success. The uploaded report.json (and HTML) stay the PR's own claim, for humans.

``review --from-report FILE`` (posting a report file) is refused: a file alone proves nothing.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from skillci.errors import InvalidInputError, SkillciError
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, resolve_student, suites_for, target_agent
from skillci.flows.skills import managed_skills_at
from skillci.forge.base import PRState, PullRequest
from skillci.gate.trust import GATE_WORKFLOW_PATH as GATE_WORKFLOW_PATH  # re-exported: `review`
from skillci.gate.trust import RunFacts, problems
from skillci.gate.verdict import GateReport
from skillci.gate.verdict import decisive_lines as decisive_lines  # re-exported: `review`
from skillci.present.mdsafe import md_text
from skillci.present.report import render_markdown, status_line
from skillci.skill.discover import touched_skills

GATE_CONTEXT = "skillci/gate"
MAX_REPORT_BYTES = 10 * 1024 * 1024
MAX_COMMENT_CHARS = 65_000  # GitHub refuses comment bodies over 65,536 characters


class Posted(BaseModel):
    """What ``review --from-shards`` posted."""

    pr: int = Field(description="Pull request number.")
    head_sha: str = Field(description="Commit the status was set on.")
    state: str = Field(description="Status state: success, failure or error.")
    description: str = Field(description="Status description.")
    gate_id: str | None = Field(default=None, description="Gate report posted, if any.")
    verdict: str | None = Field(default=None, description="accept or reject, if any.")
    problem: str | None = Field(default=None, description="Why the run could not be verified.")


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


def _from_event(
    ctx: RepoContext, event: dict[str, Any]
) -> tuple[PullRequest, str, str | None, str | None]:
    """(PR, head sha, run url, workflow path) from a ``workflow_run`` payload."""
    run = event.get("workflow_run")
    if not isinstance(run, dict) or not isinstance(run.get("head_sha"), str):
        raise InvalidInputError(
            "the event is not a workflow_run", hint="pass --pr N outside skill-report.yml"
        )
    head = run["head_sha"]
    url = run.get("html_url") if isinstance(run.get("html_url"), str) else None
    path = run.get("path") if isinstance(run.get("path"), str) else None
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
    return prs[0], head, url, path


def shard_dirs(root: Path) -> list[Path]:
    """``root`` itself when it is a shard directory, else its shard subdirectories."""
    from skillci.flows.gate_shard import SHARD_FILE

    if (root / SHARD_FILE).is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / SHARD_FILE).is_file())


def _facts(
    ctx: RepoContext,
    pr: PullRequest,
    head: str,
    workflow_path: str | None,
    spec_base: str,
    spec_head: str,
    spec_skill: str,
    gate_workflow: str,
) -> RunFacts:
    """What git (with the PR fetched from the forge) says about the PR and the run."""
    base_tip = ctx.git.rev(f"refs/heads/{pr.base}") or ctx.git.rev(pr.base)
    if base_tip is None or ctx.git.rev(head) is None:
        raise InvalidInputError(
            f"PR #{pr.number}: base {pr.base} or head {head[:12]} is not in this clone",
            hint="check out with fetch-depth: 0 (skillci fetches the PR head itself on GitHub)",
        )
    mb = ctx.git.merge_base(base_tip, head) or base_tip
    changed = tuple(ctx.git.changed_paths(mb, head))
    known_base = ctx.git.rev(spec_base) if re.fullmatch(r"[0-9a-f]{7,64}", spec_base) else None
    on_base = known_base is not None and ctx.git.merge_base(known_base, base_tip) == known_base
    skills = touched_skills(changed, managed_skills_at(ctx, head))
    return RunFacts(
        pr_head=head,
        workflow_path=workflow_path,
        changed_paths=changed,
        base_is_on_base_branch=on_base,
        spec_head=spec_head,
        spec_base=spec_base,
        spec_skill=spec_skill,
        changed_skills=tuple(skills),
        skill_dirs=tuple(managed_skills_at(ctx, base_tip)),
        gate_workflow=gate_workflow,
    )


def recompute(
    ctx: RepoContext,
    pr: PullRequest,
    head: str,
    root: Path,
    *,
    workflow_path: str | None,
    expected: GateOptions,
    gate_workflow: str = GATE_WORKFLOW_PATH,
) -> tuple[GateReport | None, str | None]:
    """(report recomputed from the run's records, None) or (None, why not)."""
    from skillci.flows.gate_shard import merge_shards, read_shard

    dirs = shard_dirs(root)
    if not dirs:
        return None, f"the gate run left no shards ({root.name}/eval-*/shard.json)"
    try:
        spec = read_shard(dirs[0]).spec
    except (SkillciError, ValueError) as exc:
        return None, f"{dirs[0].name} is not a gate shard ({str(exc).splitlines()[0][:160]})"
    facts = _facts(
        ctx, pr, head, workflow_path, spec.base_sha, spec.head_sha, spec.skill, gate_workflow
    )
    found = problems(facts)
    if found:
        return None, "; ".join(found)
    # no --suites: what the skill's metadata asks for on the *base* branch (the run planned
    # with the head's; a PR that changes them no longer matches the plan -> not verified)
    try:
        suites = expected.suites or suites_for(ctx, spec.skill, spec.base_sha)
        student, source = expected.student, expected.student_source
        if not source:  # no --model: the student the shards resolved (the skill's target)
            student, source = resolve_student(ctx, spec.skill, head)
        agent, version = expected.agent, expected.agent_version
        if agent is None:  # no --agent: the one the base's target_runtime names
            agent, pinned = target_agent(ctx, spec.skill, spec.base_sha)
            version = version or pinned
        opts = dataclasses.replace(
            expected,
            skill=spec.skill,
            base=spec.base_sha,
            head=head,
            suites=suites,
            student=student,
            student_source=source,
            agent=agent,
            agent_version=version,
            pr=pr.number,
        )
        return merge_shards(ctx, dirs, opts=opts), None
    except SkillciError as exc:
        return None, f"the run's records do not recompute into this PR's gate: {exc.message}"
    except ValueError as exc:  # a record or shard file that is not one
        return None, f"a shard file is malformed ({str(exc).splitlines()[0][:160]})"


def _run_link(url: str | None) -> str:
    # the URL is GitHub's (the workflow_run payload); shown only if it looks like one
    if url and re.fullmatch(r"https?://[A-Za-z0-9.:/_-]+", url):
        return f"[run]({url})"
    return "a CI run"


def post_verified(
    ctx: RepoContext,
    root: Path,
    *,
    expected: GateOptions,
    number: int | None = None,
    event: dict[str, Any] | None = None,
    gate_workflow: str = GATE_WORKFLOW_PATH,
) -> Posted:
    """Upsert the sticky comment and the ``skillci/gate`` status from the verdict recomputed
    from the run's shards under ``root``; an ``error`` status when they cannot be verified."""
    forge = ctx.forge
    run_url = workflow_path = None
    if number is not None:
        pr = forge.get_pr(number)
        head = pr.head_sha
    elif event is not None:
        pr, head, run_url, workflow_path = _from_event(ctx, event)
    else:
        raise InvalidInputError(
            "which PR?", hint="pass --pr N, or run inside a workflow_run workflow"
        )
    forge.fetch_pr(ctx.git, pr)
    report, problem = recompute(
        ctx,
        pr,
        head,
        root,
        workflow_path=workflow_path,
        expected=expected,
        gate_workflow=gate_workflow,
    )
    source = (
        f"\n\n<sub>Recomputed by `skillci review --from-shards` from the run records of "
        f"{_run_link(run_url)}, with the base branch's skillci; the report file the run "
        "uploaded is not used.</sub>\n"
    )
    if report is None:
        assert problem is not None
        state, desc = "error", f"not verified: {problem}"[:140]
        body = (
            "## ⚠️ skillci gate: **not verified**\n\n"
            f"{md_text(problem, limit=2000)}.\n\nA maintainer can gate this PR in a trusted "
            "job: *Run workflow* on skill-release with its number (docs/github.md)." + source
        )
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
