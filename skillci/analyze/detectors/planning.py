"""Planning and state-management detectors: order of localize / reproduce / edit, re-planning, forgetting."""

from __future__ import annotations

from skillci.analyze.classify import (
    ACTION_NAMES,
    ActionKind,
)
from skillci.analyze.detectors.base import (
    LOST_STATE_GAP,
    SCAN_MARGIN,
    SCAN_MIN,
    DetectContext,
    F,
    Hit,
    action_name,
    bonus,
    clip,
    ref,
)
from skillci.analyze.trajectory import (
    Action,
    Trajectory,
)

# ---------------------------------------------------------------------------- planning


def detect_editing_before_reproduction(ctx: DetectContext) -> Hit | None:
    """The first edit came before any failing test run."""
    s = ctx.student
    m = s.milestones
    if m.first_edit is None or m.reproduced is not None:
        return None
    t = ctx.teacher
    teacher_ok = t is not None and t.milestones.reproduced is not None
    ev = [ref(s, m.first_edit, "edit_before_reproduction")]
    if teacher_ok and t is not None:
        ev.append(ref(t, t.milestones.reproduced, "failure_reproduced_before_edit"))
    return Hit(
        F.editing_before_reproduction,
        clip(0.75 + bonus(ctx, teacher_ok, 0.1)),
        "do_not_edit_code_until_the_failure_is_reproduced",
        last_action=action_name(next(a for a in s.actions if a.step == m.first_edit)),
        missing_action="run_smallest_reproducible_test",
        incorrect_assumption="the_failure_location_is_known_without_running_the_test",
        teacher_actions=("read_ci_failure_log", "run_target_test") if teacher_ok else (),
        evidence=tuple(ev),
        rationale="The student edited code before any test run had reproduced the failure.",
    )


def _scans_before_localization(
    t: Trajectory, relevant: set[str], use_log: bool
) -> tuple[list[Action], int | None]:
    """Exploration before the trajectory localized: before it read the CI log (``use_log``)
    or before it first read a relevant file / ran a named test."""
    scans: list[Action] = []
    for a in t.actions:
        if use_log:
            localizes = a.kind is ActionKind.read_log
        else:
            localizes = (
                a.kind is ActionKind.read_source and (not relevant or bool(set(a.files) & relevant))
            ) or (a.is_test and bool(a.tests))
        if localizes or a.is_edit:
            return scans, a.step
        if a.kind.is_exploration or a.kind is ActionKind.read_source:
            scans.append(a)
    return scans, None


def detect_scanning_before_localization(ctx: DetectContext) -> Hit | None:
    """Many exploration calls before the first look at the failure (log, failing code)."""
    s, t = ctx.student, ctx.teacher
    relevant = set(t.edited_files if t is not None else s.edited_files)
    use_log = s.milestones.log_read is not None or (
        t is not None and t.milestones.log_read is not None
    )
    scans, loc = _scans_before_localization(s, relevant, use_log)
    t_scans = len(_scans_before_localization(t, relevant, use_log)[0]) if t is not None else 0
    if len(scans) < SCAN_MIN or len(scans) < t_scans + SCAN_MARGIN:
        return None
    ev = [ref(s, scans[0].step, "scan_started"), ref(s, scans[-1].step, "scan_continued")]
    if loc is not None:
        ev.append(ref(s, loc, "localized_late"))
    teacher_actions: tuple[str, ...] = ()
    if t is not None:
        teacher_actions = tuple(dict.fromkeys(ACTION_NAMES[a.kind] for a in t.actions[:4]))
        first = t.milestones.log_read if use_log else t.milestones.first_localize
        if first is not None:
            ev.append(ref(t, first, "localized_from_the_log"))
    return Hit(
        F.scanning_before_localization,
        clip(0.7 + (0.1 if loc is None else 0.0) + bonus(ctx, True, 0.1)),
        "extract_first_project_frame_from_the_ci_log_before_listing_or_searching",
        last_action=action_name(scans[-1]),
        missing_action="extract_first_project_frame_from_the_ci_log",
        incorrect_assumption="the_failing_code_must_be_found_by_scanning_the_repository",
        teacher_actions=teacher_actions,
        evidence=tuple(ev),
        rationale=f"The student made {len(scans)} exploration calls before localizing (teacher: {t_scans}).",
        details={"student_scans": len(scans), "teacher_scans": t_scans},
    )


# ---------------------------------------------------------------------------- state


def detect_lost_state(ctx: DetectContext) -> Hit | None:
    """Undid its own edit (A -> B -> A), or re-did a finished lookup after moving on."""
    s = ctx.student
    writes: dict[str, list[Action]] = {}
    for a in s.actions:
        if a.is_edit and a.ok and a.content_digest is not None and len(a.files) == 1:
            writes.setdefault(a.files[0], []).append(a)
    for ws in writes.values():
        for i in range(2, len(ws)):
            if ws[i].content_digest == ws[i - 2].content_digest != ws[i - 1].content_digest:
                return Hit(
                    F.lost_state,
                    0.75,
                    "write_down_each_edit_and_its_test_result_before_the_next_edit",
                    last_action=action_name(ws[i]),
                    missing_action="keep_track_of_edits_already_tried",
                    incorrect_assumption="earlier_edits_were_not_tried",
                    evidence=(
                        ref(s, ws[i - 2].step, "edit_a"),
                        ref(s, ws[i - 1].step, "edit_b"),
                        ref(s, ws[i].step, "edit_a_again"),
                    ),
                    rationale="The student reverted to an edit it had already tried and replaced.",
                )
    seen: dict[tuple[str, str], Action] = {}
    repeats: list[tuple[Action, Action]] = []
    last_edit_idx = -1
    for a in s.actions:
        if a.is_edit:
            last_edit_idx = a.index
            seen.clear()
            continue
        k = (a.key, a.output_digest)
        prev = seen.get(k)
        if (
            prev is not None
            and a.index - prev.index > LOST_STATE_GAP
            and prev.index > last_edit_idx
            and a.kind not in (ActionKind.load_skill_file,)
        ):
            repeats.append((prev, a))
        seen[k] = a
    if len(repeats) < 2:
        return None
    return Hit(
        F.lost_state,
        0.65,
        "write_down_the_failing_test_id_target_file_and_findings_once_found",
        last_action=action_name(repeats[-1][1]),
        missing_action="reuse_earlier_results",
        incorrect_assumption="earlier_findings_are_no_longer_known",
        evidence=tuple(
            e
            for p, a in repeats[:2]
            for e in (ref(s, p.step, "first_lookup"), ref(s, a.step, "same_lookup_again"))
        ),
        rationale=f"The student repeated {len(repeats)} earlier lookups with identical results after moving on.",
        details={"repeated_lookups": len(repeats)},
    )


__all__ = [
    "detect_editing_before_reproduction",
    "detect_lost_state",
    "detect_scanning_before_localization",
]
