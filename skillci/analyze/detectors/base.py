"""Shared parts of the detectors: the context they read, the hit they return, helpers
and the thresholds (documented in docs/design/051-detectors-and-compileability.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from skillci.analyze.align import Alignment
from skillci.analyze.classify import (
    ACTION_NAMES,
    PATCH_TOOLS,
    READ_TOOLS,
    RUN_TOOLS,
    SEARCH_TOOLS,
    WRITE_TOOLS,
    ActionKind,
)
from skillci.analyze.models import EvidenceRef
from skillci.analyze.taxonomy import FailureClass
from skillci.analyze.trajectory import (
    Action,
    Trajectory,
    is_broad_run,
)

F = FailureClass
KNOWN_TOOLS = READ_TOOLS | SEARCH_TOOLS | RUN_TOOLS | WRITE_TOOLS | PATCH_TOOLS | {"list_files"}

#: Thresholds (see docs/design/051-detectors-and-compileability.md).
SCAN_MIN = 3
"""Exploration actions before localization that count as scanning."""
SCAN_MARGIN = 2
"""... and at least this many more than the teacher needed."""
REPEAT_MIN_FAILING = 2
"""Identical consecutive calls with the same failing result."""
REPEAT_MIN_OK = 3
"""Identical consecutive calls with the same successful result."""
LOST_STATE_GAP = 3
"""Other actions between two identical calls for the repeat to count as forgetting."""
SCOPE_MIN_FILES = 3
ARG_ERRORS_MIN = 2
SHELL_STANDINS_MIN = 2
LOOP_TAIL = 6
OVERFLOW_FRACTION = 0.95


@dataclass(frozen=True)
class DetectContext:
    """What every detector sees."""

    student: Trajectory
    teacher: Trajectory | None = None
    """The teacher's trajectory *when it passed* (a failed teacher shows nothing to copy)."""
    alignment: Alignment | None = None
    repeats: tuple[Trajectory, ...] = ()
    """Other student repeats of the same task with the same skill (flakiness checks)."""


@dataclass(frozen=True)
class Hit:
    """A detector's finding."""

    failure_class: FailureClass
    confidence: float
    required_behavior: str
    """What the student must do instead (snake_case)."""
    last_action: str | None = None
    missing_action: str | None = None
    incorrect_assumption: str | None = None
    teacher_actions: tuple[str, ...] = ()
    evidence: tuple[EvidenceRef, ...] = ()
    rationale: str = ""
    detector: str = ""
    details: dict[str, int] = field(default_factory=dict)
    """Counts behind the decision (e.g. scans=7), for reports."""


Detector = Callable[[DetectContext], Hit | None]


# ---------------------------------------------------------------------------- helpers


def ref(t: Trajectory, step: int | None, note: str) -> EvidenceRef:
    role = "teacher" if t.role == "teacher" else "student"
    return EvidenceRef(run_id=t.run_id, role=role, step=step, note=note)


def action_name(a: Action) -> str:
    """The tool name when it is one we know (reads like the seed: apply_patch), else the kind."""
    return a.tool if a.tool in KNOWN_TOOLS else ACTION_NAMES[a.kind]


def bonus(ctx: DetectContext, ok: bool, amount: float = 0.05) -> float:
    return amount if ctx.teacher is not None and ok else 0.0


def clip(x: float) -> float:
    return round(max(0.0, min(1.0, x)), 3)


def teacher_after_last_edit(t: Trajectory) -> tuple[str, ...]:
    """What the teacher did after its last edit, as the seed names it: run_target_test,
    run_related_tests (a whole file or the suite), inspect_git_diff."""
    names: list[str] = []
    for a in t.after(t.milestones.last_edit):
        if a.is_test:
            names.append("run_related_tests" if is_broad_run(a) else "run_target_test")
        elif a.kind is ActionKind.inspect_diff:
            names.append("inspect_git_diff")
    return tuple(dict.fromkeys(names))


__all__ = [
    "ARG_ERRORS_MIN",
    "KNOWN_TOOLS",
    "LOOP_TAIL",
    "LOST_STATE_GAP",
    "OVERFLOW_FRACTION",
    "REPEAT_MIN_FAILING",
    "REPEAT_MIN_OK",
    "SCAN_MARGIN",
    "SCAN_MIN",
    "SCOPE_MIN_FILES",
    "SHELL_STANDINS_MIN",
    "DetectContext",
    "Detector",
    "F",
    "Hit",
    "action_name",
    "bonus",
    "clip",
    "ref",
    "teacher_after_last_edit",
]
