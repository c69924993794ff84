"""Run a task's trials into named trial dirs (``.../<stage>/test-NNN``), resumably.

Each slot is one repeat: a :class:`~skillci.runners.base.TrialSpec` (seed = repeat
index), its cache key, and the dir ``test-NNN`` it lives in. A slot whose dir is
*complete* (``skillci.runners.trialdir.read_complete``: marker, record, reward and
trajectory agree, same key) is reused as is. Otherwise any dir there is moved to the
sibling ``.incomplete/`` and the trial runs — unless a complete trial with the same key
exists elsewhere in the run dir (another stage ran the very same skill), which is
copied in instead. A killed run therefore loses at most the trials that were running;
it never keeps a half-written one and never runs a finished one twice.

Trials run in this thread, or with ``parallel > 1`` in the command's warm trial pool
(:func:`skillci.runners.pool.trial_pool`: daemon threads that die with the command, even
under SIGKILL, and are reused by every stage). The compile pipeline's eval stages and Deep's rollouts use it; ``eval run`` and
the gate use :class:`~skillci.runners.scheduler.Scheduler`, which keys trial dirs by cache
key under the state dir instead of naming them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import RunnerError
from skillci.runners.base import AgentSpec, TrialSpec, plan
from skillci.runners.pool import TRASH, submit_bounded
from skillci.runners.pool import quarantine as move_aside
from skillci.runners.scheduler import needs_litellm, sandbox_kind, warm
from skillci.runners.trialdir import INCOMPLETE, MARKER, TrialMeta, read_complete
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.models import Task
from skillci.trace.models import RunRecord

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Slot:
    """One repeat of one trial, and where it lives."""

    spec: TrialSpec
    key: str
    path: Path


def trial_name(i: int) -> str:
    return f"test-{i:03d}"


def plan_slots(
    task: Task,
    agent: AgentSpec,
    pkg: SkillPackage | None,
    n: int,
    dest: Path,
    state_dir: Path,
    *,
    require_skill: bool = True,
) -> list[Slot]:
    """``n`` slots ``dest/test-000 ..`` of ``task`` with ``pkg`` (repeat i uses seed i)."""
    specs = plan(
        [task],
        agent,
        repeats=n,
        state_dir=state_dir,
        skill=render(pkg, "builtin") if pkg is not None else None,
        skill_package_hash=pkg.content_hash if pkg is not None else None,
        require_skill=require_skill and pkg is not None,
    )
    return [Slot(s, s.cache_key(sandbox_kind(s)), dest / trial_name(s.repeat_index)) for s in specs]


def quarantine(path: Path) -> Path | None:
    """Move an incomplete trial dir to ``<parent>/.incomplete/``."""
    return move_aside(path, path.parent / INCOMPLETE)


def _markers(root: Path) -> list[Path]:
    """The trial markers under ``root``, in a stable order, never inside a dir set aside
    (``.incomplete``) or being deleted (``.trash``: the background deleter empties it while
    this walks, and a trial dir renamed there is discarded, not complete)."""
    found: list[Path] = []
    for here, dirs, files in os.walk(root):  # a dir that vanishes mid-walk is skipped
        dirs[:] = sorted(d for d in dirs if d not in (INCOMPLETE, TRASH))
        if MARKER in files:
            found.append(Path(here) / MARKER)
    return sorted(found)


def index_complete(roots: Sequence[Path]) -> dict[str, Path]:
    """Trial key -> a dir holding that trial complete, under ``roots``."""
    out: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for marker in _markers(root):
            d = marker.parent
            if not d.name.startswith("test-"):
                continue
            try:
                meta = TrialMeta.model_validate_json(marker.read_bytes())
            except ValueError:
                continue
            if meta.key not in out and read_complete(d, meta.key) is not None:
                out[meta.key] = d
    return out


def _copy_in(src: Path, dest: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.copy-", dir=dest.parent))
    shutil.copytree(src, tmp, dirs_exist_ok=True)
    os.rename(tmp, dest)


def run_one(spec: TrialSpec, key: str, path: str) -> str | None:
    """Run one trial into ``path`` (a worker entry point); returns an error or None."""
    from skillci.runners.registry import runner_for_mode

    try:
        runner_for_mode(spec.sandbox).run_trial(spec, Path(path), key)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def run_slots(
    slots: Sequence[Slot],
    *,
    parallel: int = 1,
    reuse_from: Sequence[Path] = (),
    progress: Progress | None = None,
) -> list[RunRecord]:
    """Records of every slot, in order (see the module docstring)."""
    say = progress or (lambda _m: None)
    pending: list[Slot] = []
    cache: dict[str, Path] | None = None
    for slot in slots:
        if read_complete(slot.path, slot.key) is not None:
            say(f"{slot.path.name}: complete, reused")
            continue
        slot.path.parent.mkdir(parents=True, exist_ok=True)
        moved = quarantine(slot.path)
        if moved is not None:
            say(f"{slot.path.name}: incomplete, moved to {INCOMPLETE}/")
        if cache is None:
            cache = index_complete(reuse_from)
        src = cache.get(slot.key)
        if src is not None and src.resolve() != slot.path.resolve():
            _copy_in(src, slot.path)
            say(f"{slot.path.name}: same trial found in {src.parent.name}/{src.name}, copied")
            continue
        pending.append(slot)
    errors: list[str] = []
    if parallel <= 1 or len(pending) <= 1:
        for slot in pending:
            say(f"{slot.path.name}: running")
            err = run_one(slot.spec, slot.key, str(slot.path))
            if err:
                errors.append(f"{slot.path.name}: {err}")
    else:
        warm(litellm=needs_litellm(s.spec.agent for s in pending))
        futs = dict(
            zip(
                submit_bounded(lambda s: run_one(s.spec, s.key, str(s.path)), pending, parallel),
                pending,
                strict=True,
            )
        )
        for s in pending:
            say(f"{s.path.name}: running")
        for fut, s in futs.items():
            try:
                res = fut.result()
                err = res if isinstance(res, str) else None
            except Exception as exc:  # the trial's thread failed
                err = f"worker failed: {type(exc).__name__}: {exc}"
            if err:
                errors.append(f"{s.path.name}: {err}")
    out: list[RunRecord] = []
    for slot in slots:
        done = read_complete(slot.path, slot.key)
        if done is None:
            detail = "; ".join(errors[:3]) or "no complete record was written"
            raise RunnerError(
                f"trial {slot.path} did not complete: {detail}",
                hint="fix the cause and re-run with the same --run-dir: complete trials are kept",
            )
        out.append(done[1])
    return out


__all__ = [
    "Progress",
    "Slot",
    "index_complete",
    "plan_slots",
    "quarantine",
    "run_one",
    "run_slots",
    "trial_name",
]
