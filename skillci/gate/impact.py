"""Test-impact selection: re-run only the tasks whose loaded skill content changed (pure).

A task's trials on base record which rendered skill files the agent actually loaded
(progressive disclosure: the bootstrap always, workflow/tool/recovery files on demand).
If none of those files changed between base and head, the student sees the same skill on
that task, so its base trials stand for head as well and are reused. The bootstrap
(SKILL.md, plus any index the harness always reads) counts as loaded by every task: when
it changes, every task re-runs. A new on-demand file can only be reached through the
bootstrap's index, which then changes too, so additions are covered by the same rule.

Prose is judged at section level: :func:`changed_sections` names the markdown sections
that changed in each rendered file, and every reason says which sections a task's re-run
rests on ("always-loaded SKILL.md § Verify changed"). Selection itself stays per loaded
file, because a harness loads a file whole: a section of the bootstrap is in every task's
context, so an edit to any of its sections re-runs every task (docs/design/191).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from skillci.gate.metrics import Side, TrialOutcome
from skillci.patch.prose import sections

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
    changed_sections: dict[str, list[str]] = Field(
        default_factory=dict, description="Changed markdown sections per changed file."
    )
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


def changed_sections(
    before: Mapping[str, bytes], after: Mapping[str, bytes]
) -> dict[str, list[str]]:
    """Per changed markdown file, the headings of its sections added, removed or edited."""
    out: dict[str, list[str]] = {}
    for path in sorted(changed_files(before, after)):
        if not path.endswith(".md"):
            continue
        try:
            b = dict(sections(before.get(path, b"").decode("utf-8")))
            a = dict(sections(after.get(path, b"").decode("utf-8")))
        except UnicodeDecodeError:
            continue
        names = [n for n in a if n not in b or b[n].strip() != a[n].strip()]
        names += [n for n in b if n not in a]
        if names:
            out[path] = names
    return out


def _label(paths: Iterable[str], secs: Mapping[str, list[str]]) -> str:
    """``SKILL.md § A, B; tools/x.md`` — files with their changed sections."""
    parts = []
    for p in paths:
        names = secs.get(p, [])
        shown = ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "")
        parts.append(f"{p} § {shown}" if names else p)
    return "; ".join(parts)


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
    sections_changed: Mapping[str, list[str]] | None = None,
) -> ImpactSelection:
    """Split ``tasks`` (default: the tasks with base trials) into re-run and reuse.

    A task re-runs when it has no base trials to reuse, when an always-loaded file
    changed, or when it loaded a changed file; otherwise its base trials are reused.
    """
    changed_set = {_norm(p) for p in changed}
    secs = {_norm(k): list(v) for k, v in (sections_changed or {}).items()}
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
            reason = f"always-loaded file changed: {_label(bootstrap_changed, secs)}"
        elif hit:
            reason = f"loaded changed file(s): {_label(hit, secs)}"
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
        changed_sections={k: v for k, v in secs.items() if k in changed_set},
        tasks=rows,
    )
