"""Flaky tasks from history: earlier verdicts of the same skill, model and task (pure).

docs/design/247-flaky-from-history.md. A task counts as flaky from history when judged
runs of the *same* skill content (package hash), the same student route and the same task
content (task hash) disagree — at least one passed, at least one failed, and at least one
of them came before the gate being decided. Nothing
changed between those runs that skillci knows of, so the flip is noise — the same rule as
repeats that disagree on the unchanged side (docs/design/224-flaky-tasks.md) applies:
with ``release_gate.flaky_tasks: exclude`` the task is not counted as a repair or a
regression, and the report shows the evidence.
"""

from __future__ import annotations

from collections.abc import Iterable

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
    task_hash: str = Field(description="Task content hash the runs shared.")
    passed: int = Field(ge=1, description="Runs that passed (earlier and current).")
    failed: int = Field(ge=1, description="Runs that failed (earlier and current).")
    earlier: int = Field(ge=1, description="How many of them came before this gate.")
    runs: list[str] = Field(description="Run ids of some of them, passes and fails both.")

    def describe(self) -> str:
        return (
            f"{self.task_id}: {self.passed} pass / {self.failed} fail over "
            f"{self.passed + self.failed} runs ({self.earlier} earlier) of skill "
            f"{self.skill_hash[:12]} on {self.model}, same task content (runs "
            f"{', '.join(self.runs)})"
        )


def flaky_from_history(
    records: Iterable[RunRecord],
    *,
    skill_hash: str,
    model: str,
    task_hashes: dict[str, str],
    current: Iterable[str] = (),
) -> dict[str, FlakyHistory]:
    """Tasks (id -> evidence) whose judged runs in ``records`` disagree, at least one of
    them an *earlier* run (not in ``current``, the run ids of the gate being decided:
    disagreement among those alone is the repeat rule's, :func:`~skillci.gate.verdict.is_flaky`).

    Only records of ``skill_hash`` on route ``model`` for a task whose recorded task hash
    equals ``task_hashes[task_id]`` count; errors and timeouts do not.
    """
    now = set(current)
    by_task: dict[str, list[RunRecord]] = {}
    for r in records:
        if (
            r.skill_hash != skill_hash
            or r.model.route != model
            or r.evaluation.state not in _JUDGED
            or r.runtime.task_hash is None
            or task_hashes.get(r.task_id) != r.runtime.task_hash
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
            task_hash=task_hashes[task],
            passed=len(ok),
            failed=len(bad),
            earlier=sum(r.run_id not in now for r in recs),
            runs=runs,
        )
    return out


__all__ = ["MAX_EVIDENCE_RUNS", "FlakyHistory", "flaky_from_history"]
