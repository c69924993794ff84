"""Observed non-compilable classes: harness failures, context overflow, flaky environments.

A harness failure is the route's, the server's or the agent harness's, never the student's:
no tool call at all, the server dropping the tools, output cut by the token limit
(``finish_reason: length``), or a "context exceeded" error while the real prompt was far
below the route's window. Each names its fix (route, ``tool_choice``, server). Context
overflow is only claimed when the prompt tokens actually reached the window (or the window
is unknown and the harness says so).
"""

from __future__ import annotations

from skillci.analyze.detectors.base import (
    OVERFLOW_FRACTION,
    DetectContext,
    F,
    Hit,
    action_name,
    ref,
)
from skillci.analyze.trajectory import Trajectory

# ---------------------------------------------------------------------------- not compilable (observed)

_OVERFLOW_WORDS = ("context", "too long", "maximum context", "token limit", "contextwindow")


_LENGTH_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "output_truncated"})
_CONTEXT_REASONS = frozenset({"context_overflow", "context_length", "context_window_exceeded"})
_TOOL_WORDS = ("tool", "function call", "tool_choice")


def _real_overflow(s: Trajectory) -> bool | None:
    """True/False when the prompt size and the window are known; None when not."""
    if not s.context_window or not s.max_input_tokens_seen:
        return None
    return s.max_input_tokens_seen >= OVERFLOW_FRACTION * s.context_window


def detect_harness_failure(ctx: DetectContext) -> Hit | None:
    """The run failed for the harness, not the student (see the module docstring)."""
    s = ctx.student
    reason = (s.stop_reason or "").lower()
    real = _real_overflow(s)
    window = f"{s.max_input_tokens_seen} prompt tokens of a {s.context_window}-token window"
    context_err = next(
        (
            (step, f"{etype} {msg}")
            for step, etype, msg in s.errors
            if any(w in f"{etype} {msg}".lower() for w in _OVERFLOW_WORDS)
        ),
        None,
    )
    tool_err = next(
        (
            (step, f"{etype} {msg}")
            for step, etype, msg in s.errors
            if any(w in f"{etype} {msg}".lower() for w in _TOOL_WORDS)
        ),
        None,
    )
    if reason in _LENGTH_REASONS and real is not True:
        return _harness(
            s,
            None,
            "output_cut_by_length",
            f"The model's answer was cut by its token limit (finish_reason {reason}) at "
            f"{window}: set max_tokens on the route and check that the server honours it.",
        )
    if (context_err is not None or reason in _CONTEXT_REASONS) and real is False:
        return _harness(
            s,
            context_err[0] if context_err else None,
            "context_error_below_window",
            f"The server reported a context overflow at {window}: its own context setting "
            "(e.g. llama.cpp -c/n_ctx) is smaller than the route's context_window; fix the "
            "server or the route.",
        )
    if tool_err is not None and not s.actions:
        return _harness(
            s,
            tool_err[0],
            "tools_rejected_by_server",
            "The server rejected or dropped the tool definitions: use a route whose server "
            "supports tool calls (llama.cpp: --jinja) or set tool_choice.",
        )
    if not s.actions and s.eval_state not in ("infra_error", "verifier_error"):
        t = ctx.teacher
        teacher_note = (
            f"; the teacher made {len(t.actions)} on the same task" if t and t.actions else ""
        )
        return _harness(
            s,
            s.final_step,
            "no_tool_calls",
            "The student made no tool call at all" + teacher_note + ": the route may drop "
            "the tools (server without tool support, a chat template without tools) or "
            "the model needs tool_choice=required; fix the route before judging the skill.",
        )
    return None


def _harness(s: Trajectory, step: int | None, note: str, why: str) -> Hit:
    return Hit(
        F.harness_failure,
        0.95,
        "fix_the_route_or_server_before_judging_the_skill",
        last_action=action_name(s.actions[-1]) if s.actions else None,
        missing_action=note,
        evidence=(ref(s, step, note),),
        rationale=why,
        details={
            "max_input_tokens": s.max_input_tokens_seen,
            "context_window": s.context_window or 0,
        },
    )


def detect_context_overflow(ctx: DetectContext) -> Hit | None:
    """The model's context window ran out: the prompt reached the window, or (window or
    prompt size unknown) the harness reported it."""
    s = ctx.student
    if _real_overflow(s) is False:
        return None  # a harness failure (detect_harness_failure), not an overflow
    hit_step: int | None = None
    for step, etype, msg in s.errors:
        low = f"{etype} {msg}".lower()
        if any(w in low for w in _OVERFLOW_WORDS):
            hit_step = step
            break
    reason = (s.stop_reason or "").lower()
    by_reason = reason in _CONTEXT_REASONS or (
        reason in _LENGTH_REASONS and _real_overflow(s) is True
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
    "detect_harness_failure",
]
