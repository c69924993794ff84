"""`skillci eval run` end to end, as a user runs it (real subprocesses, real store)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from skillci.tasks.models import Purpose
from skillci.tasks.suites import load_suite
from skillci.trace.store import TraceStore

from .helpers import ROOT

#: the bundled validation suite (the slow test runs it twice per task)
VALIDATION = load_suite("validation", ROOT, purpose=Purpose.optimize).tasks


def skillci(*args: str, home: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skillci",
        "eval",
        "run",
        "--root",
        str(ROOT),
        "--home",
        str(home),
        *args,
    ]


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        skillci(*args, home=home), capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_validation_prints_pass_rates_and_a_rerun_runs_nothing(tmp_path: Path) -> None:
    args = (
        "--suite",
        "validation",
        "--skill",
        str(ROOT / "skills" / "repo-debugger"),
        "--model",
        "sim/student",
        "--repeat",
        "2",
        "--parallel",
        "2",
    )
    first = run_cli(*args, home=tmp_path)
    assert first.returncode == 0, first.stderr
    n = 2 * len(VALIDATION)
    for task_id in VALIDATION:
        assert task_id in first.stdout
    rows = {
        t: next(ln for ln in first.stdout.splitlines() if "│" in ln and t in ln) for t in VALIDATION
    }
    assert re.search(r"│\s+2 │\s+2 │\s+1\.00", rows["py-cache-expiry"]), rows["py-cache-expiry"]
    assert re.search(r"│\s+2 │\s+0 │\s+0\.00", rows["py-version-range"]), rows["py-version-range"]
    assert f"0 cached, {n} run" in first.stdout
    start = time.monotonic()
    again = run_cli(*args, "--json", home=tmp_path)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert (result["cached"], result["ran"]) == (n, 0)
    assert {t["task_id"]: t["pass_rate"] for t in result["tasks"]}["py-page-count"] == 1.0
    assert time.monotonic() - start < 15
    assert TraceStore(tmp_path).count() == n
    text = run_cli(*args, home=tmp_path)
    assert f"{n} cached, 0 run" in text.stdout
    dry = run_cli(*args, "--dry-run", home=tmp_path)
    assert f"{n} trials: {n} cached, 0 to run" in dry.stdout


def _complete(home: Path) -> list[Path]:
    return sorted(p.parent for p in (home / "trials").glob("??/*/trial.json"))


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_sigkill_mid_run_then_rerun_loses_and_duplicates_no_trial(tmp_path: Path) -> None:
    args = (
        "--suite",
        "discovery",
        "--skill",
        str(ROOT / "skills" / "repo-debugger"),
        "--model",
        "sim/student",
        "--repeat",
        "2",
        "--parallel",
        "2",
    )
    proc = subprocess.Popen(
        skillci(*args, home=tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while len(_complete(tmp_path)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(_complete(tmp_path))
    assert 2 <= done_before < 12, "the kill should land mid-run"
    # the pool's workers die with the parent: every trial lock is free again soon
    for lock in (tmp_path / "trials").glob("??/*.lock"):
        with FileLock(str(lock), timeout=30):
            pass
    again = run_cli(*args, "--json", home=tmp_path)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["cached"] >= done_before and result["cached"] + result["ran"] == 12
    assert len(_complete(tmp_path)) == 12
    keys = [t["key"] for t in result["trials"]]
    assert len(set(keys)) == 12
    store = TraceStore(tmp_path)
    assert store.count() == 12
    assert sorted(s.trial_cache_key for s in store.query()) == sorted(keys)
    for key in keys:
        assert len(store.query(trial_cache_key=key)) == 1
