"""Verification and stopping detectors: what happened after the last edit."""

from __future__ import annotations

from skillci.analyze.classify import (
    ACTION_NAMES,
)
from skillci.analyze.detectors.base import (
    LOOP_TAIL,
    DetectContext,
    F,
    Hit,
    action_name,
    bonus,
    clip,
    ref,
    teacher_after_last_edit,
)
from skillci.analyze.trajectory import (
    runs_target,
)

# ---------------------------------------------------------------------------- verification


def detect_reported_success_without_verification(ctx: DetectContext) -> Hit | None:
    """Edited, then claimed success with no test run at all after the last edit."""
    s = ctx.student
    m = s.milestones
    if m.last_edit is None or not s.claims_success or not s.finished_voluntarily:
        return None
    if any(a.is_test for a in s.after(m.last_edit)):
        return None
    last = next(a for a in reversed(s.actions) if a.step == m.last_edit)
    ev = [ref(s, m.last_edit, "last_edit"), ref(s, s.final_step, "success_claimed")]
    teacher_ok = False
    if ctx.teacher is not None and ctx.teacher.milestones.target_test_passed is not None:
        teacher_ok = True
        ev.append(ref(ctx.teacher, ctx.teacher.milestones.target_test_passed, "target_test_passed"))
    return Hit(
        F.reported_success_without_verification,
        clip(0.9 + bonus(ctx, teacher_ok)),
        "report_success_only_after_the_target_test_exits_0",
        last_action=action_name(last),
        missing_action="run_target_test",
        incorrect_assumption="patch_applied_means_problem_fixed",
        teacher_actions=teacher_after_last_edit(ctx.teacher) if ctx.teacher else (),
        evidence=tuple(ev),
        rationale="The student changed files and reported success without running any check afterwards.",
    )


def detect_missing_validation(ctx: DetectContext) -> Hit | None:
    """Edited, then stopped on its own without re-running any test."""
    s = ctx.student
    m = s.milestones
    if m.last_edit is None or not s.finished_voluntarily:
        return None
    if any(a.is_test for a in s.after(m.last_edit)):
        return None
    last = next(a for a in reversed(s.actions) if a.step == m.last_edit)
    teacher_ok = ctx.teacher is not None and ctx.teacher.milestones.verified is not None
    ev = [ref(s, m.last_edit, "last_edit_not_followed_by_a_test_run")]
    if teacher_ok and ctx.teacher is not None:
        ev.append(ref(ctx.teacher, ctx.teacher.milestones.verified, "test_run_after_edit"))
    return Hit(
        F.missing_validation,
        clip(0.8 + bonus(ctx, teacher_ok)),
        "rerun_the_failing_test_after_every_edit",
        last_action=action_name(last),
        missing_action="run_target_test",
        incorrect_assumption="patch_applied_means_problem_fixed",
        teacher_actions=teacher_after_last_edit(ctx.teacher) if ctx.teacher else (),
        evidence=tuple(ev),
        rationale="The student changed files and never ran a check after its last edit.",
    )


def detect_verified_wrong_target(ctx: DetectContext) -> Hit | None:
    """After the last edit only tests other than the target ran (and passed)."""
    s = ctx.student
    m = s.milestones
    targets = ctx.teacher.targets if ctx.teacher and ctx.teacher.targets else s.targets
    if m.last_edit is None or not targets:
        return None
    runs = [a for a in s.after(m.last_edit) if a.is_test]
    if not runs:
        return None
    if any(runs_target(a, targets) for a in runs):
        return None
    passing = [a for a in runs if a.ok]
    if not passing:
        return None
    ev = [ref(s, a.step, "non_target_test_run") for a in passing[:3]]
    if ctx.teacher is not None and ctx.teacher.milestones.target_test_passed is not None:
        ev.append(ref(ctx.teacher, ctx.teacher.milestones.target_test_passed, "target_test_passed"))
    return Hit(
        F.verified_wrong_target,
        clip(0.8 + (0.05 if s.claims_success else 0.0)),
        "verify_with_the_failing_test_id_from_the_ci_log",
        last_action="run_target_test",
        missing_action="run_the_failing_test_id",
        incorrect_assumption="any_passing_test_proves_the_fix",
        teacher_actions=("run_target_test",),
        evidence=tuple(ev),
        rationale="After its last edit the student only ran tests other than the failing one.",
    )


def detect_premature_stop(ctx: DetectContext) -> Hit | None:
    """Stopped on its own without any edit and before reading the file the teacher fixed."""
    s, t = ctx.student, ctx.teacher
    if t is None or not s.finished_voluntarily or s.claims_success:
        return None
    sm, tm = s.milestones, t.milestones
    if tm.first_edit is None or sm.first_edit is not None or any(a.is_edit for a in s.actions):
        return None
    if set(s.read_files) & set(t.edited_files):
        # it reached the file the teacher fixed and still made no edit: that is not a
        # stop rule missing but an edit it cannot find (residual: capability gap)
        return None
    return Hit(
        F.premature_stop,
        0.75,
        "continue_until_the_target_test_exits_0_or_the_step_budget_ends",
        last_action=action_name(s.actions[-1]) if s.actions else None,
        missing_action="edit_source_file",
        incorrect_assumption="partial_progress_is_enough_to_stop",
        teacher_actions=tuple(
            dict.fromkeys(
                ACTION_NAMES[a.kind] for a in t.after(tm.reproduced) if a.is_edit or a.is_test
            )
        )[:6],
        evidence=(
            ref(s, s.final_step, "stopped_before_any_edit"),
            ref(t, tm.first_edit, "teacher_edited"),
        ),
        rationale="The student stopped without changing anything; the teacher went on to fix it.",
    )


def detect_no_replan_after_failure(ctx: DetectContext) -> Hit | None:
    """A test run after its only edit failed, and the student never changed the edit."""
    s = ctx.student
    m = s.milestones
    if m.last_edit is None:
        return None
    distinct_edits = {(a.key, a.content_digest) for a in s.edits if a.ok}
    if len(distinct_edits) > 1:
        return None  # it did try something else: not this class
    first_edit_step = m.first_edit
    tests_after = [a for a in s.after(first_edit_step) if a.is_test]
    if not tests_after or not tests_after[0].failed:
        return None
    if any(a.ok for a in tests_after):
        return None
    t = ctx.teacher
    if t is not None and t.edited_files and not set(s.edited_files) & set(t.edited_files):
        return None  # the edit was in the wrong file: re-planning it cannot help
    replanned = False
    if t is not None:
        for a in t.test_runs:
            if (
                a.failed
                and t.milestones.first_edit is not None
                and a.step > t.milestones.first_edit
            ):
                replanned = any(e.is_edit and e.step > a.step for e in t.actions)
                break
    return Hit(
        F.no_replan_after_failure,
        clip(0.85 + (0.05 if replanned else 0.0)),
        "if_exit_code_is_not_0_revert_or_change_the_edit_and_rerun",
        last_action=action_name(tests_after[-1]),
        missing_action="revert_or_change_the_edit",
        incorrect_assumption="the_first_edit_must_be_right",
        teacher_actions=("run_target_test", "edit_source_file", "run_target_test") if t else (),
        evidence=(
            ref(s, first_edit_step, "only_edit"),
            ref(s, tests_after[0].result_step or tests_after[0].step, "test_failed_after_edit"),
        ),
        rationale=f"The test failed after the student's only edit and it made {len(tests_after) - 1} more test run(s) without changing the edit.",
        details={"test_runs_after_edit": len(tests_after)},
    )


def detect_loop_without_stop(ctx: DetectContext) -> Hit | None:
    """Ran into the step limit while cycling through the same few calls."""
    s = ctx.student
    if not s.hit_step_limit or len(s.actions) < LOOP_TAIL:
        return None
    tail = s.actions[-LOOP_TAIL:]
    distinct = len({a.key for a in tail})
    if distinct > LOOP_TAIL // 2:
        return None
    return Hit(
        F.loop_without_stop,
        0.8,
        "stop_and_load_recovery_after_two_identical_failures",
        last_action=action_name(tail[-1]),
        missing_action="change_strategy_or_stop",
        incorrect_assumption="repeating_the_same_steps_will_eventually_work",
        evidence=(ref(s, tail[0].step, "loop_start"), ref(s, tail[-1].step, "step_limit_reached")),
        rationale=f"The last {LOOP_TAIL} actions used only {distinct} distinct calls until the step limit.",
        details={"distinct_calls_in_tail": distinct},
    )


def detect_skipped_related_tests(ctx: DetectContext) -> Hit | None:
    """Only the single target test was re-run; the teacher also ran its whole test file."""
    s, t = ctx.student, ctx.teacher
    if t is None:
        return None
    sm, tm = s.milestones, t.milestones
    if sm.target_test_passed is None or sm.related_tests_passed is not None:
        return None
    if tm.related_tests_passed is None:
        return None
    return Hit(
        F.skipped_related_tests,
        0.8,
        "after_the_target_test_passes_run_the_whole_test_file_of_that_test",
        last_action="run_target_test",
        missing_action="run_related_tests",
        incorrect_assumption="one_passing_test_proves_the_change_is_safe",
        teacher_actions=("run_target_test", "run_related_tests"),
        evidence=(
            ref(s, sm.target_test_passed, "only_target_test_run"),
            ref(t, tm.related_tests_passed, "related_tests_passed"),
        ),
        rationale="The student verified only the single target test; the teacher also ran the tests around it.",
    )


def detect_unchecked_workspace_changes(ctx: DetectContext) -> Hit | None:
    """Verified, but never looked at git status/diff; the teacher did and the student failed."""
    s, t = ctx.student, ctx.teacher
    if t is None:
        return None
    sm, tm = s.milestones, t.milestones
    if sm.target_test_passed is None or sm.diff_inspected is not None:
        return None
    if tm.diff_inspected is None:
        return None
    return Hit(
        F.unchecked_workspace_changes,
        0.75,
        "run_git_status_and_confirm_only_the_target_source_file_changed",
        last_action="run_target_test",
        missing_action="inspect_git_diff",
        incorrect_assumption="a_passing_test_means_the_workspace_is_clean",
        teacher_actions=("run_target_test", "inspect_git_diff"),
        evidence=(
            ref(s, sm.target_test_passed, "verified_without_diff_check"),
            ref(t, tm.diff_inspected, "inspected_git_diff"),
        ),
        rationale="The student's target test passed but it never checked which files changed; the teacher did.",
    )


__all__ = [
    "detect_loop_without_stop",
    "detect_missing_validation",
    "detect_no_replan_after_failure",
    "detect_premature_stop",
    "detect_reported_success_without_verification",
    "detect_skipped_related_tests",
    "detect_unchecked_workspace_changes",
    "detect_verified_wrong_target",
]
