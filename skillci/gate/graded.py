"""Which graders of a graded task changed between base and head (pure).

A graded task's trial records every grader's own pass (``evaluation.details['graders']``,
a :class:`~skillci.graders.models.GradeReport`: assertions, rubrics, test.sh as
``verifier``). The task's pass/fail decides the gate (docs/design/365); this says *which*
grader moved it: per task and grader, the trials that passed it on each side, kept only
where the share differs (docs/design/366).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, ValidationError

from skillci.basemodels import FrozenModel
from skillci.gate.outcomes import comparable
from skillci.graders.models import GradeReport
from skillci.trace.models import RunRecord


class GraderChange(FrozenModel):
    """One grader of one task whose pass share differs between base and head."""

    task_id: str = Field(description="Task id.")
    grader: str = Field(description="Grader id ('verifier' for tests/test.sh).")
    kind: str = Field(description="An assertion kind, 'rubric' or 'verifier'.")
    base_passed: int = Field(ge=0, description="Base trials in which the grader passed.")
    base_trials: int = Field(ge=1, description="Base trials that ran the grader.")
    head_passed: int = Field(ge=0, description="Head trials in which the grader passed.")
    head_trials: int = Field(ge=1, description="Head trials that ran the grader.")

    @property
    def delta(self) -> float:
        return self.head_passed / self.head_trials - self.base_passed / self.base_trials


def grade_report(record: RunRecord) -> GradeReport | None:
    """The record's grader report, or None (a verifier-only task, or not one we can read)."""
    raw = record.evaluation.details.get("graders")
    if not isinstance(raw, dict):
        return None
    try:
        return GradeReport.model_validate(raw)
    except ValidationError:
        return None


def _tally(records: Sequence[RunRecord]) -> dict[tuple[str, str], tuple[str, int, int]]:
    out: dict[tuple[str, str], tuple[str, int, int]] = {}
    for r in comparable(records):
        report = grade_report(r)
        if report is None or r.forged_pass:
            continue
        for g in report.results:
            kind, passed, n = out.get((r.task_id, g.id), (g.kind, 0, 0))
            out[(r.task_id, g.id)] = (kind, passed + g.passed, n + 1)
    return out


def grader_changes(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> list[GraderChange]:
    """Graders whose pass share differs between ``base`` and ``head`` trials of the same
    task (measured trials only), by task then grader."""
    b, h = _tally(base), _tally(head)
    out = []
    for key in sorted(b.keys() & h.keys()):
        (kind, bp, bn), (_, hp, hn) = b[key], h[key]
        if bp * hn != hp * bn:
            out.append(
                GraderChange(
                    task_id=key[0],
                    grader=key[1],
                    kind=kind,
                    base_passed=bp,
                    base_trials=bn,
                    head_passed=hp,
                    head_trials=hn,
                )
            )
    return out


__all__ = ["GraderChange", "grade_report", "grader_changes"]
