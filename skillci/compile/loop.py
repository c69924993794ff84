"""The propose loop for one task: up to 3 rounds of diagnose -> compile -> check -> re-run.

Pure apart from the callables it is given (``run_student``, ``run_teacher``, the
compiler's model): no git, no store, no files. The lead's ``skillci propose`` wires real
runners, caches and the forge around it.

1. **Baseline.** Run the student ``repeats`` times with the current package. All pass:
   ``no_failure``. Fewer than ``min_fail_fraction`` of them fail: ``not_reproducible``
   (no teacher is spent on an intermittent failure).
2. **Pre-diagnosis without the teacher.** An environment class (flaky verifier, context
   overflow) stops here — ``not_compilable`` with its upgrade path, no teacher spent. A
   diagnosis that an existing cluster already explains stops here too
   (``explained_by_cluster``): the cluster's patch will be validated on this task.
3. **Teacher.** Run once (the caller caches it per task/route/environment/prompt).
4. **Rounds** (at most ``max_rounds``): diagnose the latest failing runs against the
   teacher and the *candidate* package, with the earlier rounds' diagnoses as history
   (a failure that repeats with its rule loaded is a capability gap, not compilable).
   Stop when the diagnosis repeats, is not compilable, the compiler gives up, the patch
   fails its check (guard reject / limits / lint), or the budget ends. Otherwise apply,
   re-run the student on the same task; passing ends with ``proposed``, failing goes to
   the next round on the new trajectories with the patched package (patches accumulate,
   one commit each).

Budget is explicit (:class:`LoopBudget`): student runs, teacher runs, compile calls and
dollars, checked before each spend. A failed example is a recorded outcome, not an
exception; exceptions are for failures of the whole run (e.g. a runner crashing).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from skillci.analyze.cluster import Cluster, find_cluster
from skillci.analyze.diagnose import diagnose
from skillci.analyze.llm import llm_diagnose
from skillci.analyze.modelio import ModelCall, ModelExchange
from skillci.analyze.models import Diagnosis
from skillci.analyze.taxonomy import FailureClass, info
from skillci.compile.base import CompileInput, CompileOutput, Compiler
from skillci.compile.patch_check import PatchCheck, check_patch, untrusted_texts
from skillci.compile.proposal import CostSummary, EvalSummary, Proposal, Round, Status
from skillci.errors import CompileError, ModelOutputError
from skillci.patch.guard import GuardConfig
from skillci.skill.package import SkillPackage
from skillci.trace.models import EvalState, RunRecord

TaskT = TypeVar("TaskT")
RunStudent = Callable[[TaskT, SkillPackage], RunRecord]
RunTeacher = Callable[[TaskT], RunRecord]


@dataclass(frozen=True)
class LoopBudget:
    """Explicit limits of one propose loop (None = unlimited)."""

    max_rounds: int = 3
    repeats: int = 1
    """Student repeats per evaluation (baseline and each re-run)."""
    min_fail_fraction: float = 0.5
    """Share of baseline repeats that must fail for the failure to count as reproducible."""
    pass_fraction: float = 1.0
    """Share of re-runs that must pass for a candidate to count as fixing the task."""
    max_student_runs: int | None = None
    max_teacher_runs: int = 1
    max_compiles: int | None = None
    max_usd: float | None = None


@dataclass(frozen=True, kw_only=True)
class LoopSwitches:
    """Parts of the loop the ``skillci bench`` ablations turn off (docs/design/240).

    The default is the normal loop; no command but ``skillci bench`` builds another one.
    """

    teacher: bool = True
    """False: no teacher run; diagnoses come from the student's failures only."""
    taxonomy: bool = True
    """False: the failure taxonomy is bypassed; every failure gets one generic diagnosis."""
    lifted_limits: frozenset[str] = frozenset()
    """Names of patch limits measured but not enforced (:func:`skillci.patch.limits.lift`)."""
    random_seed: int | None = None
    """Set: each round's failure class is drawn from this seed, not diagnosed (random
    bounded patches through the same compiler, limits and guard)."""


NORMAL_LOOP = LoopSwitches()
#: What a failure is taken to be when the taxonomy is bypassed: "verify before finishing".
GENERIC_CLASS = FailureClass.missing_validation


def _imposer(switches: LoopSwitches, task_id: str) -> Callable[[], FailureClass | None]:
    """The class each diagnosis is forced to: None (detected), generic, or drawn at random."""
    if switches.random_seed is not None:
        rng = random.Random(f"{switches.random_seed}:{task_id}")  # noqa: S311 - not security
        pool = sorted(c for c in FailureClass if info(c).compilable and info(c).default_rule_id)
        return lambda: rng.choice(pool)
    if not switches.taxonomy:
        return lambda: GENERIC_CLASS
    return lambda: None


@dataclass
class _Spend:
    budget: LoopBudget
    cost: CostSummary = field(default_factory=CostSummary)
    compiles: int = 0

    def can_run_students(self, n: int) -> bool:
        b = self.budget
        if b.max_student_runs is not None and self.cost.student_runs + n > b.max_student_runs:
            return False
        return self.dollars_left()

    def can_run_teacher(self) -> bool:
        return self.cost.teacher_runs < self.budget.max_teacher_runs and self.dollars_left()

    def can_compile(self) -> bool:
        b = self.budget
        if b.max_compiles is not None and self.compiles >= b.max_compiles:
            return False
        return self.dollars_left()

    def dollars_left(self) -> bool:
        return self.budget.max_usd is None or self.cost.usd < self.budget.max_usd

    def add_exchange(self, out: CompileOutput | None, exchange: object | None = None) -> None:
        ex = out.exchange if out is not None else exchange
        if isinstance(ex, ModelExchange):
            self.cost.compiler_calls += ex.attempts
            self.cost.input_tokens += ex.input_tokens
            self.cost.output_tokens += ex.output_tokens
            self.cost.usd += ex.usd


@dataclass
class ProposeResult(Generic[TaskT]):
    """What the loop returns: the saved record, the candidate package and every run."""

    proposal: Proposal
    candidate: SkillPackage | None
    """The package with every accepted patch applied (None when none was)."""
    runs: list[RunRecord]
    """Every run the loop executed (baseline, teacher, re-runs), for the trace store."""


def _fails(runs: Sequence[RunRecord]) -> int:
    return sum(not r.passed for r in runs)


def _second_opinion(
    residual: Diagnosis,
    current: Sequence[RunRecord],
    teacher: RunRecord,
    package: SkillPackage,
    call: ModelCall,
    model: str | None,
) -> tuple[Diagnosis, ModelExchange | None]:
    """The LLM's diagnosis of a failure no detector explains (the residual one on failure)."""
    try:
        d, ex = llm_diagnose(current[0], teacher, package, call, model=model, hint=residual)
    except ModelOutputError as exc:
        return residual, exc.exchange if isinstance(exc.exchange, ModelExchange) else None
    return d, ex


def _check_status(check: PatchCheck) -> Status:
    if not check.applies or check.lint_errors:
        return "invalid_patch"
    if not check.within_limits:
        return "out_of_limits"
    return "rejected_by_guard"


def propose_task(
    task: TaskT,
    package: SkillPackage,
    *,
    run_student: Callable[[TaskT, SkillPackage], RunRecord],
    run_teacher: Callable[[TaskT], RunRecord],
    compiler: Compiler,
    budget: LoopBudget | None = None,
    clusters: Sequence[Cluster] = (),
    fallback: Compiler | None = None,
    targets: Sequence[str] = (),
    regression_test: bool = False,
    guard_config: GuardConfig | None = None,
    baseline: Sequence[RunRecord] | None = None,
    llm_diagnosis: ModelCall | None = None,
    llm_model: str | None = None,
    switches: LoopSwitches = NORMAL_LOOP,
    checks: Sequence[str] = (),
    instruction: str = "",
) -> ProposeResult[TaskT]:
    # long: the propose loop's rounds share the budget, the best candidate and the trace; split with its state object (issue 30 follow-up)
    """Run the propose loop for ``task`` (see the module docstring).

    ``fallback`` compiles when ``compiler`` raises ``ModelOutputError`` (e.g. the template
    compiler behind an LLM compiler). ``regression_test`` adds the task to the skill's
    regression list in the first patch. ``baseline``: student runs of this task with
    ``package`` that already exist (not run again, not charged). ``llm_diagnosis``: a
    model asked for a second opinion when no deterministic detector explains the failure
    (its answer replaces the residual diagnosis only when it is valid; the exchange is
    kept in the round either way). ``switches``: the bench ablations (default: none).
    ``checks``: signatures of the task verifier's commands (``classify.verifier_checks``),
    what "checking the outcome" means on this task for the diagnosis and the compilers;
    ``instruction``: the task's instruction (the LLM compiler's prompt quotes it).
    """
    b = budget or LoopBudget()
    spend = _Spend(b)
    runs: list[RunRecord] = []
    m = package.manifest
    prop = Proposal(
        task_id="",
        skill_name=m.name,
        skill_version=m.version,
        skill_hash=package.content_hash,
        status="no_failure",
        reason="",
        compiler=compiler.name,
    )

    def finish(
        status: Status, reason: str, candidate: SkillPackage | None = None
    ) -> ProposeResult[TaskT]:
        prop.status = status
        prop.reason = reason
        prop.cost = spend.cost
        if candidate is not None and prop.patches:
            prop.candidate_hash = candidate.content_hash
        return ProposeResult(prop, candidate if prop.patches else None, runs)

    def students(pkg: SkillPackage) -> list[RunRecord] | None:
        if not spend.can_run_students(b.repeats):
            return None
        out = []
        for _ in range(b.repeats):
            r = run_student(task, pkg)
            spend.cost.add_run(r)
            runs.append(r)
            out.append(r)
        return out

    # 1. baseline
    before = list(baseline) if baseline else students(package)
    if before is None:
        return finish("budget_exhausted", "no budget for the baseline student runs")
    prop.task_id = before[0].task_id
    prop.before = EvalSummary.of(before, package.content_hash)
    if _fails(before) == 0:
        return finish("no_failure", f"the student passed all {len(before)} baseline run(s)")
    unsupported = [r for r in before if r.evaluation.state is EvalState.environment_unsupported]
    if unsupported:  # the runner, not the skill, decided these: nothing to compile
        return finish(
            "not_compilable",
            f"environment_unsupported: {unsupported[0].evaluation.verifier_output}",
        )

    # 2. pre-diagnosis without the teacher
    imposed = _imposer(switches, prop.task_id)
    pre = diagnose(before, None, package, targets=targets, forced_class=imposed(), checks=checks)
    if not pre.skill_compilable and pre.failure_class.value in (
        "flaky_environment",
        "context_overflow",
        "harness_failure",
    ):
        prop.diagnosis = pre
        prop.upgrade_path = pre.upgrade_path
        return finish("not_compilable", f"{pre.failure_class.value}: {pre.rationale}")
    if _fails(before) < math.ceil(b.min_fail_fraction * len(before)):
        prop.diagnosis = pre
        return finish(
            "not_reproducible",
            f"only {_fails(before)} of {len(before)} baseline runs failed; no teacher spent",
        )
    known = find_cluster(clusters, pre)
    if known is not None:
        prop.diagnosis = pre
        prop.cluster_key = list(known.key)
        return finish(
            "explained_by_cluster",
            f"cluster {known.failure_class.value} ({len(known.task_ids)} task(s)) already explains it",
        )

    # 3. teacher (unless the bench's no-teacher-diff ablation skips it)
    teacher: RunRecord | None = None
    if switches.teacher:
        if not spend.can_run_teacher():
            return finish("budget_exhausted", "no budget for the teacher run")
        teacher = run_teacher(task)
        spend.cost.add_run(teacher)
        runs.append(teacher)
        prop.teacher_run_id = teacher.run_id

    # 4. rounds
    candidate = package
    current = [r for r in before if not r.passed] or before
    history: list[Diagnosis] = []
    all_records: list[RunRecord] = [*before, *([teacher] if teacher else [])]
    for index in range(1, b.max_rounds + 1):
        d = diagnose(
            current,
            teacher,
            candidate,
            history=history,
            targets=targets,
            forced_class=imposed(),
            checks=checks,
        )
        diag_exchange: ModelExchange | None = None
        if (
            llm_diagnosis is not None
            and teacher is not None
            and d.detector == "residual"
            and spend.can_compile()
        ):
            d, diag_exchange = _second_opinion(
                d, current, teacher, candidate, llm_diagnosis, llm_model
            )
            spend.add_exchange(None, diag_exchange)
        if prop.diagnosis is None:
            prop.diagnosis = d
        rnd = Round(index=index, diagnosis=d, diagnosis_exchange=diag_exchange, outcome="stopped")
        prop.rounds.append(rnd)
        if not d.skill_compilable:
            prop.upgrade_path = d.upgrade_path
            status: Status = "not_compilable" if not prop.patches else "no_improvement"
            return finish(
                status, f"{d.failure_class.value}: {info(d.failure_class).summary}", candidate
            )
        if history and history[-1].cluster_key == d.cluster_key:
            return finish(
                "diagnosis_repeated",
                f"round {index} diagnosed {d.failure_class.value} again; stopping",
                candidate,
            )
        history.append(d)
        if not spend.can_compile():
            return finish("budget_exhausted", "no budget left for the compiler", candidate)
        spend.compiles += 1
        req = CompileInput(
            diagnosis=d,
            package=candidate,
            teacher=teacher,
            students=current,
            regression_task=prop.task_id if regression_test and index == 1 else None,
            instruction=instruction,
            checks=tuple(checks),
        )
        out: CompileOutput | None = None
        try:
            out = compiler.compile(req)
        except ModelOutputError as exc:
            spend.add_exchange(None, exc.exchange)
            rnd.compiler_error = exc.message
            if isinstance(exc.exchange, ModelExchange):
                rnd.compiler_exchange = exc.exchange
            if fallback is None:
                return finish("compiler_failed", exc.message, candidate)
            try:
                out = fallback.compile(req)
            except CompileError as exc2:
                rnd.compiler_error += f"; fallback: {exc2.message}"
                return finish("not_compilable", exc2.message, candidate)
            rnd.fallback = fallback.name
        except CompileError as exc:
            rnd.compiler_error = exc.message
            return finish("not_compilable", exc.message, candidate)
        spend.add_exchange(out)
        rnd.compile = out
        check, applied = check_patch(
            candidate,
            out.patch,
            untrusted_texts(all_records),
            guard_config,
            lifted=switches.lifted_limits,
        )
        rnd.check = check
        if not check.ok or applied is None:
            return finish(_check_status(check), "; ".join(check.problems())[:300], candidate)
        prop.patches.append(out.patch)
        candidate = applied.after
        after = students(candidate)
        if after is None:
            return finish(
                "budget_exhausted", "no budget for the re-runs with the candidate", candidate
            )
        all_records += after
        rnd.after = EvalSummary.of(after, candidate.content_hash)
        prop.after = rnd.after
        passed = sum(r.passed for r in after)
        if passed >= math.ceil(b.pass_fraction * len(after)):
            rnd.outcome = "passed"
            return finish(
                "proposed",
                f"the student passes {passed}/{len(after)} re-run(s) with the candidate",
                candidate,
            )
        rnd.outcome = "still_failing"
        current = [r for r in after if not r.passed]
    return finish("no_improvement", f"still failing after {b.max_rounds} round(s)", candidate)


__all__ = [
    "GENERIC_CLASS",
    "NORMAL_LOOP",
    "LoopBudget",
    "LoopSwitches",
    "ProposeResult",
    "RunStudent",
    "RunTeacher",
    "propose_task",
]
