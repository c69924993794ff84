"""Align a student trajectory with a teacher trajectory on the same task.

Two views, both from observable events only:

- **Action alignment**: a longest common subsequence over the actions, where two actions
  match when they are of the same kind and about the same thing (same file, overlapping
  test ids, same normalized command or query). It yields matched pairs, the actions only
  one side took, and the first point where the two diverge.
- **State alignment**: for each milestone (localized, reproduced, edited, verified, target
  test passed, diff inspected) the step at which each side reached it. States the teacher
  reached and the student did not are the usual heart of a diagnosis.

Pure and deterministic: the same two records always give the same alignment.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from skillci.analyze.trajectory import Action, ActionKind, Trajectory

#: Milestone names, in the order a repair normally reaches them.
STATES = (
    "first_localize",
    "reproduced",
    "first_edit",
    "verified",
    "target_test_passed",
    "diff_inspected",
)


def actions_match(a: Action, b: Action) -> bool:
    """Same kind and same subject (file, test ids, command or query)."""
    if a.kind is not b.kind:
        return False
    if a.kind is ActionKind.run_test:
        if not a.tests or not b.tests:
            return not a.tests and not b.tests
        return bool(set(a.tests) & set(b.tests)) or {t.split("::")[0] for t in a.tests} == {
            t.split("::")[0] for t in b.tests
        }
    if a.files or b.files:
        return bool(set(a.files) & set(b.files))
    return a.target == b.target


@dataclass(frozen=True)
class Alignment:
    """How a student trajectory lines up with a teacher trajectory."""

    pairs: tuple[tuple[int, int], ...]
    """(student action index, teacher action index) of matched actions, in order."""
    student_only: tuple[int, ...]
    """Student action indexes with no teacher counterpart."""
    teacher_only: tuple[int, ...]
    """Teacher action indexes with no student counterpart."""
    first_divergence: tuple[int | None, int | None]
    """(student index, teacher index) of the first unmatched action on each side."""
    states: dict[str, tuple[int | None, int | None]]
    """Milestone -> (student step, teacher step); None = never reached."""
    similarity: float
    """2 * matches / (len(student) + len(teacher)); 1.0 for two empty trajectories."""

    @property
    def missing_states(self) -> list[str]:
        """States the teacher reached and the student never did, in repair order."""
        return [s for s in STATES if self.states[s][1] is not None and self.states[s][0] is None]

    @property
    def extra_states(self) -> list[str]:
        """States the student reached and the teacher never did."""
        return [s for s in STATES if self.states[s][0] is not None and self.states[s][1] is None]


def _lcs(a: tuple[Action, ...], b: tuple[Action, ...]) -> list[tuple[int, int]]:
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, nxt = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            if actions_match(a[i], b[j]):
                row[j] = nxt[j + 1] + 1
            else:
                row[j] = max(nxt[j], row[j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if actions_match(a[i], b[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align(student: Trajectory, teacher: Trajectory) -> Alignment:
    """Align ``student`` with ``teacher`` (see the module docstring)."""
    pairs = _lcs(student.actions, teacher.actions)
    ms = {p[0] for p in pairs}
    mt = {p[1] for p in pairs}
    s_only = tuple(i for i in range(len(student.actions)) if i not in ms)
    t_only = tuple(j for j in range(len(teacher.actions)) if j not in mt)
    sm, tm = student.milestones, teacher.milestones
    states = {
        f.name: (getattr(sm, f.name), getattr(tm, f.name)) for f in fields(sm) if f.name in STATES
    }
    total = len(student.actions) + len(teacher.actions)
    sim = 1.0 if total == 0 else 2 * len(pairs) / total
    return Alignment(
        pairs=tuple(pairs),
        student_only=s_only,
        teacher_only=t_only,
        first_divergence=(s_only[0] if s_only else None, t_only[0] if t_only else None),
        states=states,
        similarity=round(sim, 4),
    )


__all__ = ["STATES", "Alignment", "actions_match", "align"]
