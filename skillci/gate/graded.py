"""Which graders of a graded task changed between base and head (pure).

A graded task's trial records every grader's own pass (``evaluation.details['graders']``,
a :class:`~skillci.graders.models.GradeReport`: assertions, rubrics, test.sh as
``verifier``). The task's pass/fail decides the gate (docs/design/365); this says *which*
grader moved it: per task and grader, the trials that passed it on each side, kept only
where the share differs (docs/design/366). Across earlier gates, :func:`grader_history`
says where a grader's pass share on this head differs from its share on the heads of the
last gates that ran the same task version (docs/design/410): information, never evidence
for the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


#: Earlier gates a history line sums over (the newest that ran the task and grader).
HISTORY_GATES = 5


class GraderHistory(FrozenModel):
    """One grader of one task whose pass share on this head differs from its share on the
    heads of earlier gates of the same skill (same task version, student and judge):
    information for the reviewer, never part of the verdict (docs/design/410)."""

    task_id: str = Field(description="Task id.")
    grader: str = Field(description="Grader id ('verifier' for tests/test.sh).")
    kind: str = Field(description="An assertion kind, 'rubric' or 'verifier'.")
    task_hash: str = Field(description="The task's content hash (covers tests/graders.toml).")
    passed: int = Field(ge=0, description="Earlier gates' head trials in which it passed.")
    trials: int = Field(ge=1, description="Earlier gates' head trials that ran it.")
    gates: list[str] = Field(min_length=1, description="Those gates' ids, oldest first.")
    prs: list[int] = Field(
        default_factory=list, description="Pull requests those gates reviewed, oldest first."
    )
    head_passed: int = Field(ge=0, description="This gate's head trials in which it passed.")
    head_trials: int = Field(ge=1, description="This gate's head trials that ran it.")

    @property
    def delta(self) -> float:
        return self.head_passed / self.head_trials - self.passed / self.trials


@dataclass(frozen=True)
class EarlierGate:
    """An earlier gate's head trials, as :func:`grader_history` reads them."""

    gate_id: str
    created_at: str
    pr: int | None
    head: Sequence[RunRecord]


def _key(r: RunRecord, report: GradeReport) -> tuple[str, str, str | None] | None:
    """What makes two trials' grader results comparable: the task version (its content
    hash covers the graders file), the student route and the judge route (rubrics)."""
    if r.runtime.task_hash is None:
        return None
    return (r.runtime.task_hash, r.model.route, report.judge.route if report.judge else None)


def _keyed_tally(
    records: Iterable[RunRecord],
) -> dict[tuple[str, str], tuple[tuple[str, str, str | None], str, int, int]]:
    """(task, grader) -> (key, kind, passed, trials); a task whose trials differ in key
    (cannot happen within one side of one gate) keeps the first key's trials."""
    out: dict[tuple[str, str], tuple[tuple[str, str, str | None], str, int, int]] = {}
    for r in comparable(list(records)):
        report = grade_report(r)
        key = None if report is None else _key(r, report)
        if report is None or key is None or r.forged_pass:
            continue
        for g in report.results:
            k, kind, passed, n = out.get((r.task_id, g.id), (key, g.kind, 0, 0))
            if k == key:
                out[(r.task_id, g.id)] = (k, kind, passed + g.passed, n + 1)
    return out


def grader_history(
    earlier: Iterable[EarlierGate],
    head: Sequence[RunRecord],
    *,
    limit: int = HISTORY_GATES,
) -> list[GraderHistory]:
    """Graders of ``head``'s tasks whose pass share differs from the one summed over the
    heads of the last ``limit`` gates in ``earlier`` that ran the same task version, student
    and judge (:func:`_key`), by task then grader. A trial is counted once (gates may
    share cached trials); no earlier gate, or the same share: no entry."""
    now = _keyed_tally(head)
    # a trial counts once: not when this head reused it from the cache, and in the newest
    # earlier gate that holds it
    seen = {r.run_id for r in head}
    past: dict[tuple[str, str], list[tuple[EarlierGate, int, int]]] = {}
    for gate in sorted(earlier, key=lambda g: (g.created_at, g.gate_id), reverse=True):
        fresh = [r for r in gate.head if r.run_id not in seen]
        seen.update(r.run_id for r in fresh)
        for tg, (key, _kind, passed, n) in _keyed_tally(fresh).items():
            if tg in now and now[tg][0] == key and len(past.get(tg, [])) < limit:
                past.setdefault(tg, []).append((gate, passed, n))
    out = []
    for tg in sorted(past):
        key, kind, hp, hn = now[tg]
        last = past[tg][::-1]
        passed, n = sum(p for _, p, _ in last), sum(n for _, _, n in last)
        if passed * hn == hp * n:
            continue
        prs = [g.pr for g, _, _ in last if g.pr is not None]
        out.append(
            GraderHistory(
                task_id=tg[0],
                grader=tg[1],
                kind=kind,
                task_hash=key[0],
                passed=passed,
                trials=n,
                gates=[g.gate_id for g, _, _ in last],
                prs=list(dict.fromkeys(prs)),
                head_passed=hp,
                head_trials=hn,
            )
        )
    return out


__all__ = [
    "HISTORY_GATES",
    "EarlierGate",
    "GraderChange",
    "GraderHistory",
    "grade_report",
    "grader_changes",
    "grader_history",
]
