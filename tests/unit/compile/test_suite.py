from __future__ import annotations

from skillci.analyze.taxonomy import FailureClass
from skillci.compile import TemplateCompiler
from skillci.compile.suite import SuiteProposal, candidate_of, propose_suite
from tests.unit.compile.test_loop import ScriptedStudent, Teacher, cut

F = FailureClass


def test_one_patch_serves_the_cluster_and_is_validated_on_every_member() -> None:
    student, teacher = ScriptedStudent(), Teacher()
    pkg = cut("skillci/rules/finish.yaml")
    res = propose_suite(
        ["task-a", "task-b", "task-c"],
        pkg,
        run_student=student,
        run_teacher=teacher,
        compiler=TemplateCompiler(),
    )
    s = res.suite
    assert [c.failure_class for c in s.clusters] == [F.reported_success_without_verification]
    cp = s.clusters[0]
    assert cp.members == ["task-a", "task-b", "task-c"] and cp.representative == "task-a"
    assert cp.status == "proposed" and len(cp.patches) == 1 and cp.validated
    assert sorted(cp.validation) == ["task-a", "task-b", "task-c"]
    assert teacher.calls == 1  # one teacher run for the whole cluster
    # 3 baselines + 1 re-run of the representative + 2 member validations
    assert student.calls == 6 and s.cost.student_runs == 6 and s.cost.teacher_runs == 1
    assert len(s.proposals) == 1 and s.proposals[0].before is not None
    cand = res.candidates[(cp.failure_class.value, cp.signature)]
    assert candidate_of(pkg, cp.patches).content_hash == cand.content_hash == cp.candidate_hash
    assert SuiteProposal.model_validate_json(s.model_dump_json()) == s


def test_a_member_the_patch_does_not_fix_fails_validation() -> None:
    student = ScriptedStudent(unverified_tasks=frozenset({"task-c"}))
    res = propose_suite(
        ["task-a", "task-b", "task-c"],
        cut("skillci/rules/finish.yaml"),
        run_student=student,
        run_teacher=Teacher(),
        compiler=TemplateCompiler(),
    )
    cp = res.suite.clusters[0]
    assert cp.status == "proposed" and not cp.validated
    assert {t: v.passed for t, v in cp.validation.items()} == {
        "task-a": 1,
        "task-b": 1,
        "task-c": 0,
    }


def test_passing_tasks_form_no_cluster() -> None:
    teacher = Teacher()
    res = propose_suite(
        ["task-a"],
        cut(),
        run_student=ScriptedStudent(),
        run_teacher=teacher,
        compiler=TemplateCompiler(),
    )
    assert (
        res.suite.clusters == [] and teacher.calls == 0 and res.suite.baseline["task-a"].passed == 1
    )
