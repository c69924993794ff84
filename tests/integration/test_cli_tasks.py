from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillci.cli.main import main
from tests.unit.tasks.helpers import make_harbor_task


def test_validate_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_harbor_task(tmp_path)
    assert main(["tasks", "validate", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ok answer-42" in out
    assert "1 task(s): 0 error(s)" in out


def test_validate_errors_exit_2_with_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_harbor_task(tmp_path, "good")
    bad = make_harbor_task(tmp_path, "bad", solve_sh=None)
    os.chmod(bad / "tests" / "test.sh", 0o644)
    assert main(["tasks", "validate", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert "FAIL bad" in captured.out
    assert "verifier-not-executable" in captured.out
    assert "solution-missing" in captured.out
    assert "1 error(s) in 1 task(s)" in captured.err


def test_validate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = make_harbor_task(tmp_path, "bad", toml="[agent]\ntimeout_sec = 'x'\n")
    assert main(["tasks", "validate", "--json", str(bad)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == 1
    (task,) = doc["tasks"]
    assert task["task_id"] == "bad"
    assert task["findings"][0]["code"] == "load-failed"
    assert task["findings"][0]["line"] == 2
