"""``skillci propose``: from a failing student trial to a pull request with a bounded patch.

Load the skill at the base ref and the task; run the propose loop (skillci.compile.loop)
with real runners (cached trials); keep the Proposal in the trace store; when it is
``proposed``, commit one candidate commit per patch on ``skillci/<skill>/<class>-<hash8>``
and open (or update) a PR whose body carries the evidence. Closed = rejected: a patch whose
id matches a closed-unmerged PR is not proposed again unless ``force`` — except a PR whose
last gate verdict was ``inconclusive`` (its ``skillci/gate`` status) or marked for retry: a
verdict on no information is not a refusal (docs/design/323).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import yaml

from skillci.analyze.classify import verifier_checks
from skillci.analyze.models import Diagnosis
from skillci.compile.base import Compiler
from skillci.compile.loop import LoopBudget, propose_task
from skillci.compile.proposal import Proposal
from skillci.compile.suite import propose_suite
from skillci.compile.template_compiler import TemplateCompiler
from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.gate import student_agent
from skillci.flows.proposal_store import PROPOSAL_BLOB
from skillci.flows.remote import RunnerOptions, check_agent, open_environment, remote_source
from skillci.flows.review_post import GATE_CONTEXT
from skillci.forge.base import (
    APPROVED_LABEL,
    NEEDS_APPROVAL_LABEL,
    RETRY_LABEL,
    PRState,
    PullRequest,
)
from skillci.gate.rebase import DEFAULT_REBASE_WHEN, RebaseWhen, should_rebase
from skillci.patch.apply import apply
from skillci.patch.diff import render_diff
from skillci.present.mdsafe import md_code, md_fence, md_text
from skillci.runners.base import TrialSpec, builtin_agent, plan
from skillci.runners.harness_remote import HarnessEnvironment
from skillci.runners.remote import RemoteTrials
from skillci.runners.scheduler import Scheduler, error_cause
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose, Task
from skillci.trace.models import RunRecord
from skillci.vcs.candidate import candidate_branch, commit_candidate

Action = Literal[
    "opened", "updated", "unchanged", "refused_closed", "already_merged", "no_pr", "dry_run"
]
Fallback = Literal["template", "none"]
FALLBACKS: tuple[Fallback, ...] = ("none", "template")
#: A failing model compiler is not replaced silently (docs/design/324).
DEFAULT_FALLBACK: Fallback = "none"
PATCH_MARKER = "<!-- skillci:patch-id={} -->"
SUITE_BLOB = "suite-proposal"


@dataclass
class ProposeOptions:
    skill: str
    task: str
    student: str = "sim/student"
    teacher: str = "sim/teacher"
    compiler: str = "template"
    repeat: int = 1
    base: str = "main"
    force: bool = False
    max_rounds: int = 3
    parallel: int = 1
    rebase_when: RebaseWhen = DEFAULT_REBASE_WHEN
    #: the student's agent on the ``student`` route (builtin or a real agent; docs/design/372)
    agent: str = "builtin"
    #: the real agent's installed version (None: the newest)
    agent_version: str | None = None
    #: model routes each asked for a second opinion on each patch's free text (designs 407, 458)
    guard_models: tuple[str, ...] = ()
    #: where the student's trials run (``--runner harbor --env NAME``; None: locally); the
    #: teacher (skillci's built-in loop, which Harbor cannot run) stays local (design 412)
    remote: RunnerOptions | None = None
    fallback: Fallback = DEFAULT_FALLBACK
    """What compiles when a model compiler gives no valid patch: ``none`` (default: the
    proposal ends ``compiler_failed``, no PR) or ``template`` (said on the console and in
    the PR body)."""


@dataclass
class ProposeOutcome:
    proposal: Proposal
    action: Action
    message: str
    pr: PullRequest | None = None
    branch: str | None = None
    patch_id: str | None = None
    commits: list[str] = field(default_factory=list)


class ProposeRuns:
    """run_student / run_teacher callables over the scheduler (every trial cached)."""

    def __init__(self, ctx: RepoContext, opts: ProposeOptions) -> None:
        self.ctx = ctx
        self.student = student_agent(
            opts.student, opts.agent, opts.agent_version, remote=opts.remote is not None
        )  # on Harbor: the built-in loop is refused (exit 2) before the credentials (exit 4)
        check_agent(opts.remote, self.student.kind)  # one the remote runner cannot run: exit 2
        self.teacher = builtin_agent(opts.teacher, role="teacher")
        self.scheduler = Scheduler(parallel=opts.parallel, store=ctx.store)
        self.repeats: Counter[tuple[str, str | None]] = Counter()
        self.env: HarnessEnvironment | None = None
        self.remote: RemoteTrials | None = None
        if opts.remote is not None:
            self.env = open_environment(opts.remote, ctx.state_dir)
            self.remote = remote_source(opts.remote, self.env, ctx.state_dir, ctx.store,
                                        lookahead=0)  # fmt: skip

    def close(self) -> None:
        """Finish the remote writes and stop the environment's threads."""
        if self.remote is not None:
            self.remote.close()
        if self.env is not None:
            self.env.close()

    def _run(self, spec: TrialSpec, teacher: bool) -> tuple[str | None, str | None]:
        """Run one trial: its run id (None: no record) and the runner's error."""
        if self.remote is not None and not teacher:
            ((_, _, rec, _),) = self.remote.run_specs([spec])
            return (rec.run_id, None) if rec is not None else (None, "; ".join(self.remote.errors))
        (o,) = self.scheduler.run([spec]).trials
        return o.run_id, (o.error if o.run_id else f"{o.state} {o.error or ''}".strip())

    def _one(self, task: Task, pkg: SkillPackage | None, teacher: bool) -> RunRecord:
        key = (task.id, pkg.content_hash if pkg else None)
        idx = self.repeats[key]
        self.repeats[key] += 1
        specs = plan(
            [task],
            self.teacher if teacher else self.student,
            repeats=idx + 1,
            state_dir=self.ctx.state_dir,
            skill=render(pkg, "folder" if self.student.real and not teacher else "builtin")
            if pkg
            else None,
            skill_package_hash=pkg.content_hash if pkg else None,
        )
        run_id, error = self._run(specs[idx], teacher)
        if run_id is None:
            from skillci.errors import RunnerError

            raise RunnerError(f"trial of {task.id} produced no record: {error}")
        record = self.ctx.store.get(run_id)
        if record.evaluation.state.is_error:  # nothing to diagnose or patch (design 300)
            from skillci.errors import ModelError, RunnerError

            cls = ModelError if record.stop_reason == "model_error" else RunnerError
            raise cls(
                f"the {'teacher' if teacher else 'student'} trial of {task.id} measured "
                f"nothing: {error_cause(record) or error or record.evaluation.state.value}",
                hint="fix the cause and re-run: failed trials are not cached",
            )
        return record

    def run_student(self, task: Task, pkg: SkillPackage) -> RunRecord:
        return self._one(task, pkg, teacher=False)

    def run_teacher(self, task: Task) -> RunRecord:
        return self._one(task, None, teacher=True)


def make_compiler(
    ctx: RepoContext, name: str, fallback: Fallback = DEFAULT_FALLBACK
) -> tuple[Compiler, Compiler | None]:
    """``template``, or a model route for the LLM compiler (with the template as its
    fallback only when ``fallback`` is ``template``).

    Compiler calls go through the response cache (the same prompt is never paid twice).
    """
    if name == "template":
        return TemplateCompiler(), None
    from skillci.compile.llm import LLMCompiler
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient
    from skillci.providers.routes import resolve_route

    client = ModelClient(
        name,
        resolve_route(name),
        cache=ResponseCache(ctx.state_dir / "model-cache"),
        use_cache=True,
    )
    llm = LLMCompiler(lambda messages: client.complete(messages), model=name)
    return llm, (TemplateCompiler() if fallback == "template" else None)


def task_checks(task: Task) -> frozenset[str]:
    """The signatures of the commands the task's verifier runs (what "checking" means)."""
    try:
        script = task.verifier_script.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return verifier_checks(script)


def combined_patch_id(proposal: Proposal) -> str:
    """The PR's patch identity (behaviour ids; one patch -> its own)."""
    ids = [p.behaviour_id() for p in proposal.patches]
    if len(ids) == 1:
        return ids[0]
    return "patch-" + hashlib.sha256("|".join(ids).encode()).hexdigest()[:16]


def _diagnosis_text(d: Diagnosis) -> str:
    sb, tb, pc = d.student_behavior, d.teacher_behavior, d.proposed_skill_change
    lines = [
        f"- **Failure class:** {md_code(d.failure_class.value)} (confidence {d.confidence:.2f}, skill-compilable: {d.skill_compilable})",
        f"- **Student:** last action {md_code(sb.last_action)}; missing {md_code(sb.missing_action)}; assumed {md_code(sb.incorrect_assumption)}",
        f"- **Teacher:** {', '.join(md_code(a) for a in tb.relevant_actions) or '-'}",
    ]
    if pc is not None:
        lines.append(
            f"- **Change:** {md_code(pc.operation)} on {md_code(pc.target_rule_id)} — "
            f"{md_text(pc.required_behavior, limit=2000)}"
        )
    return "\n".join(lines)


def pr_body(
    proposal: Proposal, before_pkg: SkillPackage, candidate: SkillPackage, patch_id: str
) -> str:
    d = proposal.diagnosis
    parts = [
        PATCH_MARKER.format(patch_id),
        f"## skillci proposal for {md_code(proposal.task_id)}",
        "",
    ]
    if d is not None:
        parts += [
            "### Diagnosis",
            "",
            _diagnosis_text(d),
            "",
            "<details><summary>Diagnosis JSON</summary>",
            "",
            *md_fence(d.model_dump_json(indent=2), "json"),
            "",
            "</details>",
            "",
        ]
    b, a = proposal.before, proposal.after
    parts += ["### Same instance", ""]
    if b is not None:
        parts.append(
            f"- before: {b.passed}/{b.total} passed (runs {', '.join(md_code(x) for x in b.run_ids)})"
        )
    if a is not None:
        parts.append(
            f"- after: {a.passed}/{a.total} passed (runs {', '.join(md_code(x) for x in a.run_ids)})"
        )
    if proposal.teacher_run_id:
        parts.append(f"- teacher: {md_code(proposal.teacher_run_id)}")
    parts += ["", "### Patch", ""]
    for p in proposal.patches:
        parts += [
            f"{md_code(p.pid)} — {md_text(p.rationale, limit=2000)}",
            "",
            *md_fence(
                yaml.safe_dump(
                    p.model_dump(mode="json", exclude_none=True),
                    sort_keys=False,
                    allow_unicode=True,
                ).rstrip(),
                "yaml",
            ),
            "",
        ]
    parts += [
        "<details><summary>Diff</summary>",
        "",
        *md_fence(render_diff(before_pkg, candidate).rstrip(), "diff"),
        "",
        "</details>",
        "",
    ]
    parts += _compiler_section(proposal)
    parts += guard_model_section(proposal)
    parts += ["### Limits and guard", ""]
    for r in proposal.rounds:
        if r.check is None:
            continue
        lim = r.check.limits
        parts.append(
            f"- round {r.index}: limits {'ok' if lim and lim.ok else 'violated'}; guard {md_code(r.check.guard_verdict)}"
            + (
                f"; {len(r.check.guard.findings)} finding(s)"
                if r.check.guard and r.check.guard.findings
                else ""
            )
        )
    c = proposal.cost
    parts += [
        "",
        "### Cost",
        "",
        f"{c.student_runs} student run(s), {c.teacher_runs} teacher run(s), {c.compiler_calls} compiler call(s), "
        f"{c.input_tokens + c.output_tokens} tokens, ${c.usd:.4f}, {c.wall_time_sec:.1f}s of trials.",
        "",
        "Review with `skillci review --pr <N>`; release with `skillci release --pr <N>`.",
    ]
    return "\n".join(parts) + "\n"


def _compiler_section(proposal: Proposal) -> list[str]:
    """Which compiler wrote the patch; every compiler failure and the fallback, stated."""
    lines = ["### Compiler", "", f"- compiler: {md_code(proposal.compiler)}"]
    for failure in proposal.compiler_failures:
        lines.append(f"- **compiler failed** — {md_text(failure, limit=600)}")
    fb = proposal.fallback_used
    if fb is not None:
        lines.append(
            f"- **fallback:** the patch below was written by the {md_code(fb)} compiler "
            "(`--fallback template`), not by the model"
        )
    return [*lines, ""]


def guard_model_section(proposal: Proposal) -> list[str]:
    """The classifier's second opinion: route, verdict, and each field it cautions about
    with its reason quoted as untrusted text (design 407). Empty when none was asked."""
    if not proposal.guard_opinions:
        return []
    lines = ["### Guard model (second opinion)", ""]
    for op in proposal.guard_opinions:
        head = f"- {md_code(op.patch_id)}: route {md_code(op.route)}, {md_code(op.verdict)}"
        if not op.asked:
            head += " (not asked: no free text of untrusted provenance)"
        lines.append(head)
        if op.error:
            lines.append(f"  - {md_text(op.error, limit=300)}")
        for f in op.flagged:
            why = f.reason or "(no reason given)"
            cat = f" ({md_code(f.category)})" if f.category else ""
            lines.append(
                f"  - **{f.verdict}** {md_code(f.field)}{cat} — model's reason, "
                f"untrusted: {md_code(why, limit=200)}"
            )
    if proposal.needs_approval and any(o.verdict != "pass" for o in proposal.guard_opinions):
        lines += [
            "",
            "**needs-approval:** the classifier is cautious about this patch; review the "
            f"fields above, then add the {md_code(APPROVED_LABEL)} label (review and release "
            "do not merge it before).",
        ]
    return [*lines, ""]


def _check_guard_route(opts: ProposeOptions) -> None:
    """An unknown ``--guard-model`` route is invalid input before any trial runs."""
    from skillci.providers.routes import resolve_route

    for route in opts.guard_models:
        resolve_route(route)


def _load(ctx: RepoContext, opts: ProposeOptions) -> tuple[str, str, SkillPackage]:
    base_sha = ctx.git.rev(opts.base)
    if base_sha is None:
        raise InvalidInputError(f"base branch {opts.base!r} does not exist", hint="pass --base")
    skill_dir = ctx.skill_dir(opts.skill)
    return base_sha, skill_dir, ctx.package_at(base_sha, skill_dir, label=opts.base)


def _task(ctx: RepoContext, task_id: str) -> Task:
    task_dir = ctx.root / "evals" / "tasks" / task_id
    if not task_dir.is_dir():
        raise InvalidInputError(
            f"no task {task_id!r} under evals/tasks",
            hint="see `skillci tasks validate evals/tasks`",
        )
    return load_task(task_dir, purpose=Purpose.optimize, suites_root=ctx.root)


def propose(ctx: RepoContext, opts: ProposeOptions) -> ProposeOutcome:
    """Propose for one task (the loop of skillci.compile.loop), then publish."""
    base_sha, skill_dir, pkg = _load(ctx, opts)
    _check_guard_route(opts)
    task = _task(ctx, opts.task)
    runs = ProposeRuns(ctx, opts)
    compiler, fallback = make_compiler(ctx, opts.compiler, opts.fallback)
    try:
        result = propose_task(
            task,
            pkg,
            run_student=runs.run_student,
            run_teacher=runs.run_teacher,
            compiler=compiler,
            fallback=fallback,
            budget=LoopBudget(max_rounds=opts.max_rounds, repeats=opts.repeat),
            checks=sorted(task_checks(task)),
            instruction=task.instruction,
        )
    finally:
        runs.close()
    return publish(ctx, opts, result.proposal, result.candidate, pkg, base_sha, skill_dir)


def propose_suite_flow(
    ctx: RepoContext, opts: ProposeOptions, task_ids: list[str]
) -> list[ProposeOutcome]:
    """Propose for every failing task of a suite, clustered: one PR per fixed cluster."""
    base_sha, skill_dir, pkg = _load(ctx, opts)
    _check_guard_route(opts)
    tasks = [_task(ctx, t) for t in task_ids]
    runs = ProposeRuns(ctx, opts)
    compiler, fallback = make_compiler(ctx, opts.compiler, opts.fallback)
    try:
        result = propose_suite(
            tasks,
            pkg,
            run_student=runs.run_student,
            run_teacher=runs.run_teacher,
            compiler=compiler,
            fallback=fallback,
            budget=LoopBudget(max_rounds=opts.max_rounds, repeats=opts.repeat),
        )
    finally:
        runs.close()
    if not ctx.dry_run:
        ctx.store.put_blob(
            SUITE_BLOB, result.suite, key=f"suite-{pkg.content_hash[:16]}", replace=True
        )
    by_task = {p.task_id: p for p in result.suite.proposals}
    outcomes: list[ProposeOutcome] = []
    for cl in result.suite.clusters:
        prop = by_task.get(cl.representative or "")
        if prop is None:
            continue
        candidate = result.candidates.get((cl.failure_class.value, cl.signature))
        out = publish(ctx, opts, prop, candidate, pkg, base_sha, skill_dir)
        out.message += f" (cluster of {len(cl.members)}: {', '.join(cl.members)}; validated on all: {cl.validated})"
        outcomes.append(out)
    return outcomes


def publish(
    ctx: RepoContext,
    opts: ProposeOptions,
    prop: Proposal,
    candidate: SkillPackage | None,
    pkg: SkillPackage,
    base_sha: str,
    skill_dir: str,
) -> ProposeOutcome:
    """Keep the proposal (and the guard model's opinion); when ready, commit it and open its PR."""
    _ask_guard_model(ctx, opts, prop)
    if not ctx.dry_run:
        key = (
            combined_patch_id(prop)
            if prop.patches
            else f"task-{prop.task_id}-{pkg.content_hash[:12]}"
        )
        ctx.store.put_blob(PROPOSAL_BLOB, prop, key=key, replace=True)
    if not prop.ready or candidate is None:
        extra = ""
        if prop.upgrade_path is not None:
            extra = f"; upgrade path: {prop.upgrade_path.value}"
        return ProposeOutcome(prop, "no_pr", f"{prop.status}: {prop.reason}{extra}")

    pid = combined_patch_id(prop)
    existing = ctx.forge.find_by_patch(pid)
    merged = [p for p in existing if p.state == PRState.merged]
    # closed = rejected, unless a maintainer asked for a retry (dashboard, RETRY_LABEL) or
    # the last gate verdict on it was inconclusive (no information)
    closed = [p for p in existing if p.state == PRState.closed and not _reproposable(p)]
    open_prs = [p for p in existing if p.state == PRState.open]
    if merged and not opts.force:
        return ProposeOutcome(
            prop,
            "already_merged",
            f"patch {pid} was merged in PR #{merged[-1].number}",
            merged[-1],
            patch_id=pid,
        )
    if closed and not open_prs and not opts.force:
        return ProposeOutcome(
            prop,
            "refused_closed",
            f"patch {pid} was rejected in PR #{closed[-1].number} (closed); pass --force to propose it again",
            closed[-1],
            patch_id=pid,
        )
    fc = prop.failure_class or "patch"
    branch = candidate_branch(pkg.manifest.name, fc, pid)
    body = pr_body(prop, pkg, candidate, pid)
    if ctx.dry_run:
        return ProposeOutcome(
            prop,
            "dry_run",
            f"would commit {len(prop.patches)} patch(es) on {branch} and open a PR",
            branch=branch,
            patch_id=pid,
        )

    kept = _keep_open_head(ctx, open_prs, base_sha, opts.rebase_when)
    if kept is not None:  # the evidence is refreshed; the head (and its gate) stay
        ctx.forge.update_body(kept.number, body)
        if prop.needs_approval and NEEDS_APPROVAL_LABEL not in kept.labels:
            ctx.forge.add_labels(kept.number, [NEEDS_APPROVAL_LABEL])
        return ProposeOutcome(
            prop,
            "updated",
            f"updated PR #{kept.number}, head kept at {kept.head_sha[:12]} (rebase when "
            f"{opts.rebase_when}: no new gate run)",
            ctx.forge.get_pr(kept.number),
            kept.head_branch,
            pid,
        )
    commits = _commit_patches(ctx, prop, pkg, base_sha, branch, skill_dir, prop.task_id)
    ctx.forge.push_candidate(ctx.git, branch, commits[-1], base_sha)
    labels = sorted({"skillci", fc} | ({NEEDS_APPROVAL_LABEL} if prop.needs_approval else set()))
    title = f"skill({pkg.manifest.name}): {fc.replace('_', ' ')} — {prop.task_id}"
    pr, opened = ctx.forge.upsert_pr(
        patch_id=pid,
        title=title,
        body=body,
        base=opts.base,
        head_branch=branch,
        labels=labels,
        skill=skill_dir,
    )
    action: Action = "opened" if opened else "updated"
    if open_prs:
        return ProposeOutcome(
            prop,
            "updated",
            f"updated PR #{pr.number}",
            ctx.forge.get_pr(pr.number),
            branch,
            pid,
            commits,
        )
    return ProposeOutcome(
        prop, action, f"{action} PR #{pr.number} on {branch}", pr, branch, pid, commits
    )


def _ask_guard_model(ctx: RepoContext, opts: ProposeOptions, prop: Proposal) -> None:
    """Each classifier's second opinion on each patch of a ready proposal (designs 407, 458)."""
    if not opts.guard_models or not prop.ready or prop.guard_opinions:
        return
    from skillci.flows.guard_model import guard_models

    models = guard_models(opts.guard_models, ctx.state_dir)
    prop.guard_opinions = [m.opinion(p) for m in models for p in prop.patches]


def rebase_policy(given: str) -> RebaseWhen:
    """--rebase-when, else $SKILLCI_REBASE_WHEN, else the default (conflicted)."""
    import os

    from skillci.gate.rebase import REBASE_ENV, REBASE_WHEN

    policy = given or os.environ.get(REBASE_ENV) or DEFAULT_REBASE_WHEN
    for known in REBASE_WHEN:
        if policy == known:
            return known
    raise InvalidInputError(
        f"rebase policy {policy!r}", hint=f"use one of {', '.join(REBASE_WHEN)}"
    )


def suite_tasks(ctx: RepoContext, suite: str, done: list[str]) -> list[str]:
    """The tasks of ``suite`` not already proposed for by ``--task``."""
    from skillci.tasks.suites import load_suite

    return [t for t in load_suite(suite, ctx.root, purpose=Purpose.optimize).tasks if t not in done]


def _reproposable(pr: PullRequest) -> bool:
    """A closed PR that does not refuse its patch: a retry was asked, or the last gate
    verdict on it was ``inconclusive`` (``present.report.status_line``)."""
    gate = pr.statuses.get(GATE_CONTEXT)
    inconclusive = gate is not None and gate.description.startswith("inconclusive")
    return RETRY_LABEL in pr.labels or inconclusive


def _keep_open_head(
    ctx: RepoContext, open_prs: list[PullRequest], base_sha: str, policy: RebaseWhen
) -> PullRequest | None:
    """The open PR of this patch when the rebase policy says to leave its branch as it is."""
    if not open_prs:
        return None
    pr = open_prs[-1]
    ctx.forge.fetch_pr(ctx.git, pr)
    if ctx.git.rev(pr.head_sha) is None:
        return None  # its head is gone: rebuild
    mb = ctx.git.merge_base(base_sha, pr.head_sha)
    behind = mb != base_sha
    conflicted = ctx.git.merge_tree(base_sha, pr.head_sha) is None
    return None if should_rebase(policy, behind=behind, conflicted=conflicted) else pr


def _commit_patches(
    ctx: RepoContext,
    prop: Proposal,
    pkg: SkillPackage,
    base_sha: str,
    branch: str,
    skill_dir: str,
    task_id: str,
) -> list[str]:
    """One commit per patch, stacked on the base; idempotent for an identical candidate."""
    d = prop.diagnosis
    current, parent = pkg, base_sha
    commits: list[str] = []
    for i, patch in enumerate(prop.patches):
        nxt = apply(current, patch)
        changes: dict[str, bytes | None] = {
            rel: data for rel, data in nxt.files.items() if current.files.get(rel) != data
        }
        changes.update({rel: None for rel in current.files if rel not in nxt.files})
        trailers = {
            "Skill-Patch-Id": patch.pid,
            "Failure-Class": patch.primary_failure_class,
            "Supporting-Runs": ", ".join(patch.supporting_runs[:8]),
            "Diagnosis-Confidence": f"{d.confidence:.2f}" if d else "",
            "Compiler": patch.author.compiler
            + (f" ({patch.author.model})" if patch.author.model else ""),
            "Skill": skill_dir,
            "Same-Instance-Task": task_id,
        }
        last = i == len(prop.patches) - 1
        c = commit_candidate(
            ctx.git,
            base=parent,
            branch=branch if last else None,
            skill_dir=skill_dir,
            changes=changes,
            subject=f"skill({pkg.manifest.name}): {patch.rationale or patch.primary_failure_class}"[
                :100
            ],
            body=json.dumps([op.op for op in patch.ops]),
            trailers=trailers,
        )
        commits.append(c.sha)
        current, parent = nxt, c.sha
    return commits
