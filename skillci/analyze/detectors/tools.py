"""Tool-use detectors: exit codes, identical repeats, wrong tools, argument errors."""

from __future__ import annotations

from collections.abc import Sequence

from skillci.analyze.classify import (
    READ_TOOLS,
    SEARCH_TOOLS,
    ActionKind,
)
from skillci.analyze.detectors.base import (
    ARG_ERRORS_MIN,
    REPEAT_MIN_FAILING,
    REPEAT_MIN_OK,
    SHELL_STANDINS_MIN,
    DetectContext,
    F,
    Hit,
    action_name,
    ref,
    teacher_after_last_edit,
)
from skillci.analyze.trajectory import (
    Action,
)

# ---------------------------------------------------------------------------- tool use


def detect_ignored_exit_code(ctx: DetectContext) -> Hit | None:
    """Claimed success although the last test run (or an edit call) after the last edit failed."""
    s = ctx.student
    if not s.claims_success or not s.finished_voluntarily:
        return None
    m = s.milestones
    failed_edit = next((a for a in reversed(s.edits) if a.failed), None)
    tests = [a for a in s.after(m.last_edit) if a.is_test] if m.last_edit is not None else []
    if failed_edit is not None and (m.last_edit is None or failed_edit.step > m.last_edit):
        bad = failed_edit
        note = "edit_failed_then_success_claimed"
    elif tests and tests[-1].failed:
        bad = tests[-1]
        note = "test_failed_then_success_claimed"
    else:
        return None
    return Hit(
        F.ignored_exit_code,
        0.9,
        "treat_a_nonzero_exit_code_as_failure_and_fix_before_reporting",
        last_action=action_name(bad),
        missing_action="check_exit_code_of_the_last_test_run",
        incorrect_assumption="command_ran_means_it_passed",
        teacher_actions=teacher_after_last_edit(ctx.teacher) if ctx.teacher else (),
        evidence=(
            ref(s, bad.result_step or bad.step, note),
            ref(s, s.final_step, "success_claimed"),
        ),
        rationale="The student reported success although its last check returned a nonzero exit code.",
    )


def _runs_of_identical(actions: Sequence[Action]) -> list[list[Action]]:
    runs: list[list[Action]] = []
    for a in actions:
        if (
            runs
            and runs[-1][-1].key == a.key
            and runs[-1][-1].output_digest == a.output_digest
            and (runs[-1][-1].exit_code == a.exit_code)
        ):
            runs[-1].append(a)
        else:
            runs.append([a])
    return runs


def detect_repeated_identical_call(ctx: DetectContext) -> Hit | None:
    """Back-to-back identical calls that got the identical (failing) result."""
    s = ctx.student
    best: list[Action] | None = None
    for run in _runs_of_identical(s.actions):
        need = REPEAT_MIN_FAILING if run[0].failed else REPEAT_MIN_OK
        if len(run) >= need and (best is None or len(run) > len(best)):
            best = run
    if best is None:
        return None
    failing = best[0].failed
    return Hit(
        F.repeated_identical_call,
        0.85 if failing else 0.7,
        "change_one_input_of_a_failed_command_before_running_it_again",
        last_action=action_name(best[-1]),
        missing_action="change_the_command_or_load_recovery",
        incorrect_assumption="the_same_call_may_give_a_different_result",
        evidence=tuple(ref(s, a.step, "identical_call") for a in best[:4]),
        rationale=f"The student made the same call {len(best)} times in a row with the same result.",
        details={"repeats": len(best)},
    )


def detect_wrong_tool(ctx: DetectContext) -> Hit | None:
    """Unknown tools, or shell stand-ins for dedicated tools the teacher used."""
    s, t = ctx.student, ctx.teacher
    unknown = [a for a in s.actions if a.kind is ActionKind.other and a.failed]
    standins = [
        a
        for a in s.actions
        if a.kind in (ActionKind.shell_read, ActionKind.shell_search, ActionKind.shell_list)
    ]
    teacher_dedicated = t is not None and any(
        a.tool in READ_TOOLS | SEARCH_TOOLS | {"list_files"} for a in t.actions
    )
    teacher_shell = t is not None and any(
        a.kind in (ActionKind.shell_read, ActionKind.shell_search, ActionKind.shell_list)
        for a in t.actions
    )
    harmful = [a for a in standins if a.failed or a.truncated]
    if unknown:
        bad = unknown
        why = f"{len(unknown)} call(s) to tools the harness does not offer"
    elif len(standins) >= SHELL_STANDINS_MIN and (
        (teacher_dedicated and not teacher_shell) or len(harmful) >= SHELL_STANDINS_MIN
    ):
        bad = standins
        why = f"{len(standins)} shell stand-ins for read_file/search_code/list_files"
    else:
        return None
    return Hit(
        F.wrong_tool,
        0.65 if unknown or teacher_dedicated else 0.55,
        "use_read_file_search_code_and_list_files_instead_of_shell_commands_for_them",
        last_action=action_name(bad[-1]),
        missing_action="use_the_dedicated_tool",
        incorrect_assumption="any_tool_that_prints_text_is_equivalent",
        teacher_actions=("read_file", "search_code") if teacher_dedicated else (),
        evidence=tuple(ref(s, a.step, "wrong_tool_call") for a in bad[:4]),
        rationale=f"The student made {why}.",
        details={"calls": len(bad)},
    )


def detect_incomplete_arguments(ctx: DetectContext) -> Hit | None:
    """Tool-level errors (bad or missing arguments), not command failures."""
    s = ctx.student
    errs = [
        a
        for a in s.actions
        if a.error is not None
        and a.result_step is not None
        and a.exit_code is None
        and a.kind is not ActionKind.other
    ]
    if len(errs) < ARG_ERRORS_MIN:
        return None
    return Hit(
        F.incomplete_arguments,
        0.7,
        "pass_every_required_argument_named_in_the_tool_description",
        last_action=action_name(errs[-1]),
        missing_action="complete_the_tool_arguments",
        incorrect_assumption="tools_fill_in_missing_arguments",
        evidence=tuple(ref(s, a.result_step, "tool_argument_error") for a in errs[:4]),
        rationale=f"{len(errs)} tool calls failed at the tool level (arguments), not in the command.",
        details={"tool_errors": len(errs)},
    )


__all__ = [
    "detect_ignored_exit_code",
    "detect_incomplete_arguments",
    "detect_repeated_identical_call",
    "detect_wrong_tool",
]
