"""``diagnose``: student run(s) + teacher run + skill package -> one :class:`Diagnosis`.

Order of work:

1. Build observable trajectories; the teacher counts only when it passed (a failing
   teacher shows nothing worth copying, but its run id is still recorded).
2. Run every detector on the first failing student repeat (the others feed the flakiness
   check and the "repeats identically" check).
3. Compileability (``skillci.analyze.compilability``): environment classes win; a failure
   that repeats with its covering rule already loaded is a capability gap; with no
   procedural hit the residual decides between missing knowledge and capability gap.
4. Otherwise the top-ranked procedural hit (confidence, then taxonomy priority) becomes the
   diagnosis, with the operation chosen from the package: replace the covering rule (or
   restore it when retired), move it to the bootstrap when the student never loaded its
   workflow, or add the class's default rule when none covers it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from skillci.analyze.align import align
from skillci.analyze.compilability import (
    Verdict,
    environment_override,
    gap_with_procedure,
    residual,
)
from skillci.analyze.coverage import Coverage, coverage, rule_in_context
from skillci.analyze.detectors import DetectContext, Hit, run_detectors
from skillci.analyze.models import (
    Diagnosis,
    EvidenceRef,
    ProposedSkillChange,
    StudentBehavior,
    TeacherBehavior,
)
from skillci.analyze.taxonomy import FailureClass, UpgradePath, category_of, info
from skillci.analyze.trajectory import Trajectory
from skillci.errors import InvalidInputError
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord

#: Confidence factor when the covering rule was already loaded (the fix must be stronger
#: wording or a different rule, which is less certain to work).
LOADED_RULE_FACTOR = 0.85


def signature(hit_class: FailureClass, missing_action: str | None, assumption: str | None) -> str:
    """Cluster key: class + missing action + revealed assumption (our names, no task data).

    Tool names and paths are left out on purpose: the same gap shows with ``apply_patch`` on
    one task and ``write_file`` on another, and one patch should serve both."""
    return f"{hit_class.value}/{missing_action or '-'}/{assumption or '-'}"


def rank(hits: Sequence[Hit]) -> list[Hit]:
    """Hits best first: higher confidence, then lower taxonomy priority, then class name."""
    return sorted(
        hits,
        key=lambda h: (-h.confidence, info(h.failure_class).priority, h.failure_class.value),
    )


def _as_list(student: RunRecord | Sequence[RunRecord]) -> list[RunRecord]:
    return [student] if isinstance(student, RunRecord) else list(student)


def diagnose(
    student: RunRecord | Sequence[RunRecord],
    teacher: RunRecord | None,
    package: SkillPackage | None,
    *,
    history: Sequence[Diagnosis] = (),
    targets: Sequence[str] = (),
    forced_class: FailureClass | None = None,
    checks: Iterable[str] = (),
) -> Diagnosis:
    # long: the detectors run in a fixed order over one alignment, each adding to the same findings
    """Diagnose the first failing student run (see the module docstring).

    ``student`` may be one record or the repeats of one task with one skill; ``history``
    holds diagnoses of earlier rounds on the same task (for "the failure repeats with the
    rule loaded"); ``targets`` are the task's failing test ids when known. ``checks``:
    signatures of the task verifier's commands (``classify.verifier_checks``); the passing
    teacher's own checks (``Trajectory.learned_checks``) are added to them.
    ``forced_class`` (``skillci bench`` ablations only): no detector runs, the failure is
    taken to be this class (a generic or a random diagnosis).
    Raises :class:`InvalidInputError` when no student run failed.
    """
    records = _as_list(student)
    failing = [r for r in records if not r.passed or r.forged_pass]
    if not failing:
        raise InvalidInputError(
            "every student run passed: there is nothing to diagnose",
            hint="diagnose only failing runs (or re-run with more repeats)",
        )
    task_ids = {r.task_id for r in records} | ({teacher.task_id} if teacher else set())
    if len(task_ids) != 1:
        raise InvalidInputError(
            f"runs of different tasks cannot be compared: {sorted(task_ids)}",
            hint="pass the student and teacher runs of one task",
        )
    known = frozenset(checks)
    t_traj = (
        Trajectory.from_record(teacher, targets, known)
        if teacher is not None and teacher.passed
        else None
    )
    if t_traj is not None and teacher is not None:
        learned = t_traj.learned_checks() - known
        if learned:
            known |= learned
            t_traj = Trajectory.from_record(teacher, targets, known)
    tgt = tuple(targets) or (t_traj.targets if t_traj else ())
    trajs = [Trajectory.from_record(r, tgt, known) for r in records]
    primary = next(t for t in trajs if not t.passed)
    others = tuple(t for t in trajs if t.run_id != primary.run_id)
    ctx = DetectContext(
        student=primary,
        teacher=t_traj,
        alignment=align(primary, t_traj) if t_traj is not None else None,
        repeats=others,
    )
    hits = run_detectors(ctx) if forced_class is None else [_forced_hit(forced_class)]
    base = _Base(
        task_id=primary.task_id,
        student_run_ids=[r.run_id for r in failing],
        teacher_run_id=teacher.run_id if teacher is not None else None,
    )

    env = environment_override(hits)
    if env is not None:
        return base.not_compilable(
            Verdict(
                env.failure_class,
                info(env.failure_class).upgrade_path or _never(),
                env.confidence,
                env.rationale,
                env.missing_action,
                env.evidence,
            ),
            detector=env.detector,
            alternatives=[h.failure_class for h in rank(hits) if h is not env],
        )

    ranked = [h for h in rank(hits) if info(h.failure_class).compilable]
    if not ranked:
        return base.not_compilable(residual(ctx), detector="residual", alternatives=[])

    top = ranked[0]
    sig = signature(top.failure_class, top.missing_action, top.incorrect_assumption)
    cov = coverage(package, top.failure_class)
    loaded = rule_in_context(package, cov.rule, primary)
    seen = {d.cluster_key for d in history}
    for other in others:
        if other.passed:
            continue
        o_ctx = DetectContext(student=other, teacher=t_traj, repeats=(primary,))
        for h in run_detectors(o_ctx):
            if h.failure_class is top.failure_class and rule_in_context(package, cov.rule, other):
                seen.add(
                    (
                        h.failure_class.value,
                        signature(h.failure_class, h.missing_action, h.incorrect_assumption),
                    )
                )
    if loaded and (top.failure_class.value, sig) in seen:
        return base.not_compilable(
            gap_with_procedure(top, primary),
            detector=top.detector,
            alternatives=[h.failure_class for h in ranked],
        )
    return base.compilable(
        top, cov, loaded, sig, alternatives=[h.failure_class for h in ranked[1:]]
    )


def _forced_hit(cls: FailureClass) -> Hit:
    """The one hit of a diagnosis whose class was imposed, not detected."""
    return Hit(
        failure_class=cls,
        confidence=0.5,
        required_behavior=f"avoid_{cls.value}",
        rationale="classification bypassed (skillci bench ablation): class imposed",
        detector="forced",
    )


def _never() -> UpgradePath:  # pragma: no cover - every non-compilable class has a path
    raise AssertionError("non-compilable class without an upgrade path")


class _Base:
    """Shared fields of the diagnoses one call can produce."""

    def __init__(
        self, task_id: str, student_run_ids: list[str], teacher_run_id: str | None
    ) -> None:
        self.task_id = task_id
        self.student_run_ids = student_run_ids
        self.teacher_run_id = teacher_run_id

    def compilable(
        self, hit: Hit, cov: Coverage, loaded: bool, sig: str, alternatives: list[FailureClass]
    ) -> Diagnosis:
        op = cov.operation
        rule = cov.rule
        if rule is not None and rule.status.rendered and rule.scope.workflow and not loaded:
            op = "change_loading_scope"
        conf = hit.confidence * (LOADED_RULE_FACTOR if loaded else 1.0)
        target = cov.target_rule_id
        why = hit.rationale
        if op == "add_rule":
            why += f" No rule covers it: add {target}."
        elif cov.retired and rule is not None:
            why += f" The covering rule {rule.id} is {rule.status.value}: restore it."
        elif op == "change_loading_scope":
            why += f" The covering rule {target} sits in a workflow the student never loaded."
        elif loaded:
            why += f" The covering rule {target} was loaded: strengthen it."
        return Diagnosis(
            task_id=self.task_id,
            failure_class=hit.failure_class,
            failure_category=category_of(hit.failure_class),
            student_behavior=StudentBehavior(
                last_action=hit.last_action,
                missing_action=hit.missing_action,
                incorrect_assumption=hit.incorrect_assumption,
            ),
            teacher_behavior=TeacherBehavior(relevant_actions=list(hit.teacher_actions)),
            proposed_skill_change=ProposedSkillChange(
                operation=op,
                target_rule_id=target,
                required_behavior=hit.required_behavior,
            ),
            evidence=list(hit.evidence),
            confidence=round(conf, 3),
            skill_compilable=True,
            upgrade_path=None,
            signature=sig,
            detector=hit.detector,
            rationale=why[:500],
            student_run_ids=self.student_run_ids,
            teacher_run_id=self.teacher_run_id,
            alternatives=alternatives,
        )

    def not_compilable(
        self, v: Verdict, *, detector: str, alternatives: list[FailureClass]
    ) -> Diagnosis:
        evidence: list[EvidenceRef] = list(v.evidence)
        return Diagnosis(
            task_id=self.task_id,
            failure_class=v.failure_class,
            failure_category=category_of(v.failure_class),
            student_behavior=StudentBehavior(missing_action=v.missing_action),
            teacher_behavior=TeacherBehavior(relevant_actions=list(v.teacher_actions)),
            proposed_skill_change=ProposedSkillChange(operation="none"),
            evidence=evidence,
            confidence=round(v.confidence, 3),
            skill_compilable=False,
            upgrade_path=v.upgrade_path,
            signature=signature(v.failure_class, v.missing_action, None),
            detector=detector,
            rationale=v.rationale[:500],
            student_run_ids=self.student_run_ids,
            teacher_run_id=self.teacher_run_id,
            alternatives=alternatives,
        )


__all__ = ["diagnose", "rank", "signature"]
