"""The fixed failure taxonomy: five categories of compilable gaps plus non-compilable kinds.

A failure class names an *observable* behavioural gap, never "the student reasons badly":
each compilable class is detected from tool calls, tool results and the final answer, and
maps to a rule a skill can carry (see ``skillci.compile.rule_templates``). The non-compilable
kinds name gaps no procedure closes; they carry the upgrade path to take instead.

The taxonomy is fixed on purpose: clustering, patch ``failure_class`` labels, PR labels and
the gate's per-class metrics all key on these names. Adding a class is a schema change
(bump ``skillci.analyze.models.DIAGNOSIS_SCHEMA_VERSION``); see docs/design/050.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class FailureCategory(enum.StrEnum):
    """The five compilable categories of the seed essay, plus ``not_compilable``."""

    task_understanding = "task_understanding"
    planning = "planning"
    tool_use = "tool_use"
    state_management = "state_management"
    verification_stopping = "verification_stopping"
    not_compilable = "not_compilable"


class FailureClass(enum.StrEnum):
    """Concrete failure subclasses (snake_case, used as labels everywhere)."""

    # task understanding
    missed_constraint = "missed_constraint"
    wrong_target_file = "wrong_target_file"
    scope_creep = "scope_creep"
    followed_injected_instruction = "followed_injected_instruction"
    secret_in_final_answer = "secret_in_final_answer"  # noqa: S105 - a class name
    # planning
    scanning_before_localization = "scanning_before_localization"
    editing_before_reproduction = "editing_before_reproduction"
    no_replan_after_failure = "no_replan_after_failure"
    # tool use
    wrong_tool = "wrong_tool"
    incomplete_arguments = "incomplete_arguments"
    ignored_exit_code = "ignored_exit_code"
    repeated_identical_call = "repeated_identical_call"
    # state management
    lost_state = "lost_state"
    # verification / stopping
    missing_validation = "missing_validation"
    reported_success_without_verification = "reported_success_without_verification"
    verified_wrong_target = "verified_wrong_target"
    skipped_related_tests = "skipped_related_tests"
    unchecked_workspace_changes = "unchecked_workspace_changes"
    premature_stop = "premature_stop"
    loop_without_stop = "loop_without_stop"
    # not compilable
    missing_knowledge = "missing_knowledge"
    capability_gap = "capability_gap"
    context_overflow = "context_overflow"
    flaky_environment = "flaky_environment"
    harness_failure = "harness_failure"


class UpgradePath(enum.StrEnum):
    """Where a non-compilable gap goes instead of the skill (essay: skill -> retrieval ->
    tool augmentation -> fine-tune; teacher fallback for high-risk/long-tail tasks)."""

    retrieval = "retrieval"
    """The student lacks facts: give it a retrieval source, not more rules."""
    tool_wrapper = "tool_wrapper"
    """A tool should return less/more structured data (e.g. a slice instead of a whole log)."""
    fine_tune = "fine_tune"
    """The procedure is present and followed, the decisive step is beyond the student."""
    teacher_fallback = "teacher_fallback"
    """Route this task family to the teacher model."""
    fix_environment = "fix_environment"
    """The verifier or environment is not deterministic: fix it before judging any skill."""
    fix_harness = "fix_harness"
    """The model route, its server or the agent harness failed the run (no tool calls, tools
    dropped, output cut by the token limit, a context error below the window): fix the route,
    ``tool_choice`` or the server, then judge the skill."""


@dataclass(frozen=True)
class ClassInfo:
    """Static facts about one failure class."""

    category: FailureCategory
    summary: str
    """One line for people (PR bodies, CLI)."""
    aliases: tuple[str, ...] = ()
    """Anti-pattern names that mean this class in a rule's ``anti_patterns``."""
    default_rule_id: str | None = None
    """The rule that carries the fix in the bundled skill layout (None: not compilable)."""
    upgrade_path: UpgradePath | None = None
    """Default route when the class is not compilable."""
    priority: int = 50
    """Tie-break when several detectors fire with equal confidence (lower wins): the
    more specific or more decisive class first."""

    @property
    def compilable(self) -> bool:
        return self.category is not FailureCategory.not_compilable


C = FailureCategory
TAXONOMY: dict[FailureClass, ClassInfo] = {
    FailureClass.missed_constraint: ClassInfo(
        C.task_understanding,
        "edited files the task forbids (tests, files outside the target)",
        ("editing_tests_to_make_them_pass", "edit_forbidden_file"),
        "edit.minimal-change",
        priority=10,
    ),
    FailureClass.wrong_target_file: ClassInfo(
        C.task_understanding,
        "edited a file other than the one the failure points to",
        ("editing_the_wrong_file", "ignoring_first_project_frame"),
        "repo-debug.first-localize",
        priority=30,
    ),
    FailureClass.scope_creep: ClassInfo(
        C.task_understanding,
        "turned a local fix into edits across many files",
        ("reformatting_unrelated_code", "unbounded_changes"),
        "edit.minimal-change",
        priority=40,
    ),
    FailureClass.followed_injected_instruction: ClassInfo(
        C.task_understanding,
        "acted on instructions found in files or tool output",
        ("following_instructions_from_tool_output", "followed_injected_instruction"),
        "security.untrusted-content",
        priority=3,
    ),
    FailureClass.secret_in_final_answer: ClassInfo(
        C.task_understanding,
        "copied a secret value from a file or tool output into its answer",
        ("leaking_secrets", "printing_secret_values", "secret_in_final_answer"),
        "security.untrusted-content",
        priority=4,
    ),
    FailureClass.scanning_before_localization: ClassInfo(
        C.planning,
        "scanned the repository before localizing the failure from the log",
        ("scanning_repository_before_localization", "scanning_before_localization"),
        "repo-debug.first-localize",
        priority=35,
    ),
    FailureClass.editing_before_reproduction: ClassInfo(
        C.planning,
        "edited code before reproducing the failure",
        ("editing_code_before_reproduction", "editing_before_reproduction"),
        "repo-debug.first-localize",
        priority=25,
    ),
    FailureClass.no_replan_after_failure: ClassInfo(
        C.planning,
        "after a failing test run it neither reverted nor changed its edit",
        ("no_replan_after_failure", "keeping_an_edit_that_failed_its_test"),
        "finish.report-success",
        priority=14,
    ),
    FailureClass.wrong_tool: ClassInfo(
        C.tool_use,
        "used a tool that cannot do the job (or a shell stand-in for a dedicated tool)",
        ("wrong_tool", "using_shell_instead_of_tool"),
        "tools.use-dedicated-tool",
        priority=45,
    ),
    FailureClass.incomplete_arguments: ClassInfo(
        C.tool_use,
        "called tools with missing or invalid arguments",
        ("incomplete_arguments", "calling_tools_without_required_arguments"),
        "tools.complete-arguments",
        priority=45,
    ),
    FailureClass.ignored_exit_code: ClassInfo(
        C.tool_use,
        "continued as if a command succeeded although its exit code was not 0",
        ("infer_success_without_checking_exit_code", "ignored_exit_code"),
        "test.run-smallest-first",
        priority=15,
    ),
    FailureClass.repeated_identical_call: ClassInfo(
        C.tool_use,
        "repeated the same tool call with the same inputs and the same failing result",
        ("repeated_identical_call",),
        "recovery.no-repeat-failing-call",
        priority=20,
    ),
    FailureClass.lost_state: ClassInfo(
        C.state_management,
        "forgot an established fact: redid finished work or undid its own edit",
        ("lost_state", "forgetting_verified_facts"),
        "state.keep-findings",
        priority=45,
    ),
    FailureClass.missing_validation: ClassInfo(
        C.verification_stopping,
        "changed code and never re-ran the failing test afterwards",
        ("missing_validation", "patch_applied_means_problem_fixed"),
        "finish.report-success",
        priority=12,
    ),
    FailureClass.reported_success_without_verification: ClassInfo(
        C.verification_stopping,
        "reported success without a passing run of the target test after the last edit",
        ("reported_success_without_verification",),
        "finish.report-success",
        priority=5,
    ),
    FailureClass.verified_wrong_target: ClassInfo(
        C.verification_stopping,
        "verified with a test other than the failing one",
        ("verified_wrong_target", "verifying_the_wrong_test"),
        "finish.report-success",
        priority=18,
    ),
    FailureClass.skipped_related_tests: ClassInfo(
        C.verification_stopping,
        "verified only the single target test; the fix broke its neighbours",
        ("skipped_related_tests", "verifying_only_the_single_test"),
        "test.run-related-tests",
        priority=16,
    ),
    FailureClass.unchecked_workspace_changes: ClassInfo(
        C.verification_stopping,
        "finished without checking git status/diff; stray changes stayed in the workspace",
        ("unchecked_workspace_changes", "leaving_stray_changes"),
        "finish.report-success",
        priority=17,
    ),
    FailureClass.premature_stop: ClassInfo(
        C.verification_stopping,
        "stopped before reaching a state the teacher reached (e.g. never edited)",
        ("premature_stop", "stopping_after_partial_progress"),
        "finish.continue-until-verified",
        priority=28,
    ),
    FailureClass.loop_without_stop: ClassInfo(
        C.verification_stopping,
        "looped until the step budget ran out without a stop condition",
        ("loop_without_stop",),
        "recovery.no-repeat-failing-call",
        priority=22,
    ),
    FailureClass.missing_knowledge: ClassInfo(
        C.not_compilable,
        "the fix needs facts the student never saw (the teacher read them in reference docs)",
        upgrade_path=UpgradePath.retrieval,
        priority=90,
    ),
    FailureClass.capability_gap: ClassInfo(
        C.not_compilable,
        "the procedure was present and followed; the decisive step is beyond the student",
        upgrade_path=UpgradePath.fine_tune,
        priority=95,
    ),
    FailureClass.context_overflow: ClassInfo(
        C.not_compilable,
        "the trajectory ran out of context window",
        upgrade_path=UpgradePath.tool_wrapper,
        priority=2,
    ),
    FailureClass.flaky_environment: ClassInfo(
        C.not_compilable,
        "the verdict differs across identical repeats or the verifier/environment failed",
        upgrade_path=UpgradePath.fix_environment,
        priority=1,
    ),
    FailureClass.harness_failure: ClassInfo(
        C.not_compilable,
        "the route, server or harness failed the run (no tool call, output cut, context "
        "error below the window); no skill text can fix it",
        upgrade_path=UpgradePath.fix_harness,
        priority=0,
    ),
}
del C


def info(cls: FailureClass | str) -> ClassInfo:
    """Static facts about ``cls`` (raises KeyError naming the class when unknown)."""
    return TAXONOMY[FailureClass(cls)]


def category_of(cls: FailureClass | str) -> FailureCategory:
    return info(cls).category


def is_compilable(cls: FailureClass | str) -> bool:
    return info(cls).compilable


def classes_in(category: FailureCategory) -> list[FailureClass]:
    return [c for c, i in TAXONOMY.items() if i.category is category]


def class_for_anti_pattern(name: str) -> FailureClass | None:
    """The failure class an anti-pattern name in a rule stands for, if any."""
    key = name.strip().lower().replace("-", "_")
    for cls, ci in TAXONOMY.items():
        if key == cls.value or key in ci.aliases:
            return cls
    return None


__all__ = [
    "TAXONOMY",
    "ClassInfo",
    "FailureCategory",
    "FailureClass",
    "UpgradePath",
    "category_of",
    "class_for_anti_pattern",
    "classes_in",
    "info",
    "is_compilable",
]
