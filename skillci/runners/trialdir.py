"""Trial dirs: layout, the completeness check and the ``.incomplete/`` quarantine.

    <state>/trials/<key[:2]>/<key>/
        record.json                   the run record (redacted)
        logs/agent/trajectory.json    the events (redacted)
        logs/agent/final_output.txt   the final answer (redacted after the verifier ran)
        logs/verifier/reward.txt|json what the verifier wrote
        workspace.diff                git diff of the workspace against its baseline
        final-workspace.tar.gz        the agent's added/changed files (bounded; for regrade)
        regrade.json                  what a regrade needs (skillci.runners.regrade)
        trial.json                    written LAST: the completion marker

A dir is *complete* only when trial.json, record.json, the reward and the trajectory all
parse and agree (same key, run id, reward, event count). Anything else — a dir left by a
killed run, a crash, a hand edit — is moved to ``<state>/trials/.incomplete/`` and the trial
runs again. A per-trial file lock keeps two processes from running or judging one trial
at the same time.

Checking that a dir is complete parses three files per trial; an unchanged re-gate asks
for hundreds of trials. :func:`read_complete_many` remembers, in
``<state>/trials/verified.sqlite``, the stat stamp (inode, size, mtime of each file the
check reads) of every dir it found complete, and trusts a dir whose stamp is unchanged
without re-checking it (its record is still parsed: the caller needs it). A dir changed in
any way (a hand edit, a quarantine and re-run, a regrade) has another stamp and is checked
again; a dir whose files are younger than :data:`RACY_SEC` is never remembered (a write in
the same mtime tick could keep the stamp; docs/design/267).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.fsutil import atomic_write_text
from skillci.runners.pool import INCOMPLETE
from skillci.runners.pool import quarantine as move_aside
from skillci.tasks.reward import REWARD_JSON, REWARD_TXT, logs_layout, read_reward
from skillci.trace.models import RunRecord

TRIAL_SCHEMA_VERSION = 1
MARKER = "trial.json"
RECORD = "record.json"
TRAJECTORY = "trajectory.json"
FINAL_OUTPUT = "final_output.txt"
VERIFIED_DB = "verified.sqlite"
#: Files younger than this (seconds) are not remembered as verified (racy stat stamps).
RACY_SEC = 2.0


class TrialMeta(BaseModel):
    """trial.json: the completion marker and a summary of the trial."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=TRIAL_SCHEMA_VERSION, description="Marker schema version.")
    key: str = Field(description="Trial cache key (sha256).")
    run_id: str = Field(description="Run id of record.json.")
    task_id: str = Field(description="Task id.")
    repeat_index: int = Field(description="0-based repeat.")
    state: str = Field(description="Evaluation state (passed, failed, ...).")
    reward: float | None = Field(default=None, description="Verifier reward.")
    events: int = Field(description="Number of events in the trajectory.")
    completed_at: datetime = Field(description="UTC time the trial completed.")


def trials_root(state_dir: Path) -> Path:
    return state_dir / "trials"


def trial_dir(state_dir: Path, key: str) -> Path:
    return trials_root(state_dir) / key[:2] / key


def lock_for(state_dir: Path, key: str) -> FileLock:
    path = trials_root(state_dir) / key[:2] / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path))


def read_complete(path: Path, key: str) -> tuple[TrialMeta, RunRecord] | None:
    """(marker, record) when ``path`` holds a complete, consistent trial; else None."""
    try:
        meta = TrialMeta.model_validate_json((path / MARKER).read_bytes())
        record = RunRecord.model_validate_json((path / RECORD).read_bytes())
        events = json.loads((logs_layout(path).agent / TRAJECTORY).read_text())
    except (OSError, ValidationError, ValueError):
        return None
    if meta.key != key or record.trial_cache_key != key or record.run_id != meta.run_id:
        return None
    if (
        not isinstance(events, list)
        or len(events) != len(record.events)
        or meta.events != len(events)
    ):
        return None
    reward = read_reward(logs_layout(path).root)
    if reward.value != record.evaluation.reward or meta.reward != record.evaluation.reward:
        return None
    if meta.state != record.evaluation.state.value:
        return None
    return meta, record


def _stamp(path: Path) -> tuple[str, int] | None:
    """(stat stamp, newest mtime ns) of the files :func:`read_complete` reads; None when
    the marker or the record is missing."""
    logs = logs_layout(path)
    parts = []
    newest = 0
    files = (
        path / MARKER,
        path / RECORD,
        logs.agent / TRAJECTORY,
        logs.verifier / REWARD_TXT,
        logs.verifier / REWARD_JSON,
    )
    for i, f in enumerate(files):
        try:
            st = os.stat(f)
        except OSError:
            if i < 2:
                return None
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
        newest = max(newest, st.st_mtime_ns)
    return "|".join(parts), newest


def _memo_db(state_dir: Path) -> sqlite3.Connection:
    root = trials_root(state_dir)
    root.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(root / VERIFIED_DB, timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=60000")
    conn.execute("CREATE TABLE IF NOT EXISTS verified (key TEXT PRIMARY KEY, stamp TEXT NOT NULL)")
    return conn


def _memo_get(conn: sqlite3.Connection, keys: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT key, stamp FROM verified WHERE key IN ({marks})"  # noqa: S608
        out.update((str(k), str(v)) for k, v in conn.execute(sql, chunk))
    return out


def _record_of(path: Path, key: str) -> RunRecord | None:
    try:
        record = RunRecord.model_validate_json((path / RECORD).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    return record if record.trial_cache_key == key else None


def read_complete_many(state_dir: Path, keys: Iterable[str]) -> dict[str, RunRecord]:
    """The record of every complete trial dir among ``keys`` (:func:`read_complete`), with
    the verified-stamp memo (module docstring): one SQLite query for all ``keys``."""
    wanted = list(dict.fromkeys(keys))
    stamps = {k: s for k in wanted if (s := _stamp(trial_dir(state_dir, k))) is not None}
    if not stamps:
        return {}
    conn: sqlite3.Connection | None = None
    known: dict[str, str] = {}
    try:
        conn = _memo_db(state_dir)
        known = _memo_get(conn, list(stamps))
    except sqlite3.Error:  # an unreadable memo only costs the full check
        pass
    out: dict[str, RunRecord] = {}
    fresh: list[tuple[str, str]] = []
    racy = time.time_ns() - int(RACY_SEC * 1e9)
    for key, (stamp, newest) in stamps.items():
        path = trial_dir(state_dir, key)
        if known.get(key) == stamp and (rec := _record_of(path, key)) is not None:
            out[key] = rec
            continue
        done = read_complete(path, key)
        if done is None:
            continue
        out[key] = done[1]
        if newest < racy:
            fresh.append((key, stamp))
    if conn is not None:
        try:
            if fresh:
                conn.executemany("INSERT OR REPLACE INTO verified VALUES (?, ?)", fresh)
        except sqlite3.Error:
            pass
        finally:
            conn.close()
    return out


def quarantine(path: Path, state_dir: Path) -> Path | None:
    """Move an incomplete trial dir aside; returns where it went (None if it was absent)."""
    return move_aside(path, trials_root(state_dir) / INCOMPLETE)


def write_marker(path: Path, record: RunRecord, key: str) -> TrialMeta:
    meta = TrialMeta(
        key=key,
        run_id=record.run_id,
        task_id=record.task_id,
        repeat_index=record.repeat_index,
        state=record.evaluation.state.value,
        reward=record.evaluation.reward,
        events=len(record.events),
        completed_at=datetime.now(UTC),
    )
    atomic_write_text(path / MARKER, meta.model_dump_json(indent=1))
    return meta


def write_received(path: Path, record: RunRecord, key: str) -> TrialMeta:
    """A complete trial dir at ``path`` for ``record``, a trial that ran elsewhere (a remote
    environment: docs/design/406) and came back as a record only: its reward (when it has
    one), final output, trajectory and record, then the marker, last — what
    :func:`read_complete` checks. ``record`` is redacted already and keyed ``key``."""
    logs = logs_layout(path).ensure()
    if record.evaluation.reward is not None:
        atomic_write_text(logs.verifier / REWARD_TXT, repr(record.evaluation.reward), durable=False)
    atomic_write_text(logs.agent / FINAL_OUTPUT, record.final_output or "", durable=False)
    atomic_write_text(
        logs.agent / TRAJECTORY,
        json.dumps([e.model_dump(mode="json") for e in record.events]),
        durable=False,
    )
    atomic_write_text(path / RECORD, record.model_dump_json(indent=1), durable=False)
    return write_marker(path, record, key)


SAVED_MODELS: dict[str, type[BaseModel]] = {"trial-marker": TrialMeta}

__all__ = [
    "FINAL_OUTPUT",
    "INCOMPLETE",
    "MARKER",
    "RECORD",
    "SAVED_MODELS",
    "TRAJECTORY",
    "TrialMeta",
    "lock_for",
    "quarantine",
    "read_complete",
    "read_complete_many",
    "trial_dir",
    "trials_root",
    "write_marker",
    "write_received",
]
