"""Re-run only the verifier on a stored trial: the kept final workspace, the task's new tests.

A trial dir keeps what a regrade needs (docs/design/186-regrade.md):

    <trial>/final-workspace.tar.gz   the files the agent added or changed in the workspace, after
                                     the agent and before the verifier (bounded: MAX_KEEP_*)
    <trial>/regrade.json             :class:`RegradeBase`: which files the agent deleted, the
                                     task's agent-side and verifier hashes, the cache key's
                                     inputs, the sandbox

:func:`regrade_trial` rebuilds the workspace the way the runner first made it (the task's
environment copy, or the image's working directory), puts the agent's files back, runs the
task's *current* ``tests/test.sh`` under the same sandbox rules, and writes a complete trial
dir under the cache key the trial has with the current task: the scheduler (``eval run``, the
gate) then finds it like any cached trial. The new record names the original
(``metadata.regraded_from``). Only when the task changed in its tests alone (same agent-side
hash) and the trial kept its final workspace.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillci.agents.base import AgentResult
from skillci.errors import UsageError
from skillci.fsutil import atomic_write_bytes, atomic_write_text
from skillci.runners.base import AgentSpec, TrialSpec, key_of
from skillci.runners.trialdir import FINAL_OUTPUT, RECORD, TRAJECTORY, trial_dir, write_marker
from skillci.tasks.loader import agent_side_hash
from skillci.tasks.models import Task
from skillci.tasks.reward import logs_layout
from skillci.trace.models import RunRecord, new_run_id

REGRADE_SCHEMA_VERSION = 1
REGRADE = "regrade.json"
FINAL_TAR = "final-workspace.tar.gz"
#: A final workspace is kept only within these bounds (bytes of changed files, files).
MAX_KEEP_BYTES = 16 * 1024 * 1024
MAX_KEEP_FILES = 5000
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache"}


class RegradeBase(BaseModel):
    """regrade.json: what a trial kept so its verifier can be re-run later."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=REGRADE_SCHEMA_VERSION, description="Shape version.")
    task_id: str = Field(description="Task id.")
    agent_side_hash: str = Field(description="Hash of the task minus its tests, at trial time.")
    verifier_hash: str = Field(description="Hash of the tests the trial was graded with.")
    sandbox: str = Field(description="TrialSpec.sandbox: auto, bwrap, none or docker.")
    image: str | None = Field(default=None, description="TrialSpec.image, if any.")
    key_data: dict[str, object] | None = Field(
        default=None, description="Inputs of the trial cache key (None: keyed otherwise)."
    )
    kept: bool = Field(description="The final workspace is in final-workspace.tar.gz.")
    reason: str | None = Field(default=None, description="Why it was not kept.")
    changed: list[str] = Field(default_factory=list, description="Files added or changed.")
    deleted: list[str] = Field(default_factory=list, description="Files the agent deleted.")
    regraded_from: str | None = Field(
        default=None, description="Run id this trial was regraded from, if it was."
    )


def snapshot(ws: Path) -> dict[str, str]:
    """sha256 of every regular file and link in the workspace (build caches left out)."""
    out: dict[str, str] = {}
    if not ws.is_dir():
        return out
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws)
        if any(part in _SKIP_DIRS for part in rel.parts):
            continue
        if p.is_symlink():
            out[rel.as_posix()] = "link:" + str(p.readlink())
        elif p.is_file():
            out[rel.as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def keep_final(
    ws: Path,
    baseline: dict[str, str],
    trial: Path,
    base: RegradeBase,
    *,
    max_bytes: int = MAX_KEEP_BYTES,
    max_files: int = MAX_KEEP_FILES,
) -> RegradeBase:
    """Write ``final-workspace.tar.gz`` (changed files) and return ``base`` filled in;
    beyond ``max_files`` or ``max_bytes`` nothing is kept and ``reason`` says why."""
    base, tar = final_tar(ws, baseline, base, max_bytes=max_bytes, max_files=max_files)
    if tar is not None:
        atomic_write_bytes(trial / FINAL_TAR, tar)
    return base


def final_tar(
    ws: Path,
    baseline: dict[str, str],
    base: RegradeBase,
    *,
    max_bytes: int = MAX_KEEP_BYTES,
    max_files: int = MAX_KEEP_FILES,
) -> tuple[RegradeBase, bytes | None]:
    """:func:`keep_final` up to the write: ``base`` filled in and the bytes of
    ``final-workspace.tar.gz`` (None: nothing kept), read from ``ws`` now."""
    now = snapshot(ws)
    changed = sorted(p for p, h in now.items() if baseline.get(p) != h)
    deleted = sorted(p for p in baseline if p not in now)
    size = sum((ws / p).lstat().st_size for p in changed)
    if len(changed) > max_files or size > max_bytes:
        why = f"{len(changed)} changed files, {size} bytes (limits {max_files}, {max_bytes})"
        return base.model_copy(update={"kept": False, "reason": why, "deleted": deleted}), None
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for p in changed:
            tf.add(ws / p, arcname=p, recursive=False)
    kept = base.model_copy(update={"kept": True, "changed": changed, "deleted": deleted})
    return kept, buf.getvalue()


def restore_final(trial: Path, base: RegradeBase, ws: Path) -> None:
    """Put the agent's kept files over a freshly prepared workspace."""
    with tarfile.open(trial / FINAL_TAR) as tf:
        tf.extractall(ws, filter="data")
    for p in base.deleted:
        target = ws / p
        if target.is_symlink() or target.is_file():
            target.unlink()


def read_base(trial: Path) -> RegradeBase | None:
    try:
        return RegradeBase.model_validate_json((trial / REGRADE).read_bytes())
    except (OSError, ValueError):
        return None


def regrade_key(base: RegradeBase, task: Task) -> str | None:
    """The cache key the trial has with ``task`` as it is now (None: not keyed by spec)."""
    if base.key_data is None:
        return None
    return key_of({**base.key_data, "task": task.content_hash})


def needs_regrade(base: RegradeBase, task: Task) -> str | None:
    """Why the trial cannot (or need not) be regraded against ``task``; None when it can."""
    if not base.kept:
        return f"final workspace not kept ({base.reason or 'no workspace'})"
    if base.key_data is None:
        return "not keyed by its spec (pipeline slot or raw-task trial)"
    if agent_side_hash(task.root, task.verifier_dir) != base.agent_side_hash:
        return "the task changed outside its tests (instruction, environment or task.toml)"
    if task.verifier_hash == base.verifier_hash:
        return "tests unchanged"
    return None


def regrade_trial(old_dir: Path, task: Task, state_dir: Path) -> RunRecord:
    """Re-run ``task``'s current verifier on the kept final workspace of ``old_dir``; write
    and return the new record under the trial's new cache key (see the module docstring)."""
    from skillci.runners.policy import sandbox_for
    from skillci.runners.scheduler import runner_for

    base = read_base(old_dir)
    old = RunRecord.model_validate_json((old_dir / RECORD).read_bytes())
    assert base is not None
    key = regrade_key(base, task)
    assert key is not None
    spec = TrialSpec(
        task=task,
        agent=AgentSpec(kind="noop", role=old.agent_role.value),
        sandbox=sandbox_for([task], base.sandbox),
        image=base.image,
        state_dir=state_dir,
    )
    runner = runner_for(spec)
    from skillci.runners.local import TrialRunner

    if not isinstance(runner, TrialRunner):  # a plug-in runner without the verify hook
        raise UsageError(
            f"the {runner.name} runner cannot regrade (it is no TrialRunner subclass)",
            hint="re-run the trial instead: skillci eval run --rerun all",
        )
    new = trial_dir(state_dir, key)
    if new.exists():
        shutil.rmtree(new)
    logs = logs_layout(new).ensure()
    for name in (TRAJECTORY, FINAL_OUTPUT):
        src = logs_layout(old_dir).agent / name
        if src.is_file():
            shutil.copy2(src, logs.agent / name)
    for name in (FINAL_TAR, "workspace.diff"):
        if (old_dir / name).is_file():
            shutil.copy2(old_dir / name, new / name)
    ws = new / "workspace"
    runner.prepare_workspace(spec, ws)
    restore_final(new, base, ws)
    evaluation = runner._verify(spec, new, ws, AgentResult(final_output=old.final_output))
    shutil.rmtree(ws, ignore_errors=True)
    before = old.evaluation.reward
    line = (
        f"regraded: verifier re-run on the kept final workspace of {old.run_id} "
        f"(reward {before} -> {evaluation.reward})"
    )
    runtime = old.runtime.model_copy(
        update={"evaluator_version": task.verifier_hash, "task_hash": task.content_hash}
    )
    record = old.model_copy(
        update={
            "run_id": new_run_id(),
            "evaluation": evaluation,
            "runtime": runtime,
            "trial_cache_key": key,
            "warnings": [*old.warnings, line],
            "metadata": {
                **old.metadata,
                "trial_dir": str(Path(state_dir.name) / "trials" / key[:2] / key),
                "regraded_from": old.run_id,
                "regraded_from_key": old.trial_cache_key,
            },
        }
    )
    record = RunRecord.model_validate(record.model_dump())
    new_base = base.model_copy(
        update={
            "verifier_hash": task.verifier_hash,
            "key_data": {**(base.key_data or {}), "task": task.content_hash},
            "regraded_from": old.run_id,
        }
    )
    atomic_write_text(new / REGRADE, new_base.model_dump_json(indent=1))
    atomic_write_text(new / RECORD, record.model_dump_json(indent=1))
    write_marker(new, record, key)
    return record


def kept_trials(state_dir: Path) -> list[tuple[Path, RegradeBase]]:
    """Every trial dir under ``state_dir`` with a regrade.json, in path order."""
    root = state_dir / "trials"
    out = []
    for f in sorted(root.glob(f"*/*/{REGRADE}")) if root.is_dir() else []:
        base = read_base(f.parent)
        if base is not None:
            out.append((f.parent, base))
    return out


def dump_key_data(data: dict[str, object]) -> dict[str, object]:
    """``key_data`` as JSON values (what regrade.json stores and :func:`key_of` hashes)."""
    loaded: dict[str, object] = json.loads(json.dumps(data, sort_keys=True, default=str))
    return loaded


class RegradedTrial(BaseModel):
    """One stored trial and what a regrade made (or would make) of it."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="Task id.")
    repeat_index: int = Field(description="0-based repeat.")
    old_run_id: str = Field(description="The stored trial's run id.")
    old_state: str = Field(description="Its evaluation state.")
    old_reward: float | None = Field(default=None, description="Its reward.")
    new_run_id: str | None = Field(default=None, description="The regraded record's run id.")
    new_state: str | None = Field(default=None, description="State under the current tests.")
    new_reward: float | None = Field(default=None, description="Reward under the current tests.")
    new_key: str | None = Field(default=None, description="Cache key with the current task.")
    skipped: str | None = Field(default=None, description="Why it was not regraded.")


class TaskDelta(BaseModel):
    """Per task: mean reward and passes before and after."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="Task id.")
    trials: int = Field(description="Trials regraded (or that would be, with --dry-run).")
    old_mean_reward: float | None = Field(description="Mean old reward.")
    new_mean_reward: float | None = Field(description="Mean new reward (None: dry run).")
    old_passed: int = Field(description="Trials that passed before.")
    new_passed: int | None = Field(description="Trials that pass now (None: dry run).")


class RegradeResult(BaseModel):
    """The outcome of ``skillci eval regrade``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=REGRADE_SCHEMA_VERSION, description="Shape version.")
    dry_run: bool = Field(description="Nothing was run or written.")
    trials: list[RegradedTrial] = Field(description="Stored trials of the tasks, regraded or not.")
    tasks: list[TaskDelta] = Field(description="Per-task deltas over the regraded trials.")


def deltas(trials: list[RegradedTrial]) -> list[TaskDelta]:
    by_task: dict[str, list[RegradedTrial]] = {}
    for t in trials:
        if t.skipped is None:
            by_task.setdefault(t.task_id, []).append(t)

    def mean(xs: list[float | None]) -> float | None:
        vals = [x for x in xs if x is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    out = []
    for task_id, ts in sorted(by_task.items()):
        done = all(t.new_state is not None for t in ts)
        out.append(
            TaskDelta(
                task_id=task_id,
                trials=len(ts),
                old_mean_reward=mean([t.old_reward for t in ts]),
                new_mean_reward=mean([t.new_reward for t in ts]) if done else None,
                old_passed=sum(t.old_state == "passed" for t in ts),
                new_passed=sum(t.new_state == "passed" for t in ts) if done else None,
            )
        )
    return out


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "regrade-base": RegradeBase,
    "regrade-result": RegradeResult,
}

__all__ = [
    "FINAL_TAR",
    "MAX_KEEP_BYTES",
    "MAX_KEEP_FILES",
    "REGRADE",
    "SAVED_MODELS",
    "RegradeBase",
    "RegradeResult",
    "RegradedTrial",
    "TaskDelta",
    "deltas",
    "dump_key_data",
    "final_tar",
    "keep_final",
    "kept_trials",
    "needs_regrade",
    "read_base",
    "regrade_key",
    "regrade_trial",
    "restore_final",
    "snapshot",
]
