"""Test-impact selection: re-run only the tasks whose loaded skill content changed (pure).

A task's trials on base record which rendered skill files the agent actually loaded
(progressive disclosure: the bootstrap always, workflow/tool/recovery files on demand).
If none of those files changed between base and head, the student sees the same skill on
that task, so its base trials stand for head as well and are reused. The bootstrap
(SKILL.md, plus any index the harness always reads) counts as loaded by every task: when
it changes, every task re-runs. A new on-demand file can only be reached through the
bootstrap's index, which then changes too, so additions are covered by the same rule.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from skillci.gate.metrics import Side, TrialOutcome

BOOTSTRAP_FILES: tuple[str, ...] = ("SKILL.md",)


class TaskImpact(BaseModel):
    """Why one task is re-run or reused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(description="Task id.")
    rerun: bool = Field(description="True: run on head; False: reuse base trials.")
    reason: str = Field(description="One line: why.")
    changed_loaded: list[str] = Field(description="Changed files this task loaded.")


class ImpactSelection(BaseModel):
    """Which tasks to re-run on head and which base trials to reuse."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rerun: list[str] = Field(description="Tasks to run on head (sorted).")
    reuse: list[str] = Field(description="Tasks whose base trials stand for head (sorted).")
    selected: int = Field(description="len(rerun).")
    total: int = Field(description="Tasks considered.")
    changed_files: list[str] = Field(description="Changed rendered skill files (sorted).")
    always_loaded: list[str] = Field(description="Files counted as loaded by every task.")
    tasks: list[TaskImpact] = Field(description="Per task, sorted by id.")

    @property
    def summary(self) -> str:
        share = f" ({self.selected / self.total:.0%})" if self.total else ""
        return f"re-run {self.selected} of {self.total} tasks{share}, reuse {len(self.reuse)}"


@functools.lru_cache(maxsize=4096)
def _norm(path: str) -> str:
    """POSIX form without a leading ``./`` (cached: the same few paths recur per trial)."""
    return PurePosixPath(path.replace("\\", "/")).as_posix().removeprefix("./")


def changed_files(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> set[str]:
    """Rendered files added, removed or whose bytes differ between two renders."""
    keys = before.keys() | after.keys()
    return {_norm(k) for k in keys if before.get(k) != after.get(k)}


def loaded_files_by_task(
    outcomes: Iterable[TrialOutcome], *, side: Side = "base"
) -> dict[str, frozenset[str]]:
    """Union over repeats of the skill files each task's trials on ``side`` loaded."""
    acc: dict[str, set[str]] = {}
    for o in outcomes:
        if o.side == side:
            acc.setdefault(o.task_id, set()).update(_norm(p) for p in o.loaded_skill_files)
    return {t: frozenset(v) for t, v in acc.items()}


def select_tasks(
    changed: Iterable[str],
    loaded_by_task: Mapping[str, Iterable[str]],
    *,
    tasks: Iterable[str] | None = None,
    always_loaded: Iterable[str] = BOOTSTRAP_FILES,
) -> ImpactSelection:
    """Split ``tasks`` (default: the tasks with base trials) into re-run and reuse.

    A task re-runs when it has no base trials to reuse, when an always-loaded file
    changed, or when it loaded a changed file; otherwise its base trials are reused.
    """
    changed_set = {_norm(p) for p in changed}
    always = sorted({_norm(p) for p in always_loaded})
    bootstrap_changed = sorted(changed_set.intersection(always))
    universe = sorted(set(loaded_by_task) if tasks is None else set(tasks))
    rows: list[TaskImpact] = []
    for task_id in universe:
        if task_id not in loaded_by_task:
            rows.append(
                TaskImpact(
                    task_id=task_id, rerun=True, reason="no base trials to reuse", changed_loaded=[]
                )
            )
            continue
        loaded = {_norm(p) for p in loaded_by_task[task_id]}.union(always)
        hit = sorted(loaded & changed_set)
        if bootstrap_changed:
            reason = f"always-loaded file changed: {', '.join(bootstrap_changed)}"
        elif hit:
            reason = f"loaded changed file(s): {', '.join(hit)}"
        else:
            reason = "loaded skill files unchanged"
        rows.append(TaskImpact(task_id=task_id, rerun=bool(hit), reason=reason, changed_loaded=hit))
    rerun = [r.task_id for r in rows if r.rerun]
    return ImpactSelection(
        rerun=rerun,
        reuse=[r.task_id for r in rows if not r.rerun],
        selected=len(rerun),
        total=len(rows),
        changed_files=sorted(changed_set),
        always_loaded=always,
        tasks=rows,
    )
