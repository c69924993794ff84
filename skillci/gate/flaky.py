"""Flaky tasks from history: earlier verdicts of the same skill, model and task (pure).

docs/design/247-flaky-from-history.md. A task counts as flaky from history when judged
runs of the *same* skill content (package hash), the same student route, the same harness
(agent and version: skillci's loop, Claude Code 2.x, ...) and the same task content (task
hash) disagree — at least one passed, at least one failed, and at least one
of them came before the gate being decided. Nothing
changed between those runs that skillci knows of, so the flip is noise — the same rule as
repeats that disagree on the unchanged side (docs/design/224-flaky-tasks.md) applies:
with ``release_gate.flaky_tasks: exclude`` the task is not counted as a repair or a
regression, and the report shows the evidence.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pydantic import BaseModel, ConfigDict, Field

from skillci.trace.models import EvalState, RunRecord

#: Run ids kept as evidence per task (the newest first).
MAX_EVIDENCE_RUNS = 6
_JUDGED = (EvalState.passed, EvalState.failed)


class FlakyHistory(BaseModel):
    """Why a task is flaky from history: the earlier runs whose verdicts disagree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(description="Task id.")
    skill_hash: str = Field(description="Skill package content hash the runs shared.")
    model: str = Field(description="Student route the runs shared.")
    harness: str | None = Field(
        default=None,
        description="Agent harness (and version) the runs shared; None: not filtered.",
    )
    task_hash: str = Field(description="Task content hash the runs shared.")
    passed: int = Field(ge=1, description="Runs that passed (earlier and current).")
    failed: int = Field(ge=1, description="Runs that failed (earlier and current).")
    earlier: int = Field(ge=1, description="How many of them came before this gate.")
    runs: list[str] = Field(description="Run ids of some of them, passes and fails both.")

    def describe(self) -> str:
        return (
            f"{self.task_id}: {self.passed} pass / {self.failed} fail over "
            f"{self.passed + self.failed} runs ({self.earlier} earlier) of skill "
            f"{self.skill_hash[:12]} on {self.model}"
            f"{f' in {self.harness}' if self.harness else ''}, same task content (runs "
            f"{', '.join(self.runs)})"
        )


def flaky_from_history(
    records: Iterable[RunRecord],
    *,
    skill_hash: str,
    model: str,
    task_hashes: dict[str, str],
    current: Iterable[str] = (),
    harnesses: Collection[tuple[str, str | None]] | None = None,
) -> dict[str, FlakyHistory]:
    """Tasks (id -> evidence) whose judged runs in ``records`` disagree, at least one of
    them an *earlier* run (not in ``current``, the run ids of the gate being decided:
    disagreement among those alone is the repeat rule's, :func:`~skillci.gate.verdict.is_flaky`).

    Only records of ``skill_hash`` on route ``model`` for a task whose recorded task hash
    equals ``task_hashes[task_id]`` count; errors and timeouts do not. ``harnesses``: the
    (harness, version) pairs the gate's own student runs in — records of another agent or
    agent version are another student (docs/design/416); None: any harness.
    """
    now = set(current)
    runs_in = None if harnesses is None else set(harnesses)
    by_task: dict[str, list[RunRecord]] = {}
    for r in records:
        if (
            r.skill_hash != skill_hash
            or r.model.route != model
            or r.evaluation.state not in _JUDGED
            or r.runtime.task_hash is None
            or task_hashes.get(r.task_id) != r.runtime.task_hash
            or (runs_in is not None and harness_of(r) not in runs_in)
        ):
            continue
        by_task.setdefault(r.task_id, []).append(r)
    out: dict[str, FlakyHistory] = {}
    for task, recs in sorted(by_task.items()):
        ok = [r for r in recs if r.evaluation.passed]
        bad = [r for r in recs if not r.evaluation.passed]
        if not ok or not bad or all(r.run_id in now for r in recs):
            continue
        half = MAX_EVIDENCE_RUNS // 2
        runs = [r.run_id for r in ok[:half]] + [r.run_id for r in bad[:half]]
        out[task] = FlakyHistory(
            task_id=task,
            skill_hash=skill_hash,
            model=model,
            harness=_label(runs_in),
            task_hash=task_hashes[task],
            passed=len(ok),
            failed=len(bad),
            earlier=sum(r.run_id not in now for r in recs),
            runs=runs,
        )
    return out


def harness_of(r: RunRecord) -> tuple[str, str | None]:
    """The (harness, version) a record's student ran in."""
    return (r.runtime.harness, r.runtime.harness_version)


def _label(runs_in: set[tuple[str, str | None]] | None) -> str | None:
    if not runs_in:
        return None
    return ", ".join(sorted(f"{h} {v}" if v else h for h, v in runs_in))


__all__ = ["MAX_EVIDENCE_RUNS", "FlakyHistory", "flaky_from_history", "harness_of"]
