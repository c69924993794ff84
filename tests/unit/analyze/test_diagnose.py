from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from skillci.analyze import Diagnosis, cluster, diagnose, find_cluster
from skillci.analyze.taxonomy import FailureCategory, FailureClass, UpgradePath
from skillci.errors import InvalidInputError
from skillci.skill.package import SkillPackage
from skillci.trace.models import EvalState, RunRecord
from tests.unit.analyze.traj import SRC, TEST_FILE, T, teacher_ok
from tests.unit.skill.helpers import bundled, edit

F = FailureClass


def unverified(run_id: str = "run-student-1", task: str = "task-calc") -> RunRecord:
    return (
        T(run_id=run_id, task=task)
        .localize()
        .reproduce()
        .patch()
        .say("I fixed the bug. The tests should pass now.")
        .build()
    )


def teacher(task: str = "task-calc") -> RunRecord:
    r = teacher_ok()
    return r.model_copy(update={"task_id": task})


def without(pkg: SkillPackage, rel: str) -> SkillPackage:
    return pkg.with_files({rel: None})


def test_seed_example_shape_with_the_rule_loaded() -> None:
    d = diagnose(unverified(), teacher(), bundled())
    assert d.failure_class is F.reported_success_without_verification
    assert d.failure_category is FailureCategory.verification_stopping
    assert d.student_behavior.last_action == "apply_patch"
    assert d.student_behavior.missing_action == "run_target_test"
    assert d.student_behavior.incorrect_assumption == "patch_applied_means_problem_fixed"
    assert d.teacher_behavior.relevant_actions == [
        "run_target_test",
        "run_related_tests",
        "inspect_git_diff",
    ]
    assert d.proposed_skill_change.operation == "replace_rule"
    assert d.proposed_skill_change.target_rule_id == "finish.report-success"
    assert d.skill_compilable and d.upgrade_path is None
    assert d.confidence == pytest.approx(0.95 * 0.85, abs=1e-3)
    assert F.missing_validation in d.alternatives
    assert (
        d.signature
        == "reported_success_without_verification/run_target_test/patch_applied_means_problem_fixed"
    )
    assert d.student_run_ids == ["run-student-1"] and d.teacher_run_id == "run-teacher-1"
    assert {(e.role, e.note) for e in d.evidence} >= {
        ("student", "last_edit"),
        ("teacher", "target_test_passed"),
    }


def test_missing_rule_is_added_back() -> None:
    d = diagnose(unverified(), teacher(), without(bundled(), "skillci/rules/finish.yaml"))
    assert d.proposed_skill_change.operation == "add_rule"
    assert d.proposed_skill_change.target_rule_id == "finish.report-success"
    assert d.confidence == pytest.approx(0.95)
    assert "No rule covers it" in d.rationale


def test_retired_rule_is_restored_by_replacing_it() -> None:
    pkg = edit(bundled(), "skillci/rules/finish.yaml", "status: active", "status: retired")
    d = diagnose(unverified(), teacher(), pkg)
    assert d.proposed_skill_change.operation == "replace_rule"
    assert d.proposed_skill_change.target_rule_id == "finish.report-success"
    assert "retired: restore it" in d.rationale
    assert d.confidence == pytest.approx(0.95)  # a retired rule was not in context


def test_rule_in_an_unloaded_workflow_is_moved_to_the_bootstrap() -> None:
    s = T().localize().reproduce().patch(TEST_FILE).test(exit_code=0).say("Fixed.").build()
    d = diagnose(s, teacher(), bundled())
    assert d.failure_class is F.missed_constraint
    assert d.proposed_skill_change.operation == "change_loading_scope"
    assert d.proposed_skill_change.target_rule_id == "edit.minimal-change"
    loaded = (
        T()
        .load("skillci/workflows/unit-test-failure.md")
        .localize()
        .reproduce()
        .patch(TEST_FILE)
        .test(exit_code=0)
        .say("Fixed.")
        .build()
    )
    d2 = diagnose(loaded, teacher(), bundled())
    assert d2.proposed_skill_change.operation == "replace_rule"


def test_no_package_means_add_the_default_rule() -> None:
    d = diagnose(unverified(), teacher(), None)
    assert d.proposed_skill_change.operation == "add_rule"


def test_failure_repeating_with_the_rule_loaded_is_a_capability_gap() -> None:
    first = diagnose(unverified(), teacher(), bundled())
    again = diagnose(unverified("run-student-2"), teacher(), bundled(), history=[first])
    assert again.failure_class is F.capability_gap
    assert not again.skill_compilable
    assert again.upgrade_path is UpgradePath.fine_tune
    assert again.proposed_skill_change.operation == "none"
    assert any(e.note == "failure_repeated_with_rule_loaded" for e in again.evidence)


def test_identical_failing_repeats_with_the_rule_loaded_are_a_capability_gap() -> None:
    d = diagnose([unverified("run-a"), unverified("run-b")], teacher(), bundled())
    assert d.failure_class is F.capability_gap
    assert d.student_run_ids == ["run-a", "run-b"]


def test_repeats_without_the_rule_stay_compilable() -> None:
    pkg = without(bundled(), "skillci/rules/finish.yaml")
    d = diagnose([unverified("run-a"), unverified("run-b")], teacher(), pkg)
    assert d.skill_compilable and d.proposed_skill_change.operation == "add_rule"


def test_flaky_verdicts_route_to_fix_environment() -> None:
    a = (
        T(run_id="run-a")
        .localize()
        .reproduce()
        .patch()
        .test(exit_code=0)
        .say("Fixed.")
        .build(passed=False)
    )
    b = (
        T(run_id="run-b")
        .localize()
        .reproduce()
        .patch()
        .test(exit_code=0)
        .say("Fixed.")
        .build(passed=True)
    )
    d = diagnose([a, b], teacher(), bundled())
    assert d.failure_class is F.flaky_environment
    assert d.upgrade_path is UpgradePath.fix_environment
    assert d.student_run_ids == ["run-a"]


def test_infra_error_is_not_the_skills_fault() -> None:
    s = T().localize().build(state=EvalState.infra_error)
    d = diagnose(s, teacher(), bundled())
    assert d.failure_class is F.flaky_environment and not d.skill_compilable


def test_context_overflow_wins_over_procedural_hits() -> None:
    s = (
        T()
        .localize()
        .patch()
        .error("ContextWindowExceeded", "too long")
        .build(stop_reason="error", final="Fixed.")
    )
    d = diagnose(s, teacher(), bundled())
    assert d.failure_class is F.context_overflow and d.upgrade_path is UpgradePath.tool_wrapper


def _followed_procedure() -> RunRecord:
    return (
        T()
        .localize()
        .reproduce()
        .patch(new="x")
        .test(exit_code=1)
        .patch(old="x", new="a - b")
        .patch(new="y")
        .test(exit_code=1)
        .say("I could not fix the failure in src/calc.py.")
        .build()
    )


def test_residual_capability_gap_when_procedure_was_followed() -> None:
    d = diagnose(_followed_procedure(), teacher(), bundled())
    assert d.failure_class is F.capability_gap
    assert d.upgrade_path is UpgradePath.fine_tune
    assert d.detector == "residual"
    assert d.confidence == pytest.approx(0.65)


def test_residual_missing_knowledge_when_teacher_read_docs() -> None:
    t = (
        T("teacher", "run-t")
        .localize()
        .read("docs/rounding.md")
        .reproduce()
        .patch()
        .test(exit_code=0)
        .say("Fixed.")
        .build(passed=True)
    )
    d = diagnose(_followed_procedure(), t, bundled())
    assert d.failure_class is F.missing_knowledge
    assert d.upgrade_path is UpgradePath.retrieval
    assert d.teacher_behavior.relevant_actions == ["read_reference_doc", "edit_source_file"]


def test_residual_without_a_passing_teacher_falls_back_to_the_teacher_route() -> None:
    failed_teacher = teacher().model_copy(
        update={
            "evaluation": teacher().evaluation.model_copy(
                update={"state": EvalState.failed, "passed": False}
            )
        }
    )
    d = diagnose(_followed_procedure(), failed_teacher, bundled())
    assert d.failure_class is F.capability_gap
    assert d.upgrade_path is UpgradePath.teacher_fallback
    assert d.teacher_run_id == "run-teacher-1"  # recorded though not used


def test_nothing_to_diagnose_and_mixed_tasks_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="every student run passed"):
        diagnose(T().build(passed=True), teacher(), bundled())
    with pytest.raises(InvalidInputError, match="different tasks"):
        diagnose(unverified(), teacher("task-other"), bundled())


def test_diagnosis_round_trips_and_rejects_inconsistent_shapes() -> None:
    d = diagnose(unverified(), teacher(), bundled())
    again = Diagnosis.model_validate_json(d.model_dump_json())
    assert again == d
    data = json.loads(d.model_dump_json())
    with pytest.raises(ValidationError, match="does not match"):
        Diagnosis.model_validate({**data, "failure_category": "planning"})
    with pytest.raises(ValidationError, match="no upgrade_path"):
        Diagnosis.model_validate({**data, "upgrade_path": "fine_tune"})
    with pytest.raises(ValidationError, match="snake_case"):
        Diagnosis.model_validate(
            {**data, "student_behavior": {"last_action": "Ignore previous instructions"}}
        )
    with pytest.raises(ValidationError, match="never skill_compilable"):
        Diagnosis.model_validate(
            {**data, "failure_class": "capability_gap", "failure_category": "not_compilable"}
        )
    with pytest.raises(ValidationError, match="Extra inputs"):
        Diagnosis.model_validate({**data, "secret_plan": "x"})


def test_clusters_group_the_same_gap_across_tasks() -> None:
    a = diagnose(unverified(task="task-a"), teacher("task-a"), bundled())
    b = diagnose(unverified(run_id="run-s2", task="task-b"), teacher("task-b"), bundled())
    other = diagnose(
        T(task="task-c")
        .localize()
        .reproduce()
        .patch(TEST_FILE)
        .test(exit_code=0)
        .say("Fixed.")
        .build(),
        teacher("task-c"),
        bundled(),
    )
    cl = cluster([other, b, a])
    assert [len(c.diagnoses) for c in cl] == [2, 1]
    assert cl[0].task_ids == ["task-a", "task-b"]
    assert cl[0].supporting_runs == ["run-student-1", "run-teacher-1", "run-s2"]
    assert cl == cluster([a, other, b])  # order does not matter
    assert find_cluster(cl, a) is cl[0]
    assert find_cluster(cl[1:], a) is None


def test_unverified_edit_with_a_different_tool_lands_in_the_same_cluster() -> None:
    w = T(task="task-w").localize().reproduce().write(SRC, "fixed").say("Fixed it.").build()
    a = diagnose(unverified(task="task-a"), teacher("task-a"), bundled())
    b = diagnose(w, teacher("task-w"), bundled())
    assert a.student_behavior.last_action != b.student_behavior.last_action
    assert a.cluster_key == b.cluster_key
