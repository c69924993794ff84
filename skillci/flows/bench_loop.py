"""The loop arms of ``skillci bench``: skillci's own loop and its 8 ablations (docs/design/240).

Each arm runs skillci's loop in a scratch git repository (a fresh directory under the
bench's state dir — never the user's repository): propose on the failing tasks of the
training suite (``propose_suite``, as ``skillci propose --suite``), verify each candidate
(``run_gate`` on base..candidate with the student re-run, as ``skillci review``; or, for
``llm-only-verification``, the teacher's judgement), and keep the accepted ones with their
rules promoted candidate -> active and stamped with the gate (as ``skillci release``). The
resulting skill is written out and :mod:`skillci.flows.bench` evaluates it on the bench
suite like every other arm (``run_eval``: trial cache, trace store).

An :class:`Ablation` is the set of switches one arm turns off; the default is the normal
loop. They exist only here: no user command builds one, so none can weaken a real gate.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillci.compile.judge import judge_messages, parse_judge, sim_judge
from skillci.compile.loop import NORMAL_LOOP, LoopBudget, LoopSwitches
from skillci.compile.proposal import Proposal
from skillci.compile.suite import propose_suite
from skillci.errors import PatchError
from skillci.flows.bench import BenchOptions
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, run_gate
from skillci.flows.propose import ProposeOptions, ProposeRuns, make_compiler
from skillci.gate.verdict import GateCheck, GateReport, verdict_of
from skillci.patch.apply import apply
from skillci.patch.limits import BUDGET_LIMITS, SIZE_LIMITS
from skillci.release.promote import promote_candidates
from skillci.skill.package import SkillPackage
from skillci.tasks.loader import load_suite_tasks
from skillci.tasks.models import Purpose, Task
from skillci.tasks.suites import load_suite
from skillci.trace.models import RunRecord
from skillci.vcs.candidate import commit_candidate
from skillci.vcs.git import init_committed

#: The gate check the no-token-budget ablation ignores.
TOKEN_CHECK = "token_growth"  # noqa: S105 - a gate check name
REGRESSION_SUITE = "regression"
#: The suites the loop's gate re-runs (the real gate's, with security).
GATE_SUITES = ("validation", REGRESSION_SUITE, "security")


@dataclass(frozen=True, kw_only=True)
class Ablation:
    """What one loop arm turns off (keywords only; the default is skillci's normal loop)."""

    loop: LoopSwitches = NORMAL_LOOP
    """Switches inside the propose loop (teacher, taxonomy, limits, random classes)."""
    regression_suite: bool = True
    """False: the gate does not re-run the regression suite."""
    token_budget: bool = True
    """False: the gate's token_growth check does not count (the patch limits' token
    budget is lifted through ``loop``)."""
    lifecycle: bool = True
    """False: rules land active at proposal time; nothing is promoted or stamped."""
    verification: Literal["gate", "judge"] = "gate"
    """judge: the teacher model accepts or rejects each candidate; no student re-run."""


#: Every loop arm of the bench and its switches.
ABLATIONS: dict[str, Ablation] = {
    "skillci": Ablation(),
    "no-teacher-diff": Ablation(loop=LoopSwitches(teacher=False)),
    "no-taxonomy": Ablation(loop=LoopSwitches(taxonomy=False)),
    "no-patch-limits": Ablation(loop=LoopSwitches(lifted_limits=SIZE_LIMITS)),
    "no-regression-suite": Ablation(regression_suite=False),
    "no-token-budget": Ablation(loop=LoopSwitches(lifted_limits=BUDGET_LIMITS), token_budget=False),
    "no-lifecycle": Ablation(lifecycle=False),
    "llm-only-verification": Ablation(verification="judge"),
    "random-patches": Ablation(loop=LoopSwitches(random_seed=0)),
}


@dataclass
class Decision:
    """What the loop did with one cluster of failing tasks."""

    cluster: str
    status: str
    """The proposal's status (``proposed`` or why not)."""
    verdict: str = "none"
    """accept, reject, inconclusive (the gate could not tell; kept out like a reject), or
    none (nothing to verify)."""
    by: str = ""
    """gate <id> or judge <route>."""
    reasons: list[str] = field(default_factory=list)


@dataclass
class LoopRun:
    """One loop arm's outcome: the resulting skill and what the loop did to get it."""

    arm: str
    skill: Path
    decisions: list[Decision] = field(default_factory=list)
    teacher_runs: int = 0
    gate_suites: tuple[str, ...] = ()
    gates: list[GateReport] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    accepted_rules: list[str] = field(default_factory=list)

    def note(self) -> str:
        """One line: clusters, proposals, accepted, by what."""
        proposed = [d for d in self.decisions if d.verdict != "none"]
        accepted = [d for d in proposed if d.verdict == "accept"]
        by = sorted({d.by.split(" ")[0] for d in proposed})
        why = sorted({d.status.split(":")[0] for d in self.decisions if d.verdict == "none"})
        gated = [d for d in proposed if d.verdict == "reject" and d.by.startswith("gate")]
        rej = sorted({r.split(":")[0] for d in gated for r in d.reasons})  # not model text
        open_ = [d for d in proposed if d.verdict == "inconclusive"]
        unmeasured = sorted({r.split(":")[0] for d in open_ for r in d.reasons})
        return (
            f"{len(self.decisions)} cluster(s), {len(proposed)} proposed, "
            f"{len(accepted)} accepted"
            + (f" by {'/'.join(by)}" if by else "")
            + (f"; not proposed: {', '.join(why)}" if why else "")
            + (f"; rejected on: {', '.join(rej)}" if rej else "")
            + (f"; inconclusive (not measured: {', '.join(unmeasured)})" if open_ else "")
        )


def scratch_repo(skill: Path, source: Path, dest: Path) -> Path:
    """A fresh git repository at ``dest`` with ``skills/<name>`` and ``evals/`` committed."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(skill, dest / "skills" / skill.name)
    shutil.copytree(source / "evals", dest / "evals", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / ".gitignore").write_text(".skillci/\n")
    init_committed(dest, "bench", name="skillci bench", email="bench@skillci.invalid")
    return dest


def activated(pkg: SkillPackage, gate_id: str | None) -> SkillPackage:
    """``pkg`` with every candidate rule active (stamped with ``gate_id`` when given)."""
    changes, _ids = promote_candidates(pkg, gate_id)
    return pkg.with_files(changes) if changes else pkg


def _changes(before: SkillPackage, after: SkillPackage) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {
        rel: data for rel, data in after.files.items() if before.files.get(rel) != data
    }
    out.update({rel: None for rel in before.files if rel not in after.files})
    return out


def gate_suites(ab: Ablation) -> tuple[str, ...]:
    """The suites the loop's gate re-runs under ``ab``."""
    return tuple(x for x in GATE_SUITES if ab.regression_suite or x != REGRESSION_SUITE)


def counted_checks(report: GateReport, ab: Ablation) -> list[GateCheck]:
    """The gate checks that count under ``ab`` (no-token-budget drops token_growth)."""
    ignored = () if ab.token_budget else (TOKEN_CHECK,)
    return [ch for ch in report.checks if ch.name not in ignored]


def failed_checks(report: GateReport, ab: Ablation) -> list[GateCheck]:
    """The counted checks that keep the candidate out under ``ab``: failed on evidence or
    not measured (none: accepted)."""
    return [ch for ch in counted_checks(report, ab) if ch.status in ("fail", "not_measured")]


def judge(
    opts: BenchOptions, prop: Proposal, before: SkillPackage, after: SkillPackage
) -> Decision:
    """The teacher's verdict on a candidate (no student re-run): the documented sim judge
    for ``sim/*`` routes, else the route asked once (re-asked once on an invalid answer;
    an answer that never parses rejects)."""
    from skillci.providers.routes import resolve_route

    by = f"judge {opts.teacher}"
    route = resolve_route(opts.teacher)
    if route.is_sim:
        ok, why = sim_judge(prop)
        verdict = "accept" if ok else "reject"
        return Decision(cluster="", status=prop.status, verdict=verdict, by=by, reasons=[why])
    from skillci.analyze.modelio import ModelExchange, ask_until_valid, first_line
    from skillci.errors import ModelOutputError
    from skillci.patch.diff import render_diff
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    cache = ResponseCache(opts.home / "cache" / "responses")
    client = ModelClient(opts.teacher, route, cache=cache, use_cache=True)
    messages = judge_messages(prop, render_diff(before, after))
    exchange = ModelExchange(kind="bench-judge", model=opts.teacher, messages=messages)
    try:
        answer = ask_until_valid(
            client.complete,
            exchange,
            parse_judge,
            attempts=2,
            failure="no valid verdict",
            reason_of=first_line,
        )
    except ModelOutputError as exc:
        why = exc.message[:200]
        return Decision(cluster="", status=prop.status, verdict="reject", by=by, reasons=[why])
    verdict = "accept" if answer.accept else "reject"
    return Decision(cluster="", status=prop.status, verdict=verdict, by=by, reasons=[answer.reason])


class _Loop:
    """One loop arm in its scratch repository."""

    def __init__(self, arm: str, ab: Ablation, s: BenchOptions, say: Callable[[str], None]):
        self.arm, self.ab, self.s, self.say = arm, ab, s, say
        repo = scratch_repo(s.skill, s.root, s.home / "bench" / arm)
        self.ctx = RepoContext.open(repo, state_dir=s.home, forge="local")
        self.skill_dir = f"skills/{s.skill.name}"
        self.base = self.ctx.git.rev("main") or ""
        self.pkg = self.ctx.package_at(self.base, self.skill_dir)
        self.run = LoopRun(arm=arm, skill=repo / "out" / s.skill.name, gate_suites=gate_suites(ab))

    def propose(self) -> list[tuple[str, Proposal, SkillPackage | None, str]]:
        ctx, s = self.ctx, self.s
        runs = ProposeRuns(
            ctx,
            ProposeOptions(
                skill=self.skill_dir,
                task="",
                student=s.student,
                teacher=s.teacher,
                parallel=s.parallel,
                agent=s.agent,
                agent_version=s.agent_version,
            ),
        )

        def teacher(task: Task) -> RunRecord:
            self.run.teacher_runs += 1
            return runs.run_teacher(task)

        purpose = Purpose.optimize
        tasks = load_suite_tasks(
            load_suite(s.train_suite, ctx.root, purpose=purpose), ctx.root, purpose=purpose
        )
        compiler, fallback = make_compiler(ctx, "template")
        res = propose_suite(
            tasks,
            self.pkg,
            run_student=runs.run_student,
            run_teacher=teacher,
            compiler=compiler,
            fallback=fallback,
            budget=LoopBudget(repeats=1),
            switches=self.ab.loop,
        )
        by_task = {p.task_id: p for p in res.suite.proposals}
        self.run.proposals = list(res.suite.proposals)
        out = []
        for cl in res.suite.clusters:
            prop = by_task.get(cl.representative or "")
            name = f"{cl.failure_class.value}: {', '.join(cl.members)}"
            if prop is None:
                self.run.decisions.append(Decision(cluster=name, status=cl.status))
                continue
            out.append(
                (name, prop, res.candidates.get((cl.failure_class.value, cl.signature)), cl.status)
            )
        return out

    def verify(self, i: int, prop: Proposal, candidate: SkillPackage) -> Decision:
        """Gate (or judge) one candidate against the original skill."""
        if self.ab.verification == "judge":
            return judge(self.s, prop, self.pkg, candidate)
        c = commit_candidate(
            self.ctx.git,
            base=self.base,
            branch=f"bench/{self.arm}/{i}",
            skill_dir=self.skill_dir,
            changes=_changes(self.pkg, candidate),
            subject=f"bench {self.arm}: candidate {i}",
        )
        report = run_gate(
            self.ctx,
            GateOptions(
                skill=self.skill_dir,
                base=self.base,
                head=c.sha,
                suites=self.run.gate_suites,
                repeat=1,
                student=self.s.student,
                agent=self.s.agent,
                agent_version=self.s.agent_version,
                parallel=self.s.parallel,
                same_instance_task=prop.task_id,
                guard_verdict="needs-approval" if prop.needs_approval else "pass",
            ),
        )
        self.run.gates.append(report)
        checks = counted_checks(report, self.ab)
        verdict = verdict_of(checks)
        why = "fail" if verdict == "reject" else "not_measured"
        return Decision(
            cluster="",
            status=prop.status,
            verdict=verdict,
            by=f"gate {report.gate_id}",
            reasons=[f"{ch.name}: {ch.value}" for ch in checks if ch.status == why],
        )

    def execute(self) -> LoopRun:
        final = self.pkg
        for i, (name, prop, candidate, status) in enumerate(self.propose()):
            if candidate is None or not prop.ready:
                self.run.decisions.append(Decision(cluster=name, status=status))
                continue
            if not self.ab.lifecycle:
                candidate = activated(candidate, None)
            d = self.verify(i, prop, candidate)
            d.cluster = name
            self.run.decisions.append(d)
            self.say(f"  {self.arm}: {name}: {d.verdict} ({d.by})")
            if d.verdict != "accept":
                continue
            try:
                for p in prop.patches:
                    final = apply(final, p)
            except PatchError as exc:
                d.reasons.append(f"does not combine with an earlier accepted patch: {exc}")
                continue
            gate_id = d.by.removeprefix("gate ") if d.by.startswith("gate ") else None
            final = activated(final, gate_id if self.ab.lifecycle else None)
        self.run.accepted_rules = sorted(
            lr.rule.id for lr in final.rules if self.pkg.rule(lr.rule.id) is None
        )
        final.to_dir(self.run.skill)
        return self.run


def run_loop(
    arm: str, settings: BenchOptions, say: Callable[[str], None] = lambda _line: None
) -> LoopRun:
    """Run the loop arm ``arm`` (a key of :data:`ABLATIONS`) and write its skill."""
    return _Loop(arm, ABLATIONS[arm], settings, say).execute()


__all__ = [
    "ABLATIONS",
    "Ablation",
    "Decision",
    "LoopRun",
    "activated",
    "counted_checks",
    "failed_checks",
    "gate_suites",
    "judge",
    "run_loop",
    "scratch_repo",
]
