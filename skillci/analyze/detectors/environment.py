"""Observed non-compilable classes: context overflow and flaky environments."""

from __future__ import annotations

from skillci.analyze.detectors.base import (
    OVERFLOW_FRACTION,
    DetectContext,
    F,
    Hit,
    action_name,
    ref,
)

# ---------------------------------------------------------------------------- not compilable (observed)

_OVERFLOW_WORDS = ("context", "too long", "maximum context", "token limit", "contextwindow")


def detect_context_overflow(ctx: DetectContext) -> Hit | None:
    """The model's context window ran out (error event, stop reason, or prompt size)."""
    s = ctx.student
    hit_step: int | None = None
    for step, etype, msg in s.errors:
        low = f"{etype} {msg}".lower()
        if any(w in low for w in _OVERFLOW_WORDS):
            hit_step = step
            break
    reason = (s.stop_reason or "").lower()
    by_reason = reason in (
        "context_overflow",
        "context_length",
        "context_window_exceeded",
        "length",
    )
    by_size = bool(s.context_window) and s.max_input_tokens_seen >= OVERFLOW_FRACTION * (
        s.context_window or 0
    )
    if hit_step is None and not by_reason and not by_size:
        return None
    return Hit(
        F.context_overflow,
        0.9,
        "return_only_the_relevant_slice_of_large_outputs",
        last_action=action_name(s.actions[-1]) if s.actions else None,
        missing_action="keep_the_context_under_the_window",
        evidence=(ref(s, hit_step, "context_window_exceeded"),),
        rationale="The run exhausted the model's context window; more skill text cannot fix that.",
        details={"max_input_tokens": s.max_input_tokens_seen},
    )


def detect_flaky_environment(ctx: DetectContext) -> Hit | None:
    """Infra/verifier errors, or identical trajectories with different verdicts across repeats."""
    s = ctx.student
    if s.eval_state in ("infra_error", "verifier_error"):
        return Hit(
            F.flaky_environment,
            0.95,
            "fix_the_environment_or_verifier_before_judging_the_skill",
            missing_action="obtain_a_verdict",
            evidence=(ref(s, None, s.eval_state),),
            rationale=f"The trial ended in {s.eval_state}: the verdict says nothing about the skill.",
        )
    keys = tuple(a.key for a in s.actions)
    for other in ctx.repeats:
        if other.run_id == s.run_id:
            continue
        if tuple(a.key for a in other.actions) == keys and other.passed != s.passed:
            return Hit(
                F.flaky_environment,
                0.9,
                "fix_the_environment_or_verifier_before_judging_the_skill",
                missing_action="obtain_a_stable_verdict",
                evidence=(
                    ref(s, None, "verdict_failed"),
                    ref(other, None, "same_actions_other_verdict"),
                ),
                rationale="Two repeats took identical actions and got different verdicts.",
            )
    return None


__all__ = [
    "detect_context_overflow",
    "detect_flaky_environment",
]
