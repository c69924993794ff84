"""Compileability: is the gap a procedure a skill can carry, or something else?

The seed essay is blunt: skills carry procedures (workflows, tool order, checks, stop
conditions); they do not carry facts the student never saw, context it cannot hold, skill
it does not have, or a stable verdict from a flaky environment. Deciding this early stops
teacher and compiler budget from being spent on failures no patch will fix.

Decisions, in order (docs/design/052-compileability.md):

1. An observed environment class (``flaky_environment``, ``context_overflow``) wins.
2. A procedural hit whose covering rule was *already in the student's context* and whose
   failure repeats identically (same class and signature) in another repeat or an earlier
   round -> ``capability_gap``: the procedure was present and did not change behaviour.
3. No procedural hit (residual):
   - the teacher read reference docs the student never opened before its first edit ->
     ``missing_knowledge`` (retrieval);
   - otherwise ``capability_gap``: the student had the procedure (localized, reproduced,
     edited, verified) and still failed, or never attempted the teacher's decisive edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillci.analyze.detectors import DetectContext, Hit
from skillci.analyze.models import EvidenceRef
from skillci.analyze.taxonomy import FailureClass, UpgradePath, info
from skillci.analyze.trajectory import ActionKind, Trajectory

F = FailureClass


@dataclass(frozen=True)
class Verdict:
    """A compileability decision for a non-compilable outcome."""

    failure_class: FailureClass
    upgrade_path: UpgradePath
    confidence: float
    rationale: str
    missing_action: str | None = None
    evidence: tuple[EvidenceRef, ...] = ()
    teacher_actions: tuple[str, ...] = ()


def _ev(t: Trajectory, step: int | None, note: str) -> EvidenceRef:
    role = "teacher" if t.role == "teacher" else "student"
    return EvidenceRef(run_id=t.run_id, role=role, step=step, note=note)


def repeated_with_rule_loaded(hit: Hit, signature: str, seen: set[tuple[str, str]]) -> bool:
    """Whether (class, signature) was already diagnosed in another repeat or an earlier round."""
    return (hit.failure_class.value, signature) in seen


def gap_with_procedure(hit: Hit, student: Trajectory) -> Verdict:
    """Rule 2: the covering rule was loaded and the same failure came back."""
    return Verdict(
        F.capability_gap,
        UpgradePath.fine_tune,
        round(min(0.9, hit.confidence), 3),
        f"The rule covering {hit.failure_class.value} was in the student's context and the "
        "same failure repeated; the skill cannot make the student do it.",
        missing_action=hit.missing_action,
        evidence=(*hit.evidence[:3], _ev(student, None, "failure_repeated_with_rule_loaded")),
    )


def residual(ctx: DetectContext) -> Verdict:
    """Rule 3: nothing procedural explains the failure."""
    s, t = ctx.student, ctx.teacher
    if t is not None:
        first_edit = t.milestones.first_edit
        docs = [
            a
            for a in t.before(first_edit)
            if a.kind is ActionKind.read_doc and not set(a.files) & set(s.read_files)
        ]
        if docs:
            return Verdict(
                F.missing_knowledge,
                UpgradePath.retrieval,
                0.6,
                "The teacher read reference documents the student never opened before making "
                "its fix; the gap is facts, not procedure.",
                missing_action="read_reference_doc",
                evidence=tuple(_ev(t, a.step, "reference_doc_read") for a in docs[:3]),
                teacher_actions=("read_reference_doc", "edit_source_file"),
            )
        sm = s.milestones
        followed = sm.reproduced is not None and sm.first_edit is not None
        same_file = bool(set(s.edited_files) & set(t.edited_files))
        if followed and same_file:
            why = (
                "The student reproduced the failure and edited the same file as the teacher, "
                "and its edit still failed: the decisive step is beyond it."
            )
            conf = 0.65
            shown: tuple[EvidenceRef, ...] = (
                _ev(s, sm.reproduced, "failure_reproduced"),
                _ev(s, sm.first_edit, "same_file_edited"),
            )
        else:
            why = (
                "No procedural gap was observed; the student never attempted the teacher's "
                "decisive edit."
            )
            conf = 0.5
            shown = ()
        return Verdict(
            F.capability_gap,
            UpgradePath.fine_tune,
            conf,
            why,
            missing_action="make_the_teachers_fix",
            evidence=(
                _ev(s, None, "student_failed"),
                *shown,
                _ev(t, t.milestones.last_edit, "teacher_decisive_edit"),
            ),
            teacher_actions=("edit_source_file", "run_target_test"),
        )
    return Verdict(
        F.capability_gap,
        UpgradePath.teacher_fallback,
        0.3,
        "No procedural gap was observed and no passing teacher trajectory is available to "
        "compare with; try the teacher on this task family.",
        evidence=(_ev(s, None, "student_failed"),),
    )


def environment_override(hits: list[Hit]) -> Hit | None:
    """Rule 1: an observed environment class, if any fired."""
    env = [h for h in hits if not info(h.failure_class).compilable]
    if not env:
        return None
    return min(env, key=lambda h: (info(h.failure_class).priority, -h.confidence))


__all__ = [
    "Verdict",
    "environment_override",
    "gap_with_procedure",
    "repeated_with_rule_loaded",
    "residual",
]
