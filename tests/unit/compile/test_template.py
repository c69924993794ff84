from __future__ import annotations

import pytest

from skillci.analyze import Diagnosis, ProposedSkillChange, diagnose
from skillci.analyze.coverage import coverage
from skillci.analyze.taxonomy import TAXONOMY, FailureClass, category_of, info, is_compilable
from skillci.analyze.trajectory import Trajectory
from skillci.compile import CompileInput, TemplateCompiler, check_patch, untrusted_texts
from skillci.compile.observe import observe
from skillci.compile.rule_templates import CLASS_TEMPLATES, RULE_BASES
from skillci.errors import CompileError
from skillci.patch.apply import apply
from skillci.patch.models import AddRegressionTest, AddRule, ChangeLoadingScope, ReplaceRule
from skillci.skill.lint import lint
from skillci.skill.models import Lifecycle
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.skill.vague import find_vague
from tests.unit.analyze.traj import TEST_FILE, T, teacher_ok
from tests.unit.skill.helpers import bundled, edit

F = FailureClass
COMPILABLE = [c for c in TAXONOMY if is_compilable(c)]


def make_diagnosis(cls: FailureClass, pkg: SkillPackage | None, op: str | None = None) -> Diagnosis:
    cov = coverage(pkg, cls)
    return Diagnosis(
        task_id="task-calc",
        failure_class=cls,
        failure_category=category_of(cls),
        proposed_skill_change=ProposedSkillChange(
            operation=op or cov.operation,  # type: ignore[arg-type]
            target_rule_id=cov.target_rule_id,
            required_behavior="do_the_thing",
        ),
        confidence=0.9,
        skill_compilable=True,
        signature=f"{cls.value}/-/-",
        detector="test",
        student_run_ids=["run-student-1"],
        teacher_run_id="run-teacher-1",
    )


def without_rule(pkg: SkillPackage, rule_id: str) -> SkillPackage:
    lr = pkg.rule(rule_id)
    if lr is None:
        return pkg
    rules = pkg.rules_in(lr.file)
    if len(rules) == 1:
        return pkg.with_files({lr.file: None})
    from skillci.patch.models import Author, DeleteRule, Patch

    return apply(
        pkg,
        Patch(
            failure_class="x", author=Author(compiler="human"), ops=[DeleteRule(rule_id=rule_id)]
        ),
    )


def test_templates_cover_every_compilable_class_and_match_the_taxonomy() -> None:
    assert set(CLASS_TEMPLATES) == set(COMPILABLE)
    for cls, t in CLASS_TEMPLATES.items():
        assert t.rule_id == info(cls).default_rule_id, cls
        assert t.rule_id in RULE_BASES


def test_no_template_text_is_vague() -> None:
    texts = [s for b in RULE_BASES.values() for s in (*b.steps, *b.validation, *b.anti_patterns)]
    texts += [s for t in CLASS_TEMPLATES.values() for s in (*t.required, *t.reinforce)]
    assert [t for t in texts if find_vague(t)] == []


@pytest.mark.parametrize("cls", COMPILABLE, ids=lambda c: c.value)
@pytest.mark.parametrize("rule_present", [True, False], ids=["replace", "add"])
def test_every_class_compiles_to_a_patch_that_passes_limits_guard_and_lint(
    cls: FailureClass, rule_present: bool
) -> None:
    pkg = bundled()
    if not rule_present:
        pkg = without_rule(pkg, CLASS_TEMPLATES[cls].rule_id)
    d = make_diagnosis(cls, pkg, op="add_rule" if not rule_present else "replace_rule")
    out = TemplateCompiler().compile(CompileInput(d, pkg, teacher=teacher_ok()))
    patch = out.patch
    assert patch.id == patch.content_id() and patch.primary_failure_class == cls.value
    assert len(patch.ops) == 1
    op = patch.ops[0]
    exists = pkg.rule(CLASS_TEMPLATES[cls].rule_id) is not None
    assert isinstance(op, ReplaceRule if exists else AddRule)
    check, applied = check_patch(pkg, patch, untrusted_texts([teacher_ok()]))
    assert check.ok, check.problems()
    assert applied is not None
    sensitive = CLASS_TEMPLATES[cls].rule_id.startswith("security.")
    assert check.guard_verdict == ("needs-approval" if sensitive else "pass"), check.guard
    new = applied.after.rule(CLASS_TEMPLATES[cls].rule_id)
    assert new is not None and new.rule.status is Lifecycle.candidate
    steps = new.rule.instruction.steps
    assert all(s.replace("`", "").strip() for s in steps)
    assert lint(applied.after).errors == lint(pkg).errors


def test_removed_rule_comes_back_with_the_bundled_steps() -> None:
    pkg = bundled()
    original = pkg.rule("finish.report-success")
    assert original is not None
    cut = pkg.with_files({"skillci/rules/finish.yaml": None})
    s = T().localize().reproduce().patch().say("I fixed the bug.").build()
    d = diagnose(s, teacher_ok(), cut)
    out = TemplateCompiler().compile(CompileInput(d, cut, teacher=teacher_ok(), students=[s]))
    op = out.patch.ops[0]
    assert isinstance(op, AddRule)
    # the teacher checked with `git status`, so the diff step names it; the rest is the bundle's
    assert op.rule.instruction.steps == [
        "rerun_the_failing_test_after_every_edit",
        "if_exit_code_is_not_0_revert_or_change_the_edit_and_rerun",
        "run_git_status_and_confirm_only_the_target_source_file_changed",
        "report_success_only_after_the_target_test_exits_0",
    ]
    assert op.rule.anti_patterns == original.rule.anti_patterns
    assert op.rule.scope.workflow is None and op.rule.scope.tools == ["run"]
    check, applied = check_patch(cut, out.patch, untrusted_texts([s, teacher_ok()]))
    assert check.ok and check.guard_verdict == "pass", check.problems()
    assert applied is not None
    boot = render(applied.after).files[0].content.decode()
    assert "report_success_only_after_the_target_test_exits_0" in boot


def test_restored_behaviours_switch_on_in_the_simulated_student() -> None:
    from skillci.providers.sim.skilltext import behaviours

    cut = bundled().with_files({"skillci/rules/finish.yaml": None})
    before = behaviours(render(cut).files[0].content.decode())
    d = make_diagnosis(F.reported_success_without_verification, cut)
    out = TemplateCompiler().compile(CompileInput(d, cut, teacher=teacher_ok()))
    after = behaviours(render(apply(cut, out.patch)).files[0].content.decode())
    assert (before.verify, before.retry, before.check_diff) == (False, False, False)
    assert (after.verify, after.retry, after.check_diff) == (True, True, True)


def test_retired_rule_is_restored() -> None:
    pkg = edit(bundled(), "skillci/rules/finish.yaml", "status: active", "status: retired")
    d = make_diagnosis(F.missing_validation, pkg)
    out = TemplateCompiler().compile(CompileInput(d, pkg))
    op = out.patch.ops[0]
    assert isinstance(op, ReplaceRule) and op.rule_id == "finish.report-success"
    assert out.notes[0] == "restore retired rule finish.report-success"
    lr = apply(pkg, out.patch).rule("finish.report-success")
    assert lr is not None and lr.rule.status is Lifecycle.candidate


def test_loaded_rule_gets_a_reinforcing_step_then_gives_up() -> None:
    pkg = bundled()
    d = make_diagnosis(F.reported_success_without_verification, pkg)
    out = TemplateCompiler().compile(CompileInput(d, pkg))
    op = out.patch.ops[0]
    assert isinstance(op, ReplaceRule)
    steps = op.rule.instruction.steps
    assert steps[-2:] == [
        "never_report_success_without_a_passing_target_test_run_after_the_last_edit",
        "report_success_only_after_the_target_test_exits_0",
    ]
    stronger = apply(pkg, out.patch)
    with pytest.raises(CompileError, match="already carries every step"):
        TemplateCompiler().compile(CompileInput(d, stronger))


def test_required_step_is_inserted_before_the_report_step() -> None:
    pkg = bundled()
    d = make_diagnosis(F.verified_wrong_target, pkg)
    op = TemplateCompiler().compile(CompileInput(d, pkg)).patch.ops[0]
    assert isinstance(op, ReplaceRule)
    assert op.rule.instruction.steps[-2:] == [
        "verify_with_the_failing_test_id_from_the_ci_log",
        "report_success_only_after_the_target_test_exits_0",
    ]
    assert "verified_wrong_target" in op.rule.anti_patterns


def test_unloaded_workflow_rule_is_moved_to_the_bootstrap() -> None:
    pkg = bundled()
    s = T().localize().reproduce().patch(TEST_FILE).test(exit_code=0).say("Fixed.").build()
    d = diagnose(s, teacher_ok(), pkg)
    out = TemplateCompiler().compile(CompileInput(d, pkg, teacher=teacher_ok()))
    op = out.patch.ops[0]
    assert (
        isinstance(op, ChangeLoadingScope)
        and op.rule_id == "edit.minimal-change"
        and op.to == "SKILL.md"
    )
    check, _ = check_patch(pkg, out.patch, untrusted_texts([s]))
    assert check.ok, check.problems()


def test_teacher_shapes_are_allowlisted() -> None:
    unittest_teacher = (
        T("teacher", "run-t")
        .localize()
        .run("python -m unittest tests.test_calc.TestAdd.test_add", 1)
        .patch()
        .run("python -m unittest tests.test_calc.TestAdd.test_add", 0)
        .run("python -m pytest -q", 0)
        .run("git diff", 0)
        .build(passed=True)
    )
    obs = observe(Trajectory.from_record(unittest_teacher))
    assert obs.test_command == "python -m unittest <test id>"
    assert obs.diff_cmd == "git_diff"
    assert obs.related_scope == "the_whole_suite"
    pkg = without_rule(bundled(), "test.run-smallest-first")
    d = make_diagnosis(F.ignored_exit_code, pkg)
    op = TemplateCompiler().compile(CompileInput(d, pkg, teacher=unittest_teacher)).patch.ops[0]
    assert isinstance(op, AddRule)
    assert (
        op.rule.instruction.steps[0]
        == "run_the_single_failing_test_with `python -m unittest <test id>`"
    )
    assert op.rule.scope.workflow == "unit-test-failure"


def test_regression_task_op_and_determinism() -> None:
    pkg = without_rule(bundled(), "finish.report-success")
    d = make_diagnosis(F.missing_validation, pkg)
    a = TemplateCompiler().compile(CompileInput(d, pkg, regression_task="task-calc")).patch
    b = TemplateCompiler().compile(CompileInput(d, pkg, regression_task="task-calc")).patch
    assert a.id == b.id
    assert isinstance(a.ops[1], AddRegressionTest) and a.ops[1].task_id == "task-calc"
    check, applied = check_patch(pkg, a)
    assert check.ok, check.problems()
    assert applied is not None and "task-calc" in applied.after.eval_list("regression").tasks


def test_not_compilable_diagnosis_is_refused() -> None:
    s = (
        T()
        .localize()
        .build(
            state=__import__("skillci.trace.models", fromlist=["EvalState"]).EvalState.infra_error
        )
    )
    d = diagnose(s, teacher_ok(), bundled())
    with pytest.raises(CompileError, match="not compilable"):
        TemplateCompiler().compile(CompileInput(d, bundled()))


def test_a_step_loading_a_missing_recovery_file_is_dropped() -> None:
    pkg = without_rule(bundled(), "recovery.no-repeat-failing-call").with_files(
        {"skillci/recovery/repeated-failure.md": None}
    )
    d = make_diagnosis(F.repeated_identical_call, pkg)
    op = TemplateCompiler().compile(CompileInput(d, pkg)).patch.ops[0]
    assert isinstance(op, AddRule)
    assert op.rule.instruction.steps == [
        "stop_repeating_the_identical_command",
        "change_one_input_of_the_command_before_running_it_again",
    ]
