"""Deterministic detectors: one function per failure subclass.

Each detector reads a :class:`DetectContext` (the student's trajectory, the teacher's when
it passed, their alignment, earlier repeats) and returns a :class:`Hit` or ``None``. A hit
carries only our own behaviour names and event references — never trajectory text.

Confidence guide: 0.9 when the evidence is decisive on its own (e.g. success claimed with no
test run after the last edit), lower when it rests on a heuristic threshold, plus a small
bonus when the teacher's trajectory shows the missing behaviour. ``diagnose`` ranks hits by
confidence, then by the class priority in the taxonomy.

The non-compilable kinds that are *observed* (context overflow, flaky environment) have
detectors here; the *residual* ones (missing knowledge, capability gap) are decided in
``skillci.analyze.compilability`` when no procedural detector explains the failure.
"""

from __future__ import annotations

import dataclasses

from skillci.analyze.detectors.base import DetectContext, Detector, F, Hit
from skillci.analyze.detectors.environment import (
    detect_context_overflow,
    detect_flaky_environment,
    detect_harness_failure,
)
from skillci.analyze.detectors.planning import (
    detect_editing_before_reproduction,
    detect_lost_state,
    detect_scanning_before_localization,
)
from skillci.analyze.detectors.tools import (
    detect_ignored_exit_code,
    detect_incomplete_arguments,
    detect_repeated_identical_call,
    detect_wrong_tool,
)
from skillci.analyze.detectors.understanding import (
    detect_followed_injected_instruction,
    detect_missed_constraint,
    detect_scope_creep,
    detect_secret_in_final_answer,
    detect_wrong_target_file,
)
from skillci.analyze.detectors.verification import (
    detect_loop_without_stop,
    detect_missing_validation,
    detect_no_replan_after_failure,
    detect_premature_stop,
    detect_reported_success_without_verification,
    detect_skipped_related_tests,
    detect_unchecked_workspace_changes,
    detect_verified_wrong_target,
)
from skillci.analyze.taxonomy import FailureClass

# ---------------------------------------------------------------------------- registry

DETECTORS: dict[FailureClass, Detector] = {
    F.harness_failure: detect_harness_failure,
    F.flaky_environment: detect_flaky_environment,
    F.context_overflow: detect_context_overflow,
    F.reported_success_without_verification: detect_reported_success_without_verification,
    F.missing_validation: detect_missing_validation,
    F.ignored_exit_code: detect_ignored_exit_code,
    F.verified_wrong_target: detect_verified_wrong_target,
    F.missed_constraint: detect_missed_constraint,
    F.repeated_identical_call: detect_repeated_identical_call,
    F.loop_without_stop: detect_loop_without_stop,
    F.editing_before_reproduction: detect_editing_before_reproduction,
    F.premature_stop: detect_premature_stop,
    F.no_replan_after_failure: detect_no_replan_after_failure,
    F.skipped_related_tests: detect_skipped_related_tests,
    F.unchecked_workspace_changes: detect_unchecked_workspace_changes,
    F.followed_injected_instruction: detect_followed_injected_instruction,
    F.secret_in_final_answer: detect_secret_in_final_answer,
    F.wrong_target_file: detect_wrong_target_file,
    F.scanning_before_localization: detect_scanning_before_localization,
    F.scope_creep: detect_scope_creep,
    F.wrong_tool: detect_wrong_tool,
    F.incomplete_arguments: detect_incomplete_arguments,
    F.lost_state: detect_lost_state,
}
"""One detector per observed class (missing_knowledge / capability_gap are residual)."""


def run_detectors(ctx: DetectContext) -> list[Hit]:
    """Every detector's hit, in registry order (ranking is ``diagnose``'s job)."""
    hits = []
    for det in DETECTORS.values():
        hit = det(ctx)
        if hit is not None:
            hits.append(dataclasses.replace(hit, detector=hit.detector or det.__name__))
    return hits


__all__ = [
    "DETECTORS",
    "DetectContext",
    "Detector",
    "Hit",
    "detect_context_overflow",
    "detect_editing_before_reproduction",
    "detect_flaky_environment",
    "detect_followed_injected_instruction",
    "detect_harness_failure",
    "detect_ignored_exit_code",
    "detect_incomplete_arguments",
    "detect_loop_without_stop",
    "detect_lost_state",
    "detect_missed_constraint",
    "detect_missing_validation",
    "detect_no_replan_after_failure",
    "detect_premature_stop",
    "detect_repeated_identical_call",
    "detect_reported_success_without_verification",
    "detect_scanning_before_localization",
    "detect_scope_creep",
    "detect_secret_in_final_answer",
    "detect_skipped_related_tests",
    "detect_unchecked_workspace_changes",
    "detect_verified_wrong_target",
    "detect_wrong_target_file",
    "detect_wrong_tool",
    "run_detectors",
]
