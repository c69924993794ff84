"""The reward convention end to end: a real test.sh run by bash writes into a trial's logs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from skillci.tasks.loader import load_task
from skillci.tasks.models import RewardState
from skillci.tasks.reward import logs_layout, read_reward, rewrite_logs_paths, verifier_env
from skillci.trace.evaluation import evaluation_from_reward
from skillci.trace.models import EvalState
from tests.unit.tasks.helpers import make_harbor_task

HARDCODED = """\
#!/usr/bin/env bash
mkdir -p /logs/verifier
if grep -qx 42 answer.txt 2>/dev/null; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""


def _run(script: Path, workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script)],
        cwd=workspace,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("solved", [True, False])
def test_logs_dir_env(tmp_path: Path, solved: bool) -> None:
    task = load_task(make_harbor_task(tmp_path / "tasks"))
    ws = tmp_path / "trial" / "workspace"
    shutil.copytree(task.environment_dir or tmp_path, ws)
    if solved:
        assert task.solution_script is not None
        _run(task.solution_script, ws, {})
    layout = logs_layout(tmp_path / "trial").ensure()
    proc = _run(task.verifier_script, ws, verifier_env(layout))
    reward = read_reward(layout.root)
    assert reward.state is RewardState.ok
    assert reward.passed is solved
    ev = evaluation_from_reward(reward, verifier_exit_code=proc.returncode)
    assert ev.state is (EvalState.passed if solved else EvalState.failed)


def test_hardcoded_logs_path_is_rewritten(tmp_path: Path) -> None:
    task = load_task(make_harbor_task(tmp_path / "tasks", test_sh=HARDCODED))
    ws = tmp_path / "trial" / "workspace"
    ws.mkdir(parents=True)
    (ws / "answer.txt").write_text("42\n")
    layout = logs_layout(tmp_path / "trial").ensure()
    copy = tmp_path / "trial" / "test.sh"
    copy.write_text(rewrite_logs_paths(task.verifier_script.read_text(), layout.root))
    assert "/logs/verifier" not in copy.read_text().replace(str(layout.root), "")
    _run(copy, ws, verifier_env(layout))
    assert read_reward(layout.root).passed is True


def test_crashing_verifier_is_a_verifier_error(tmp_path: Path) -> None:
    task = load_task(make_harbor_task(tmp_path / "tasks", test_sh="#!/bin/sh\nexit 3\n"))
    layout = logs_layout(tmp_path / "trial").ensure()
    proc = _run(task.verifier_script, tmp_path, verifier_env(layout))
    ev = evaluation_from_reward(read_reward(layout.root), verifier_exit_code=proc.returncode)
    assert ev.state is EvalState.verifier_error
    assert ev.verifier_exit_code == 3
    assert not ev.passed
