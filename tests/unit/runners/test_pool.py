"""The trial cap and the quarantine shared by every trial scheduler (skillci.runners.pool)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillci.errors import UsageError
from skillci.runners.base import AgentSpec, plan
from skillci.runners.pool import INCOMPLETE, MAX_TRIALS, check_trial_count, quarantine
from skillci.tasks.models import Task


def test_a_huge_repeat_is_a_quick_usage_error_before_anything_is_built(tmp_path: Path) -> None:
    agent = AgentSpec(kind="oracle", role="oracle")
    task = Task.model_construct(id="t")  # never built into a spec: the cap comes first
    start = time.monotonic()
    with pytest.raises(UsageError, match="more than 100000 trials") as err:
        plan([task], agent, repeats=100_000_000, state_dir=tmp_path)
    assert err.value.exit_code == 2
    assert time.monotonic() - start < 1.0
    check_trial_count(1, MAX_TRIALS)  # the cap itself is allowed
    with pytest.raises(UsageError):
        check_trial_count(2, MAX_TRIALS // 2 + 1)


def test_quarantine_moves_the_dir_aside_and_keeps_its_files(tmp_path: Path) -> None:
    trial = tmp_path / "test-001"
    trial.mkdir()
    (trial / "half.json").write_text("{")
    moved = quarantine(trial, tmp_path / INCOMPLETE)
    assert moved is not None and not trial.exists()
    assert moved.parent == tmp_path / INCOMPLETE and moved.name.startswith("test-001-")
    assert (moved / "half.json").read_text() == "{"
    assert quarantine(trial, tmp_path / INCOMPLETE) is None
