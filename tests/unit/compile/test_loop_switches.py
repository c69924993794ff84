"""The bench's ablation switches inside the propose loop: each one changes what the loop does.

Same scripted student and teacher as test_loop.py: the student's habits follow the skill
text, so the loop really repairs (or does not repair) the task.
"""

from __future__ import annotations

from skillci.analyze.taxonomy import FailureClass
from skillci.compile import TemplateCompiler, propose_task
from skillci.compile.loop import GENERIC_CLASS, NORMAL_LOOP, LoopSwitches, ProposeResult
from skillci.patch.limits import BUDGET_LIMITS, SIZE_LIMITS
from skillci.skill.package import MANIFEST, SkillPackage
from tests.unit.compile.test_loop import ScriptedStudent, Teacher, cut
from tests.unit.skill.helpers import edit

F = FailureClass
DROPPED = "skillci/rules/finish.yaml"


def run(
    switches: LoopSwitches = NORMAL_LOOP, *, pkg: SkillPackage | None = None
) -> tuple[ProposeResult[str], Teacher]:
    teacher = Teacher()
    res = propose_task(
        "task-calc",
        pkg or cut(DROPPED),
        run_student=ScriptedStudent(),
        run_teacher=teacher,
        compiler=TemplateCompiler(),
        switches=switches,
    )
    return res, teacher


def test_default_switches_are_the_normal_loop() -> None:
    res, teacher = run()
    p = res.proposal
    assert p.status == "proposed" and teacher.calls == 1 and p.teacher_run_id
    assert p.rounds[0].diagnosis.detector != "forced"
    assert p.failure_class == F.reported_success_without_verification.value


def test_no_teacher_diff_never_calls_the_teacher() -> None:
    res, teacher = run(LoopSwitches(teacher=False))
    p = res.proposal
    assert teacher.calls == 0 and p.cost.teacher_runs == 0 and p.teacher_run_id is None
    assert p.rounds, p.reason  # the loop still diagnosed, from the student alone
    assert all(r.diagnosis.teacher_run_id is None for r in p.rounds)
    assert "run-teacher-1" not in [r.run_id for r in res.runs]


def test_no_taxonomy_gives_every_round_the_generic_class() -> None:
    res, _ = run(LoopSwitches(taxonomy=False))
    p = res.proposal
    assert p.rounds and all(r.diagnosis.failure_class is GENERIC_CLASS for r in p.rounds)
    assert all(r.diagnosis.detector == "forced" for r in p.rounds)
    normal, _ = run()
    assert normal.proposal.failure_class != GENERIC_CLASS.value


def test_lifted_patch_limits_let_an_oversized_patch_through() -> None:
    tight = edit(cut(DROPPED), MANIFEST, "max_new_rules: 2", "max_new_rules: 0")
    normal, _ = run(pkg=tight)
    assert normal.proposal.status == "out_of_limits", normal.proposal.reason
    lifted, _ = run(LoopSwitches(lifted_limits=SIZE_LIMITS), pkg=tight)
    p = lifted.proposal
    assert p.status == "proposed", p.reason
    check = p.rounds[0].check
    assert check is not None and check.limits is not None
    assert "max_new_rules (lifted)" in [r.limit for r in check.limits.results]
    # lifting the token budget does not lift the size limits
    budget_only, _ = run(LoopSwitches(lifted_limits=BUDGET_LIMITS), pkg=tight)
    assert budget_only.proposal.status == "out_of_limits"


def test_random_patches_draw_the_class_from_the_seed() -> None:
    a, teacher = run(LoopSwitches(random_seed=0))
    b, _ = run(LoopSwitches(random_seed=0))
    classes = [r.diagnosis.failure_class for r in a.proposal.rounds]
    assert classes and classes == [r.diagnosis.failure_class for r in b.proposal.rounds]
    assert all(r.diagnosis.detector == "forced" for r in a.proposal.rounds)
    assert teacher.calls == 1  # still a full loop: teacher, compiler, limits, guard
    draws = {
        tuple(
            r.diagnosis.failure_class for r in run(LoopSwitches(random_seed=s))[0].proposal.rounds
        )
        for s in range(6)
    }
    assert len(draws) > 1  # the seed matters
    for r in a.proposal.rounds:
        assert r.check is None or r.check.limits is not None  # through the same check
