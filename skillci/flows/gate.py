"""``skillci gate``: re-run the student on base and head and decide with the release gate.

Load: both refs into worktrees, the skill package at each, the suites' tasks at each.
Run: base trials (cached), then head trials in rounds — only for tasks whose loaded skill
content changed (test-impact selection; the rest reuse base trials) — stopping early when
the sequential test has decided. Decide: metrics, paired statistics and the checks of the
base manifest's ``release_gate``. Keep: the GateReport in the trace store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from skillci.errors import InvalidInputError, SkillciError, UsageError
from skillci.flows.context import RepoContext, task_hash_memo, token_counts
from skillci.flows.remote import (
    RunnerOptions,
    check_agent,
    open_environment,
    remote_config,
    remote_source,
)
from skillci.gate.decision import (
    conclude,
    majority,
    merge_impact,
    rerun_on_head,
    suite_outcomes,
)
from skillci.gate.evidence import OnlineTest
from skillci.gate.flaky import FlakyHistory, flaky_from_history, harness_of
from skillci.gate.graded import (
    HISTORY_GATES,
    EarlierGate,
    grade_report,
    grader_changes,
    grader_history,
)
from skillci.gate.impact import ImpactSelection, changed_files, changed_sections, select_tasks
from skillci.gate.judging import GateJudge
from skillci.gate.metrics import Side, compute_metrics
from skillci.gate.outcomes import (
    RERUN_BASE_HINT,
    comparability,
    comparable,
    error_warnings,
    errored,
    loaded_files,
    reward_hack_warnings,
    to_outcome,
    unsupported_warnings,
)
from skillci.gate.sequential import SequentialConfig
from skillci.gate.triggers import TriggerCheck
from skillci.gate.verdict import (
    GateCheck,
    SameInstance,
    SuiteResult,
    Verdict,
)
from skillci.gate.verdict import GateReport as GateReport  # re-exported: what `gate` renders
from skillci.graders.models import GradeReport
from skillci.runners.base import (
    AgentSpec,
    JudgeSpec,
    TrialSpec,
    builtin_agent,
    judge_spec,
    named_judge,
    plan,
    real_agent,
)
from skillci.runners.outcome import TrialRun as TrialRun  # re-exported: `gate` progress
from skillci.runners.scheduler import Scheduler, error_cause, sandbox_kind
from skillci.skill.models import Manifest
from skillci.skill.package import SkillPackage
from skillci.skill.render import RenderedSkill, render
from skillci.tasks.loader import load_suite_tasks
from skillci.tasks.models import Purpose, Task
from skillci.tasks.suites import SUITE_SUFFIXES, load_suite
from skillci.trace.models import EvalState, RunRecord
from skillci.trace.store import TraceStore

if TYPE_CHECKING:
    from skillci.flows.agent_triggers import AgentDecider

GATE_BLOB = "gate-report"
DEFAULT_SUITES = ("validation", "regression", "security")
#: The student when neither ``--model``, the PR's proposal nor the skill names one.
DEFAULT_STUDENT = "sim/student"
Progress = Callable[[TrialRun], None]
GateRerun = Literal["errors", "base", "all"]


@dataclass(kw_only=True)
class GateOptions:
    """What one gate run compares and how (keywords only). Commands build it with
    :func:`gate_options`, which fills the skill and the suites from the repository."""

    skill: str
    base: str
    head: str
    suites: tuple[str, ...] = DEFAULT_SUITES
    repeat: int = 3
    student: str = DEFAULT_STUDENT
    #: why this student (:func:`resolve_student`): ``--model``, the PR's proposal, the
    #: skill's ``target_runtime.model``, or the default
    student_source: str = ""
    parallel: int = 2
    sequential: bool = True
    impact: bool = True
    same_instance_task: str | None = None
    guard_verdict: str = "pass"
    guard_findings: list[str] = field(default_factory=list)
    #: trigger check (issue 20): auto = when the name/description changed; always; never
    triggers: str = "auto"
    #: teacher route: also run the teacher and the student without any skill on every
    #: suite, so the report has the gap closure rate and teacher trajectories (None: skip)
    teacher: str | None = None
    #: which complete trials run again (``--rerun``): ``errors`` (failed measurements, never
    #: cached anyway), ``base`` (and every base trial: a stale side, design 303), ``all``
    rerun: GateRerun = "errors"
    #: the student's agent (docs/design/372): ``builtin`` (skillci's loop on ``student``)
    #: or a registered real agent run on the ``student`` route through the gateway; None:
    #: not chosen (builtin; :func:`gate_options` fills it from the skill's target_runtime)
    agent: str | None = None
    #: the real agent's installed version (None: the newest installed)
    agent_version: str | None = None
    #: the model route judging rubric graders (``--judge``; None: :data:`DEFAULT_JUDGE`):
    #: part of the gate id and of every rubric task's trial key (docs/design/364)
    judge: str | None = None
    #: the pull request being reviewed (``review --pr N``): shown in later gates' grader
    #: history (docs/design/410); not part of the gate id
    pr: int | None = None
    #: where the trials run (``--runner harbor --env NAME``; None: locally, through the
    #: scheduler): a remote gate's rounds run on :class:`RemoteTrials` (docs/design/412)
    remote: RunnerOptions | None = None


def gate_options(
    ctx: RepoContext,
    *,
    skill: str,
    base: str,
    head: str,
    suites: tuple[str, ...] = (),
    student: str | None = None,
    student_source: str = "",
    agent: str | None = None,
    agent_version: str | None = None,
    **rest: Any,
) -> GateOptions:
    """The gate's options for ``base..head``: ``skill`` ``""`` or ``"auto"`` is the one skill
    base..head changes (or the repository's only one); no ``suites`` means what the skill's
    metadata at ``head`` asks for (:func:`suites_for`); no ``student`` the one the skill at
    ``head`` targets (:func:`resolve_student`); no ``agent`` the one the skill's
    ``target_runtime`` names at ``base`` (:func:`target_agent`), else ``builtin``. ``rest``:
    the other :class:`GateOptions` fields."""
    if not skill or skill == "auto":
        from skillci.flows.skills import changed_skill

        skill = changed_skill(ctx, base, head)
    if student is None:
        student, student_source = resolve_student(ctx, skill, head)
    if agent is None:
        agent, pinned = target_agent(ctx, skill, base)
        agent_version = agent_version or pinned
    return GateOptions(
        skill=skill,
        base=base,
        head=head,
        suites=suites or suites_for(ctx, skill, head),
        student=student,
        student_source=student_source or "--model",
        agent=agent,
        agent_version=agent_version,
        **rest,
    )


def resolve_student(ctx: RepoContext, skill: str, ref: str) -> tuple[str, str]:
    """The student route for ``skill`` at ``ref`` and why: its manifest's
    ``target_runtime.model``, else :data:`DEFAULT_STUDENT` (said so: never silently)."""
    skill_dir = ctx.skill_dir(skill)
    sha = ctx.git.rev(ref) or ref
    target = ctx.package_at(sha, skill_dir, label=ref).manifest.target_runtime.model
    if target:
        return target, f"target_runtime.model in {skill_dir}/skillci.yaml"
    return DEFAULT_STUDENT, (
        f"default: no --model, no proposal and no target_runtime.model in {skill_dir}/skillci.yaml"
    )


def target_agent(ctx: RepoContext, skill: str, ref: str) -> tuple[str, str | None]:
    """The agent and version ``skill``'s ``target_runtime`` names as committed at ``ref``
    (the base: a pull request cannot pick the agent that judges it), else ``builtin``."""
    sha = ctx.git.rev(ref) or ref
    tr = ctx.package_at(sha, ctx.skill_dir(skill), label=ref).manifest.target_runtime
    return (tr.agent or "builtin", tr.agent_version if tr.agent else None)


def student_agent(
    route: str, agent: str | None, version: str | None = None, *, remote: bool = False
) -> AgentSpec:
    """The student of the gate, review and propose: skillci's built-in loop on ``route``,
    or the registered real agent ``agent`` (``version`` or the newest installed) on that
    route through the gateway (exit 4 when it is not installed). ``remote``: the trials run
    in a Harbor environment, which installs a real agent itself (the built-in loop runs here,
    its commands there: design 426)."""
    from skillci.agents.registry import real_names

    if agent in (None, "builtin"):
        return builtin_agent(route)
    if agent not in real_names():
        raise UsageError(
            f"--agent {agent!r} cannot be the student here",
            hint=f"use builtin or a real agent: {', '.join(real_names())} (skillci agents ls)",
        )
    return real_agent(agent, route, version=version, local=not remote)


@dataclass
class _Side:
    sha: str
    pkg: SkillPackage
    rendered: RenderedSkill
    tasks: dict[str, list[Task]]  # suite -> tasks


def gate_id(opts: GateOptions, base_sha: str, head_sha: str) -> str:
    h = hashlib.sha256(
        f"{opts.skill}|{base_sha}|{head_sha}|{opts.suites}|{opts.repeat}|{opts.student}".encode()
        + (f"|teacher={opts.teacher}".encode() if opts.teacher else b"")
        + (
            f"|agent={opts.agent}@{opts.agent_version}".encode()
            if opts.agent not in (None, "builtin")
            else b""
        )
        # a different judge is a different measurement; the default keeps old gate ids
        + (f"|judge={opts.judge}".encode() if named_judge(opts.judge) else b"")
        # trials on a remote environment are another measurement; local keeps old gate ids
        + (f"|runner={opts.remote.name}".encode() if opts.remote else b"")
    )
    return f"gate-{h.hexdigest()[:16]}"


def gate_suites(manifest: Manifest) -> tuple[str, ...]:
    """The suites the gate needs for a skill (pure): validation and regression always, and
    security when its ``release_gate.require_security_suite`` is on."""
    extra = ("security",) if manifest.release_gate.require_security_suite else ()
    return ("validation", "regression", *extra)


def suites_for(ctx: RepoContext, skill: str, ref: str) -> tuple[str, ...]:
    """:func:`gate_suites` of ``skill`` as committed at ``ref``."""
    sha = ctx.git.rev(ref) or ref
    return gate_suites(ctx.package_at(sha, ctx.skill_dir(skill), label=ref).manifest)


def check_suites(ctx: RepoContext, sha: str, suites: tuple[str, ...], label: str) -> None:
    """Refuse (exit 2) naming the first suite file missing at ``sha``."""
    for s in suites:
        if not any(
            ctx.git.show_file(sha, f"evals/suites/{s}{suffix}") is not None
            for suffix in SUITE_SUFFIXES
        ):
            raise InvalidInputError(
                f"the gate needs suite {s!r} but evals/suites/{s}.yaml does not exist at {label}",
                file=f"evals/suites/{s}.yaml",
                hint=f"add evals/suites/{s}.yaml (schema_version: 1, name: {s}, split: {s}, "
                "tasks: [...]) — `skillci init` writes the skeleton — or pass --suites",
            )


def _load_side(
    ctx: RepoContext, sha: str, skill_dir: str, suites: tuple[str, ...], *, real: bool = False
) -> _Side:
    """One side: the skill rendered for skillci's loop, or as its folder for a real agent
    (which installs it where it discovers skills, as eval run --agent does)."""
    wt = ctx.worktree(sha)
    pkg = SkillPackage.from_dir(wt / skill_dir)
    tasks: dict[str, list[Task]] = {}
    with task_hash_memo(ctx, sha) as known:
        for s in suites:
            suite = load_suite(s, wt, purpose=Purpose.optimize)
            tasks[s] = load_suite_tasks(suite, wt, purpose=Purpose.optimize, known_hashes=known)
            known.update((t.id, (t.content_hash, t.verifier_hash)) for t in tasks[s])
    return _Side(sha, pkg, render(pkg, "folder" if real else "builtin"), tasks)


class TrialSource(Protocol):
    """Where the gate's trials come from: run now (:class:`GateRunner`), or replayed from the
    records of sharded runs (:mod:`skillci.flows.gate_shard`)."""

    ran: int
    cached: int
    model_calls: int
    #: the judge of every rubric task this source runs (None: :data:`DEFAULT_JUDGE`)
    judge: JudgeSpec | None

    def run(
        self,
        agent: AgentSpec,
        tasks: list[Task],
        rendered: RenderedSkill | None,
        pkg_hash: str | None,
        *,
        repeats: int,
        first_repeat: int = 0,
        suite: str | None = None,
        fresh: bool = False,
    ) -> list[RunRecord]:
        """The records of the trials; ``fresh``: run them again even when complete ones are
        cached (``--rerun``)."""
        ...


@runtime_checkable
class RoundSource(Protocol):
    """A :class:`TrialSource` that runs rounds ahead of the gate's decision
    (:class:`skillci.runners.remote.RemoteTrials`): told when a suite's head rounds end."""

    def rounds_done(self) -> None:
        """No further head round of this suite will be asked for."""
        ...


def trial_specs(
    state_dir: Path,
    agent: AgentSpec,
    tasks: list[Task],
    rendered: RenderedSkill | None,
    pkg_hash: str | None,
    *,
    repeats: int,
    first_repeat: int = 0,
    suite: str | None = None,
    judge: JudgeSpec | None = None,
) -> list[TrialSpec]:
    """The trials of rounds ``first_repeat .. first_repeat + repeats - 1`` of ``tasks``,
    rubric graders judged by ``judge`` (None: the default judge). Nothing in a spec tells
    the judge which side it grades: it sees the task, the rubric and the output."""
    return [
        s
        for s in plan(
            tasks,
            agent,
            repeats=first_repeat + repeats,
            state_dir=state_dir,
            skill=rendered,
            skill_package_hash=pkg_hash,
            suite=suite,
            split=suite,
            judge=judge,
        )
        if s.repeat_index >= first_repeat
    ]


class GateRunner:
    """Runs trial specs through the scheduler and fetches their records."""

    def __init__(
        self,
        ctx: RepoContext,
        parallel: int,
        progress: Progress | None,
        judge: JudgeSpec | None = None,
    ) -> None:
        self.ctx = ctx
        self.judge = judge
        self.scheduler = Scheduler(parallel=parallel, store=ctx.store, progress=progress)
        self.ran = 0
        self.cached = 0
        self.model_calls = 0
        #: ``task #repeat: cause`` of trials whose runner failed (no record to show it)
        self.errors: list[str] = []
        #: (spec, outcome) of every trial asked for, when a caller wants them (shards)
        self.log: list[tuple[TrialSpec, TrialRun]] | None = None

    def run(
        self,
        agent: AgentSpec,
        tasks: list[Task],
        rendered: RenderedSkill | None,
        pkg_hash: str | None,
        *,
        repeats: int,
        first_repeat: int = 0,
        suite: str | None = None,
        fresh: bool = False,
    ) -> list[RunRecord]:
        specs = trial_specs(
            self.ctx.state_dir,
            agent,
            tasks,
            rendered,
            pkg_hash,
            repeats=repeats,
            first_repeat=first_repeat,
            suite=suite,
            judge=self.judge,
        )
        self.scheduler.rerun = "all" if fresh else "errors"
        try:
            result = self.scheduler.run(specs)
        finally:
            self.scheduler.rerun = "errors"
        records = []
        for o in result.trials:
            if o.cached:
                self.cached += 1
            else:
                self.ran += 1
                self.model_calls += o.model_calls
            if o.state == "error":
                self.errors.append(f"{o.task_id} #{o.repeat_index}: {o.error or 'runner failed'}")
            if o.run_id:
                rec = self.scheduler.records.get(o.run_id)
                records.append(rec if rec is not None else self.ctx.store.get(o.run_id))
        if self.log is not None:
            by_key = {o.key: o for o in result.trials}
            for spec in specs:
                found = by_key.get(spec.cache_key(sandbox_kind(spec)))
                if found is not None:
                    self.log.append((spec, found))
        return records


@dataclass
class GateInputs:
    """Both sides loaded, the student, and the rendered skill files that changed."""

    base_sha: str
    head_sha: str
    skill_dir: str
    base: _Side
    head: _Side
    agent: AgentSpec
    changed: set[str]
    sections: dict[str, list[str]] = field(default_factory=dict)
    #: the judge of rubric graders, resolved (an unknown route fails before any work)
    judge: JudgeSpec | None = None
    #: its calibration per suite with rubric tasks (tasks it is unfit for are not loaded)
    judging: GateJudge | None = None


def load_inputs(ctx: RepoContext, opts: GateOptions) -> GateInputs:
    base_sha, head_sha = ctx.git.rev(opts.base), ctx.git.rev(opts.head)
    if base_sha is None or head_sha is None:
        raise InvalidInputError(
            f"unknown ref {opts.base if base_sha is None else opts.head!r}",
            hint="pass branch names, tags or shas that exist in this repo",
        )
    skill_dir = ctx.skill_dir(opts.skill)
    check_suites(ctx, base_sha, opts.suites, opts.base)
    check_suites(ctx, head_sha, opts.suites, opts.head)
    agent = student_agent(
        opts.student, opts.agent, opts.agent_version, remote=opts.remote is not None
    )  # an absent real agent fails here (exit 4), before any work
    check_agent(opts.remote, agent.kind)  # one the remote runner cannot run: exit 2
    judge = judge_spec(opts.judge)  # an unknown route fails here (exit 2)
    with token_counts(ctx.state_dir, write=not ctx.dry_run):
        base = _load_side(ctx, base_sha, skill_dir, opts.suites, real=agent.real)
        head = _load_side(ctx, head_sha, skill_dir, opts.suites, real=agent.real)
    judging = _judging(ctx, opts, base_sha, base, head)
    before = {f.path: f.content for f in base.rendered.files}
    after = {f.path: f.content for f in head.rendered.files}
    return GateInputs(
        base_sha,
        head_sha,
        skill_dir,
        base,
        head,
        agent,
        changed_files(before, after),
        changed_sections(before, after),
        judge,
        judging,
    )


def _judging(
    ctx: RepoContext, opts: GateOptions, base_sha: str, base: _Side, head: _Side
) -> GateJudge:
    """The judge's fitness for each suite with rubric tasks (the suite's ``judge:`` section
    at base); drops from both sides the rubric tasks of suites it is unfit for: they are
    not run, and the ``judge_fit`` check says why (docs/design/364)."""
    from skillci.flows.graders import gate_judge

    rubric = {
        s: sorted(
            {
                t.id
                for side in (base, head)
                for t in side.tasks[s]
                if t.graders and t.graders.needs_judge
            }
        )
        for s in opts.suites
    }
    judging = gate_judge(ctx.worktree(base_sha), ctx.state_dir, opts.judge, rubric)
    for s, ids in judging.left_out.items():
        for side in (base, head):
            side.tasks[s] = [t for t in side.tasks[s] if t.id not in ids]
    return judging


def run_gate(ctx: RepoContext, opts: GateOptions, progress: Progress | None = None) -> GateReport:
    t0 = time.monotonic()
    if opts.remote is not None:
        return _remote_gate(ctx, opts, opts.remote, t0, progress)
    inputs = load_inputs(ctx, opts)
    runner = GateRunner(ctx, opts.parallel, progress, judge=inputs.judge)
    return decide_gate(ctx, opts, inputs, runner, t0=t0)


def _remote_gate(
    ctx: RepoContext,
    opts: GateOptions,
    remote: RunnerOptions,
    t0: float,
    progress: Progress | None = None,
) -> GateReport:
    """The gate with its trials on a Harbor environment (:class:`RemoteTrials`: head rounds
    as batches of futures, look-ahead cancelled at the verdict), the same decision code.
    Missing credentials or Harbor (exit 4) are refused before anything loads or runs."""
    env = open_environment(remote, ctx.state_dir)
    try:
        inputs = load_inputs(ctx, opts)
        src = remote_source(remote, env, ctx.state_dir, ctx.store, rounds=opts.repeat,
                            judge=inputs.judge, progress=progress)  # fmt: skip
        try:
            report = decide_gate(ctx, opts, inputs, src, t0=t0, keep=False)
        finally:
            src.close()
        report.config.update(remote_config(remote, src))
        keep_report(ctx, report)
        return report
    finally:
        env.close()


@dataclass
class _SuiteRun:
    """What one suite's trials showed."""

    result: SuiteResult
    impact: ImpactSelection
    base: list[RunRecord]
    head: list[RunRecord]
    references: dict[Side, list[RunRecord]]
    reused: int


def run_suite(s: str, opts: GateOptions, inputs: GateInputs, runner: TrialSource) -> _SuiteRun:
    """Base trials, impact selection, head rounds with the sequential test, references."""
    base, head, agent = inputs.base, inputs.head, inputs.agent
    btasks = {t.id: t for t in base.tasks[s]}
    htasks = {t.id: t for t in head.tasks[s]}
    base_recs = runner.run(
        agent,
        list(btasks.values()),
        base.rendered,
        base.pkg.content_hash,
        repeats=opts.repeat,
        suite=s,
        fresh=opts.rerun in ("base", "all"),
    )
    by_task: dict[str, list[RunRecord]] = {}
    for r in base_recs:
        by_task.setdefault(r.task_id, []).append(r)
    # test-impact selection: tasks whose loaded skill files did not change and whose
    # task content is identical on both sides reuse their base trials for head
    loaded = {
        tid: frozenset().union(*(loaded_files(r) for r in recs)) for tid, recs in by_task.items()
    }
    sel = select_tasks(
        inputs.changed, loaded, tasks=sorted(htasks), sections_changed=inputs.sections
    )
    rerun = rerun_on_head(opts.impact, sel, btasks, htasks)
    reuse = [t for t in sorted(htasks) if t not in {x.id for x in rerun}]
    head_recs: list[RunRecord] = []
    # the paired test over independent pairs (design 290): fed each round, it stops the
    # rounds early when sequential; its conclusion decides the improvement check
    quarantined = {q.task for q in base.pkg.manifest.release_gate.quarantine}
    online = OnlineTest(SequentialConfig(max_rounds=opts.repeat), exclude=quarantined)
    rerun_ids = {t.id for t in rerun}
    for rnd in range(opts.repeat if rerun else 0):
        recs = runner.run(
            agent,
            rerun,
            head.rendered,
            head.pkg.content_hash,
            repeats=1,
            first_repeat=rnd,
            suite=s,
            fresh=opts.rerun == "all",
        )
        head_recs += recs
        pairs = [
            to_outcome(r, "base")
            for r in comparable(base_recs)
            if r.repeat_index == rnd and r.task_id in rerun_ids
        ]
        pairs += [to_outcome(r, "head") for r in comparable(recs)]
        decision = online.update(pairs)
        if opts.sequential and decision.outcome != "continue":
            break
    if isinstance(runner, RoundSource):  # trials of rounds that will not run: cancel them
        runner.rounds_done()
    references: dict[Side, list[RunRecord]] = {}
    if opts.teacher:
        # skill-free trials: cached across every gate of the same tasks and routes
        tasks = list(htasks.values())
        references["teacher"] = runner.run(
            builtin_agent(opts.teacher, role="teacher"),
            tasks,
            None,
            None,
            repeats=opts.repeat,
            suite=s,
            fresh=opts.rerun == "all",
        )
        references["baseline"] = runner.run(
            agent, tasks, None, None, repeats=opts.repeat, suite=s, fresh=opts.rerun == "all"
        )
    reused = [r for tid in reuse for r in by_task.get(tid, [])]
    metrics = compute_metrics(suite_outcomes(base_recs, head_recs, references, reused))
    evidence = online.evidence(rerun_ids - quarantined) if rerun else None
    return _SuiteRun(
        SuiteResult(
            suite=s,
            tasks=sorted(htasks),
            metrics=metrics,
            sequential=evidence.decision if evidence and opts.sequential else None,
            evidence=evidence,
            grader_changes=grader_changes(base_recs, head_recs),
        ),
        sel,
        base_recs,
        head_recs,
        references,
        len(reused),
    )


def decide_gate(
    ctx: RepoContext,
    opts: GateOptions,
    inputs: GateInputs,
    runner: TrialSource,
    *,
    t0: float,
    config: dict[str, object] | None = None,
    refs: tuple[str, str] | None = None,
    keep: bool = True,
) -> GateReport:
    """The gate over trials from ``runner``: each suite's trials (:func:`run_suite`), then
    the verdict (:func:`skillci.gate.decision.conclude`). Keeps the report in the trace
    store (``keep``). ``refs`` are the (base, head) names the report shows (default:
    ``opts.base/head``)."""
    base, head = inputs.base, inputs.head
    runs = [run_suite(s, opts, inputs, runner) for s in opts.suites]
    stale = stale_base(runs) if opts.rerun == "errors" else []
    if stale:  # the base trials came from another machine or harness: run them again
        opts = dataclasses.replace(opts, rerun="base")
        runs = [run_suite(s, opts, inputs, runner) for s in opts.suites]
    evidence, impact_all = _evidence(runs)
    all_base = [r for run in runs for r in run.base]
    all_head = [r for run in runs for r in run.head]
    same: SameInstance | None = None
    if opts.same_instance_task:
        same = _same_instance(ctx, runner, inputs.agent, base, head, opts)
    history = base_history(ctx, opts, inputs, all_base)
    gid = gate_id(opts, inputs.base_sha, inputs.head_sha)
    _grader_histories(ctx, base.pkg.manifest.name, gid, runs)
    c = conclude(
        base_pkg=base.pkg,
        base_rendered=base.rendered,
        head_pkg=head.pkg,
        head_rendered=head.rendered,
        suites=[run.result for run in runs],
        base_records=all_base,
        head_records=all_head,
        guard_verdict=opts.guard_verdict,
        guard_findings=opts.guard_findings,
        same_instance=same,
        flaky_history=history,
        judge=inputs.judging,
    )
    trig, verdict, checks, why = _triggers(ctx, opts, inputs, c.verdict, c.checks, c.reasons)
    report = GateReport(
        gate_id=gid,
        skill=base.pkg.manifest.name,
        base_ref=refs[0] if refs else opts.base,
        head_ref=refs[1] if refs else opts.head,
        base_sha=inputs.base_sha,
        head_sha=inputs.head_sha,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        pr=opts.pr,
        student=opts.student,
        agent=inputs.agent.kind,
        agent_version=inputs.agent.agent_version,
        repeat=opts.repeat,
        verdict=verdict,
        reasons=why,
        checks=checks,
        triggers=trig,
        suites=[run.result for run in runs],
        comparability=c.comparability,
        impact=impact_all,
        base_complexity=c.base_complexity,
        head_complexity=c.head_complexity,
        change_size=c.change_size,
        guard_verdict=c.guard_verdict,
        guard_findings=c.guard_findings,
        same_instance=same,
        evidence=evidence,
        trials_run=runner.ran,
        trials_cached=runner.cached,
        trials_reused=sum(run.reused for run in runs),
        model_calls=runner.model_calls,
        power=c.power,
        flaky_history=[history[t] for t in sorted(history)],
        judge=inputs.judging,
        warnings=_warnings(runs),
        config={
            "suites": list(opts.suites),
            "sequential": opts.sequential,
            "impact": opts.impact,
            **({"teacher": opts.teacher} if opts.teacher else {}),
            **({"student_source": opts.student_source} if opts.student_source else {}),
            **({"rerun": opts.rerun} if opts.rerun != "errors" else {}),
            **({"reran_stale_base": stale} if stale else {}),
            **({"measurement_errors": errors} if (errors := error_lines(runs, runner)) else {}),
            "wall_time_sec": round(time.monotonic() - t0, 3),
            **(config or {}),
        },
    )
    if keep:
        keep_report(ctx, report)
    return report


def base_history(
    ctx: RepoContext, opts: GateOptions, inputs: GateInputs, current: list[RunRecord]
) -> dict[str, FlakyHistory]:
    """Tasks flaky from history for this gate's base side (:func:`store_history`)."""
    return store_history(
        ctx.store,
        skill_hash=inputs.base.pkg.content_hash,
        model=opts.student,
        task_hashes={t.id: t.content_hash for s in opts.suites for t in inputs.base.tasks[s]},
        current=[r.run_id for r in current],
        harnesses={harness_of(r) for r in current} or None,
    )


def store_history(
    store: TraceStore,
    *,
    skill_hash: str,
    model: str,
    task_hashes: dict[str, str],
    current: list[str],
    harnesses: set[tuple[str, str | None]] | None = None,
) -> dict[str, FlakyHistory]:
    """Tasks flaky from history: student runs in ``store`` of ``skill_hash`` on ``model``
    (in one of ``harnesses``, when given) and each task's content whose verdicts disagree,
    one of them not in ``current`` (docs/design/247-flaky-from-history.md, 416). The index
    alone says which tasks ever had both verdicts; only their records are read."""
    rows = store.query(skill_hash=skill_hash, model_route=model, agent_role="student")
    verdicts: dict[str, set[bool]] = {}
    for row in rows:
        if row.task_id in task_hashes and row.state in (EvalState.passed, EvalState.failed):
            verdicts.setdefault(row.task_id, set()).add(row.passed)
    mixed = {t for t, v in verdicts.items() if len(v) == 2}
    return flaky_from_history(
        [store.get(row.run_id) for row in rows if row.task_id in mixed],
        skill_hash=skill_hash,
        model=model,
        task_hashes=task_hashes,
        current=current,
        harnesses=harnesses,
    )


def _evidence(
    runs: list[_SuiteRun],
) -> tuple[dict[str, dict[str, list[str]]], ImpactSelection | None]:
    """The report's evidence (task -> side -> run ids) and the suites' impact selection."""
    evidence: dict[str, dict[str, list[str]]] = {}
    impact_all: ImpactSelection | None = None
    for run in runs:
        impact_all = merge_impact(impact_all, run.impact)
        sides: list[tuple[str, list[RunRecord]]] = [("base", run.base), ("head", run.head)]
        for side, recs in [*sides, *run.references.items()]:
            for r in recs:
                evidence.setdefault(r.task_id, {}).setdefault(side, []).append(r.run_id)
    return evidence, impact_all


def _grader_histories(ctx: RepoContext, skill: str, gid: str, runs: list[_SuiteRun]) -> None:
    """Each suite's grader history over earlier gates (design 410): information for the
    report, set before the verdict but never read by it."""
    if all(grade_report(r) is None for run in runs for r in run.head):
        return  # no graded task ran on head: no store read
    reports = stored_gates(ctx, skill, exclude=gid)
    for run in runs:
        run.result.grader_history = grader_history(earlier_gates(ctx, reports, run.head), run.head)


def stored_gates(ctx: RepoContext, skill: str, *, exclude: str) -> list[GateReport]:
    """Stored gate reports of ``skill`` but ``exclude`` (a gate id), the newest first."""
    if not ctx.store.index_path.exists():
        return []
    reports = []
    for key in ctx.store.list_blobs(GATE_BLOB):
        if key == exclude:
            continue
        try:
            rep = ctx.store.get_blob(GATE_BLOB, key, GateReport)
        except Exception:  # noqa: S112 - an unreadable old report has no history to give
            continue
        if rep.skill == skill:
            reports.append(rep)
    return sorted(reports, key=lambda x: x.created_at, reverse=True)


def earlier_gates(
    ctx: RepoContext, reports: list[GateReport], head: list[RunRecord]
) -> list[EarlierGate]:
    """Of ``reports`` (newest first), each with its head trials of the graded tasks in
    ``head`` whose task version, student and judge match this gate's (design 410): at
    most :data:`~skillci.gate.graded.HISTORY_GATES` gates per task, the newest."""
    want: dict[str, tuple[str, str, str | None]] = {}
    for r in head:
        g = grade_report(r)
        if g is not None and r.runtime.task_hash is not None:
            want.setdefault(r.task_id, (r.runtime.task_hash, r.model.route, _judge_route(g)))
    found = dict.fromkeys(want, 0)
    out = []
    for rep in reports:
        recs = []
        for task, sides in rep.evidence.items():
            if found.get(task, HISTORY_GATES) >= HISTORY_GATES:
                continue
            mine = [r for r in _records(ctx, sides.get("head", [])) if _matches(r, want[task])]
            found[task] += bool(mine)
            recs += mine
        if recs:
            out.append(EarlierGate(rep.gate_id, rep.created_at, rep.pr, recs))
    return out


def _judge_route(g: GradeReport) -> str | None:
    return g.judge.route if g.judge else None


def _matches(r: RunRecord, want: tuple[str, str, str | None]) -> bool:
    g = grade_report(r)
    return g is not None and (r.runtime.task_hash, r.model.route, _judge_route(g)) == want


def _records(ctx: RepoContext, run_ids: list[str]) -> list[RunRecord]:
    out = []
    for rid in run_ids:
        try:
            out.append(ctx.store.get(rid))
        except SkillciError:  # a pruned record: that gate has less history to give
            continue
    return out


def _triggers(
    ctx: RepoContext,
    opts: GateOptions,
    inputs: GateInputs,
    verdict: Verdict,
    checks: list[GateCheck],
    reasons: list[str],
) -> tuple[TriggerCheck | None, Verdict, list[GateCheck], list[str]]:
    """Add the trigger check (flows/triggers.py) to the verdict when it runs."""
    from skillci.flows.triggers import identity_changed, installed_entries, trigger_gate

    mode = opts.triggers if opts.triggers in ("auto", "always", "never") else "auto"
    base, head = inputs.base.pkg, inputs.head.pkg
    if mode == "never" or (mode == "auto" and not identity_changed(base, head)):
        return None, verdict, checks, reasons
    others = installed_entries(ctx.root, exclude=ctx.root / inputs.skill_dir)
    trig = trigger_gate(
        base,
        head,
        others,
        model=opts.student,
        home=ctx.state_dir,
        mode=mode,  # type: ignore[arg-type]
        agent=_trigger_agent(ctx, inputs),
    )
    if trig is None:
        return None, verdict, checks, reasons
    h = trig.head
    line = GateCheck(
        name="triggers",
        value=f"precision {_pct(h.precision)}, recall {_pct(h.recall)}",
        threshold=f"drop <= {trig.max_drop:.0%} from base",
        passed=trig.passed,
        detail="; ".join(trig.reasons),
    )
    if trig.passed:
        return trig, verdict, [*checks, line], reasons
    return trig, "reject", [*checks, line], [*reasons, *trig.reasons]


def _trigger_agent(ctx: RepoContext, inputs: GateInputs) -> AgentDecider | None:
    """The gate's real agent as the trigger check's decider (docs/design/373), with the
    repository's other skills installed beside each side's; None for the built-in loop."""
    from skillci.flows.agent_triggers import AgentDecider
    from skillci.flows.triggers import installed_skills

    a = inputs.agent
    if not a.real or a.route_name is None:
        return None
    others = installed_skills(ctx.root, exclude=ctx.root / inputs.skill_dir)
    return AgentDecider(
        a.kind,
        a.route_name,
        ctx.store,
        state_dir=ctx.state_dir,
        distractors=others,
        version=a.agent_version,
        route=a.route,
    )


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _warnings(runs: list[_SuiteRun]) -> list[str]:
    """Trials the metrics left out or counted as failed, one line per task and reason."""
    recs = [
        r for run in runs for recs in (run.base, run.head, *run.references.values()) for r in recs
    ]
    return error_warnings(recs) + unsupported_warnings(recs) + reward_hack_warnings(recs)


def stale_base(runs: list[_SuiteRun]) -> list[str]:
    """The comparability breaks that re-running the base side repairs (a sandbox, harness,
    tool schema, evaluator or model revision that differs from head's: design 303)."""
    base = [r for run in runs for r in run.base]
    head = [r for run in runs for r in run.head]
    return [i for i in comparability(base, head).issues if RERUN_BASE_HINT in i]


def error_lines(runs: list[_SuiteRun], runner: TrialSource) -> dict[str, list[str]]:
    """Per side (base, head, teacher, baseline), one line per failed measurement
    (``task #repeat: cause``): trials left out of every metric (docs/design/300)."""
    out: dict[str, list[str]] = {}
    for run in runs:
        sides = [("base", run.base), ("head", run.head), *run.references.items()]
        for side, recs in sides:
            for r in errored(recs):
                out.setdefault(side, []).append(
                    f"{r.task_id} #{r.repeat_index}: {error_cause(r) or r.evaluation.state.value}"
                )
    for line in getattr(runner, "errors", []):  # runner failures: no record at all
        out.setdefault("unknown", []).append(line)
    return out


def keep_report(ctx: RepoContext, report: GateReport) -> None:
    """Store ``report`` in the trace store (kind ``gate-report``, key = gate id)."""
    if not ctx.dry_run:
        ctx.store.put_blob(GATE_BLOB, report, key=report.gate_id, replace=True)


def _same_instance(
    ctx: RepoContext,
    runner: TrialSource,
    agent: AgentSpec,
    base: _Side,
    head: _Side,
    opts: GateOptions,
) -> SameInstance:
    from skillci.tasks.loader import load_task

    assert opts.same_instance_task
    wt = ctx.worktree(head.sha)
    task = load_task(
        wt / "evals" / "tasks" / opts.same_instance_task, purpose=Purpose.optimize, suites_root=wt
    )
    before = runner.run(agent, [task], base.rendered, base.pkg.content_hash, repeats=opts.repeat)
    after = runner.run(agent, [task], head.rendered, head.pkg.content_hash, repeats=opts.repeat)
    return SameInstance(
        task_id=task.id,
        before_passed=majority(before),
        after_passed=majority(after),
        before_runs=[r.run_id for r in before],
        after_runs=[r.run_id for r in after],
    )


def load_report(ctx: RepoContext, gid: str) -> GateReport:
    return ctx.store.get_blob(GATE_BLOB, gid, GateReport)
