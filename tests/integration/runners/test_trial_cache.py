"""The trial cache: complete dirs are reused, anything else is quarantined and re-run."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from skillci.providers.budget import Budget
from skillci.runners.base import AgentSpec
from skillci.runners.scheduler import Scheduler, sandbox_kind
from skillci.runners.trialdir import (
    INCOMPLETE,
    VERIFIED_DB,
    read_complete,
    read_complete_many,
    trial_dir,
)
from skillci.trace.store import TraceStore

from .helpers import model_agent, specs

ORACLE = AgentSpec(kind="oracle", role="oracle")


def test_second_run_reuses_the_trial_and_stores_it_once(tmp_path: Path) -> None:
    store = TraceStore(tmp_path)
    plan = specs(["cfg-log-level"], ORACLE, tmp_path, repeats=2)
    first = Scheduler(store=store).run(plan)
    second = Scheduler(store=store).run(plan)
    assert (first.ran, first.cached) == (2, 0)
    assert (second.ran, second.cached) == (0, 2)
    assert [t.run_id for t in first.trials] == [t.run_id for t in second.trials]
    assert store.count() == 2


def test_the_key_changes_with_what_determines_the_trial(tmp_path: Path) -> None:
    (a,) = specs(["cfg-log-level"], ORACLE, tmp_path)
    (b,) = specs(["cfg-log-level"], ORACLE, tmp_path, seed=5)
    (c,) = specs(["cfg-bool-flag"], ORACLE, tmp_path)
    (d,) = specs(["cfg-log-level"], model_agent(), tmp_path)
    (e,) = specs(["cfg-log-level"], model_agent(route="sim/student-noisy"), tmp_path)
    keys = {s.cache_key(sandbox_kind(s)) for s in (a, b, c, d, e)}
    assert len(keys) == 5


#: Ways a finished trial dir gets damaged: a changed reward, trajectory, a lost marker, a
#: cut record (each must make the cache distrust the dir).
DAMAGES = pytest.mark.parametrize(
    "damage",
    [
        lambda d: (d / "logs" / "verifier" / "reward.txt").write_text("0\n"),
        lambda d: (d / "logs" / "agent" / "trajectory.json").write_text("[]"),
        lambda d: (d / "trial.json").unlink(),
        lambda d: (d / "record.json").write_text(
            (d / "record.json").read_text().replace('"repeat_index": 0', '"repeat_index": 0 ')[:-40]
        ),
    ],
    ids=["reward", "trajectory", "marker", "record"],
)


@DAMAGES
def test_a_damaged_trial_is_quarantined_and_run_again(tmp_path: Path, damage: object) -> None:
    plan = specs(["cfg-log-level"], ORACLE, tmp_path)
    key = plan[0].cache_key(sandbox_kind(plan[0]))
    Scheduler().run(plan)
    path = trial_dir(tmp_path, key)
    damage(path)  # type: ignore[operator]
    assert read_complete(path, key) is None
    res = Scheduler().run(plan)
    assert (res.ran, res.cached) == (1, 0) and res.trials[0].passed
    assert read_complete(path, key) is not None
    assert len(list((tmp_path / "trials" / INCOMPLETE).iterdir())) == 1


def test_a_half_written_dir_from_a_killed_run_is_moved_aside(tmp_path: Path) -> None:
    plan = specs(["cfg-log-level"], ORACLE, tmp_path)
    key = plan[0].cache_key(sandbox_kind(plan[0]))
    half = trial_dir(tmp_path, key)
    (half / "workspace").mkdir(parents=True)
    (half / "record.json").write_text(json.dumps({"run_id": "partial"}))
    res = Scheduler().run(plan)
    assert res.ran == 1 and res.trials[0].passed
    (moved,) = (tmp_path / "trials" / INCOMPLETE).iterdir()
    assert moved.name.startswith(key) and (moved / "workspace").is_dir()


def test_a_command_budget_stops_cleanly_and_says_why(tmp_path: Path) -> None:
    plan = specs(["cfg-log-level", "cfg-bool-flag", "cfg-unknown-key"], model_agent(), tmp_path)
    res = Scheduler(budget=Budget(max_calls=5)).run(plan)
    states = [t.state for t in res.trials]
    assert states[0] in ("passed", "failed") and states[1:] == ["skipped", "skipped"]
    assert res.budget_stop is not None and "max_calls=5" in res.budget_stop
    assert res.skipped == 2 and res.trials[1].error == res.budget_stop
    again = Scheduler().run(plan)
    assert (again.cached, again.ran) == (1, 2)


def test_a_sandbox_change_reuses_trials_and_flags_them_non_comparable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bubblewrap appearing or vanishing is an annotation, not a new trial (design 233)."""
    import skillci.runners.sandbox as sandbox
    from skillci.gate.outcomes import comparability

    plan = specs(["cfg-log-level"], ORACLE, tmp_path)  # sandbox auto
    key = plan[0].cache_key(sandbox_kind(plan[0]))
    first = Scheduler().run(plan)
    had = first.trials[0]
    assert first.ran == 1 and not any("non-comparable" in w for w in had.warnings)
    done = read_complete(trial_dir(tmp_path, key), key)
    assert done is not None
    ran_under = done[1].runtime.sandbox
    monkeypatch.setattr(
        sandbox,
        "bwrap_path",
        (lambda: None) if ran_under == "bwrap" else (lambda: "/usr/bin/bwrap"),
    )
    assert plan[0].cache_key(sandbox_kind(plan[0])) == key  # the key did not move
    second = Scheduler().run(plan)
    assert (second.ran, second.cached) == (0, 1)
    (note,) = [w for w in second.trials[0].warnings if "non-comparable" in w]
    assert repr(ran_under) in note
    other = "none" if ran_under == "bwrap" else "bwrap"
    moved = done[1].model_copy(
        update={"runtime": done[1].runtime.model_copy(update={"sandbox": other})}
    )
    comp = comparability([done[1]], [moved])
    assert not comp.comparable and any("sandbox differs" in i for i in comp.issues)
    assert all(i.endswith("--rerun base (or --rerun all)") for i in comp.issues)  # remedy
    assert comparability([done[1]], [done[1]]).comparable


def _age(path: Path, seconds: float = 60.0) -> None:
    """Make every file of a trial dir older than the racy window of the verified memo."""
    then = time.time() - seconds
    for f in path.rglob("*"):
        os.utime(f, (then, then), follow_symlinks=False)


def _memo(state_dir: Path) -> dict[str, str]:
    db = state_dir / "trials" / VERIFIED_DB
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT key, stamp FROM verified").fetchall())


@DAMAGES
def test_a_remembered_trial_damaged_later_is_checked_again(tmp_path: Path, damage: object) -> None:
    """The verified memo (design 267) trusts an unchanged stat stamp only: any later edit
    of a file the completeness check reads sends the dir through the full check again."""
    plan = specs(["cfg-log-level"], ORACLE, tmp_path)
    key = plan[0].cache_key(sandbox_kind(plan[0]))
    Scheduler().run(plan)
    path = trial_dir(tmp_path, key)
    assert key not in read_complete_many(tmp_path, []) and _memo(tmp_path) == {}
    fresh = Scheduler().run(plan)  # files younger than the racy window: not remembered
    assert fresh.cached == 1 and key not in _memo(tmp_path)
    _age(path)
    aged = Scheduler().run(plan)
    assert aged.cached == 1 and key in _memo(tmp_path)
    assert read_complete_many(tmp_path, [key])[key].run_id == aged.trials[0].run_id
    damage(path)  # type: ignore[operator]
    assert key not in read_complete_many(tmp_path, [key])
    res = Scheduler().run(plan)
    assert (res.ran, res.cached) == (1, 0) and res.trials[0].passed
    assert len(list((tmp_path / "trials" / INCOMPLETE).iterdir())) == 1


def test_a_cached_run_hands_out_the_records_it_read(tmp_path: Path) -> None:
    """Reused trials come with their records (the gate does not read them again) and a
    record missing from the trace store is put there once."""
    store = TraceStore(tmp_path / "store")
    plan = specs(["cfg-log-level", "cfg-bool-flag"], ORACLE, tmp_path)
    Scheduler().run(plan)  # no store: the records exist only in the trial dirs
    sched = Scheduler(store=store)
    res = sched.run(plan)
    assert res.cached == 2 and store.count() == 2
    for t in res.trials:
        assert t.run_id is not None and sched.records[t.run_id] == store.get(t.run_id)
    keys = [t.key for t in res.trials]
    assert {k: len(v) for k, v in store.run_ids_by_key(keys).items()} == dict.fromkeys(keys, 1)
    Scheduler(store=store).run(plan)
    assert store.count() == 2
