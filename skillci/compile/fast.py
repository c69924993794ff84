"""Fast optimization: lessons from a batch of trajectories -> one bounded patch.

Input: at least :data:`MIN_TRAJECTORIES` run records of the same task with the same skill
(the *compile type*: the package content hash the runs used), the package, optionally
reward-model scores. Steps (docs/design/102):

1. **Pre-score** each trajectory deterministically (:func:`prescore`): verifier reward,
   whether a passing check ran after the last edit, failed calls (other than test runs)
   and error events, and repeated identical failing calls (loops).
2. **Score**: the pre-score alone (``--no-rm``), or half pre-score and half the reward
   model's score, rank-normalized within the batch (:func:`combine`).
3. **Group**: the top and bottom ``max(2, n // 3)`` by score (ties: batch order).
4. **Map**: per grouped trajectory, lessons — ``do`` steps the good ones show, ``avoid``
   shapes the bad ones show — from the compiler model (trajectory quoted as untrusted
   data, answers schema-checked) or, for simulator routes and as fallback, from a fixed
   table of observable behaviours (:func:`observed_lessons`).
5. **Reduce**: merge and dedupe, drop lessons with an injection/exfiltration shape (the
   patch guard's detectors), drop lessons the skill already carries, drop conflicting
   pairs (a ``do`` that is another lesson's or an active rule's anti-pattern), keep the
   best-supported few, and build one ``add_rule``/``replace_rule`` patch; shrink it until
   ``check_patch`` (limits, guard against the trajectories' untrusted text, lint) passes.

Steps 4-5 live in ``skillci.compile.fast_lessons``. Pure apart from the model call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from skillci.analyze.modelio import (
    ModelCall,
    ModelExchange,
)
from skillci.analyze.trajectory import Trajectory
from skillci.basemodels import StrictModel
from skillci.compile.fast_lessons import (
    FAST_PROMPT_VERSION,
    LESSON_SYSTEM,
    RULE_ID,
    Lesson,
    LessonAnswer,
    MergedLesson,
    failure_class_of,
    lesson_messages,
    lessons_patch,
    model_lessons,
    observed_lessons,
    reduce_lessons,
    repeated_failures,
)
from skillci.compile.patch_check import PatchCheck, check_patch, untrusted_texts
from skillci.errors import InvalidInputError
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord

FAST_SCHEMA_VERSION = 1
MIN_TRAJECTORIES = 6


class TrajectoryScore(StrictModel):
    """Scores of one trajectory."""

    index: int = Field(ge=0, description="Position in the batch.")
    label: str = Field(description="Run label (run id, or a run-dir-relative trial path).")
    reward: float = Field(description="Verifier reward (0 when none).")
    validated: bool = Field(description="A passing check ran after the last edit.")
    errors: int = Field(ge=0, description="Failed calls plus error events.")
    loops: int = Field(ge=0, description="Repeated identical failing calls.")
    prescore: float = Field(description="Deterministic pre-score, 0..1.")
    rm_score: float | None = Field(default=None, description="Reward model score (raw).")
    score: float = Field(description="The score used for grouping.")
    group: Literal["top", "bottom", "middle"] = Field(default="middle")


class FastReport(StrictModel):
    """Everything one Fast run decided (``fast-report.json``)."""

    schema_version: int = Field(default=FAST_SCHEMA_VERSION, description="Report schema.")
    task_id: str
    skill: str
    skill_hash: str = Field(description="Compile type: the skill the trajectories ran with.")
    trajectories: int
    reward_model: str | None = Field(
        default=None, description="Reward-model URL used; null with --no-rm."
    )
    rm_note: str | None = Field(default=None, description="Why pre-scores alone were used.")
    compiler: str = Field(description="Compiler route, or 'observed' for the fixed table.")
    scores: list[TrajectoryScore]
    lessons: list[Lesson] = Field(default_factory=list)
    merged: list[MergedLesson] = Field(default_factory=list, description="Kept lessons.")
    dropped: list[str] = Field(default_factory=list, description="Lessons dropped, and why.")
    conflicts: list[str] = Field(default_factory=list, description="Conflicting lessons.")
    patch: Patch | None = Field(default=None, description="The bounded patch (null: none).")
    check: PatchCheck | None = Field(default=None, description="Its check.")
    candidate_hash: str = Field(description="Content hash of the candidate package.")
    notes: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------- scoring


def compile_type(record: RunRecord) -> str:
    return record.skill_hash or "no-skill"


def check_batch(records: Sequence[RunRecord], skill_hash: str | None = None) -> None:
    """Refuse a batch that is too small or mixes tasks or compile types."""
    if len(records) < MIN_TRAJECTORIES:
        raise InvalidInputError(
            f"Fast needs at least {MIN_TRAJECTORIES} trajectories of one task and compile "
            f"type; got {len(records)}",
            hint=f"run the student {MIN_TRAJECTORIES}+ times with the same skill "
            "(e.g. `skillci eval run --repeat 6`) and pass those traces",
        )
    tasks = Counter(r.task_id for r in records)
    if len(tasks) > 1:
        raise InvalidInputError(
            "the trajectories are of different tasks: "
            + ", ".join(f"{t} ({n})" for t, n in sorted(tasks.items())),
            hint="pass the traces of one task",
        )
    types = Counter(compile_type(r) for r in records)
    if len(types) > 1:
        raise InvalidInputError(
            "the trajectories ran with different skills (compile types): "
            + ", ".join(f"{h[:12]} ({n})" for h, n in sorted(types.items())),
            hint="pass the traces of one skill version",
        )
    (only,) = types
    if skill_hash is not None and only != skill_hash:
        raise InvalidInputError(
            f"the trajectories ran with skill {only[:12]}, not with --skill ({skill_hash[:12]})",
            hint="pass the skill package the traces were produced with",
        )


def prescore(index: int, label: str, record: RunRecord) -> TrajectoryScore:
    """Deterministic pre-score (see the module docstring)."""
    t = Trajectory.from_record(record)
    reward = max(0.0, min(1.0, record.evaluation.reward or 0.0))
    ms = t.milestones
    validated = ms.verified is not None or (ms.last_edit is None and any(a.ok for a in t.test_runs))
    # a failing test run is evidence, not an error; tool errors and failed commands are
    errors = sum(a.failed and not a.is_test for a in t.actions) + len(t.errors)
    loops = repeated_failures(t)
    pre = (
        0.5 * reward
        + 0.2 * validated
        + 0.15 * max(0.0, 1 - errors / 6)
        + 0.15 * max(0.0, 1 - loops / 3)
    )
    return TrajectoryScore(
        index=index,
        label=label,
        reward=reward,
        validated=validated,
        errors=errors,
        loops=loops,
        prescore=round(pre, 6),
        score=round(pre, 6),
    )


def _ranks(xs: Sequence[float]) -> list[float]:
    """Ranks normalized to 0..1 (ties share their mean rank)."""
    n = len(xs)
    if n == 1:
        return [1.0]
    order = sorted(range(n), key=lambda i: xs[i])
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        mean = (i + j) / 2
        for k in range(i, j + 1):
            ranks[order[k]] = mean / (n - 1)
        i = j + 1
    return ranks


def combine(scores: list[TrajectoryScore], rm: Sequence[float] | None) -> list[TrajectoryScore]:
    """Final scores: pre-scores, or half pre-score + half rank-normalized RM score."""
    if rm is None:
        return scores
    ranks = _ranks(list(rm))
    return [
        s.model_copy(update={"rm_score": float(r), "score": round(0.5 * s.prescore + 0.5 * k, 6)})
        for s, r, k in zip(scores, rm, ranks, strict=True)
    ]


def group(scores: list[TrajectoryScore]) -> list[TrajectoryScore]:
    """Mark the top and bottom ``max(2, n // 3)`` (ties broken by batch order)."""
    k = max(2, len(scores) // 3)
    order = sorted(scores, key=lambda s: (-s.score, s.index))
    top = {s.index for s in order[:k]}
    bottom = {s.index for s in order[-k:]} - top
    return [
        s.model_copy(
            update={
                "group": "top" if s.index in top else "bottom" if s.index in bottom else "middle"
            }
        )
        for s in scores
    ]


@dataclass(frozen=True)
class FastResult:
    """The candidate package and the report."""

    package: SkillPackage
    report: FastReport
    exchanges: list[ModelExchange]


def run_fast(
    records: Sequence[RunRecord],
    pkg: SkillPackage,
    *,
    rm_scores: Sequence[float] | None,
    reward_model: str | None = None,
    rm_note: str | None = None,
    call: ModelCall | None = None,
    compiler: str = "observed",
    label: Callable[[int, RunRecord], str] | None = None,
    max_parallel: int = 1,
) -> FastResult:
    """The whole Fast computation on one batch (see the module docstring)."""
    check_batch(records, pkg.content_hash)
    name = label or (lambda _i, r: r.run_id)
    labels = [name(i, r) for i, r in enumerate(records)]
    scores = group(combine([prescore(i, labels[i], r) for i, r in enumerate(records)], rm_scores))
    picked = [s for s in scores if s.group != "middle"]
    exchanges: list[ModelExchange] = []
    notes: list[str] = []

    def one(s: TrajectoryScore) -> tuple[list[Lesson], ModelExchange | None, str | None]:
        rec = records[s.index]
        if call is None:
            return observed_lessons(s.index, rec, s.group, pkg), None, None
        try:
            got, ex = model_lessons(call, compiler, s.index, rec, s.group, pkg)
        except ValueError as exc:
            return (
                observed_lessons(s.index, rec, s.group, pkg),
                None,
                f"{labels[s.index]}: compiler answer invalid twice ({exc}); used observed lessons",
            )
        return got, ex, None

    with ThreadPoolExecutor(max_workers=max(1, max_parallel)) as pool:
        results = list(pool.map(one, picked))
    lessons: list[Lesson] = []
    for got, ex, note in results:
        lessons += got
        if ex is not None:
            exchanges.append(ex)
        if note:
            notes.append(note)
    kept, dropped, conflicts = reduce_lessons(lessons, pkg)
    fc = failure_class_of(kept, records, pkg)
    support = [labels[i] for m in kept for i in m.sources]
    patch = lessons_patch(pkg, kept, fc, support, compiler)
    candidate, check = pkg, None
    while patch is not None:
        check, applied = check_patch(pkg, patch, untrusted_texts(records))
        if check.ok and applied is not None:
            candidate = applied.after
            break
        notes.append("patch failed its check: " + "; ".join(check.problems())[:300])
        if len(kept) <= 1:
            patch = None
            break
        dropped.append(f"{kept[-1].text}: removed to fit the patch check")
        kept = kept[:-1]
        patch = lessons_patch(pkg, kept, fc, [labels[i] for m in kept for i in m.sources], compiler)
    if patch is None:
        notes.append("no new lesson: the candidate is the input skill unchanged")
    report = FastReport(
        task_id=records[0].task_id,
        skill=pkg.manifest.name,
        skill_hash=pkg.content_hash,
        trajectories=len(records),
        reward_model=reward_model if rm_scores is not None else None,
        rm_note=rm_note,
        compiler=compiler,
        scores=scores,
        lessons=lessons,
        merged=kept if patch is not None else [],
        dropped=dropped,
        conflicts=conflicts,
        patch=patch,
        check=check if patch is not None else None,
        candidate_hash=candidate.content_hash,
        notes=notes,
    )
    return FastResult(candidate, report, exchanges)


SAVED_MODELS: dict[str, type[BaseModel]] = {"fast-report": FastReport}

__all__ = [
    "FAST_PROMPT_VERSION",
    "FAST_SCHEMA_VERSION",
    "LESSON_SYSTEM",
    "MIN_TRAJECTORIES",
    "RULE_ID",
    "SAVED_MODELS",
    "FastReport",
    "FastResult",
    "Lesson",
    "LessonAnswer",
    "MergedLesson",
    "TrajectoryScore",
    "check_batch",
    "combine",
    "compile_type",
    "failure_class_of",
    "group",
    "lesson_messages",
    "lessons_patch",
    "model_lessons",
    "observed_lessons",
    "prescore",
    "reduce_lessons",
    "run_fast",
]
