from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.models import ModelInfo
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.unit.trace.helpers import make_record


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "home"
    monkeypatch.setenv("SKILLCI_HOME", str(root))
    store = TraceStore(root, redactor=Redactor(env={}))
    store.put(make_record("run-a-1", task_id="t1", passed=True))
    store.put(
        make_record(
            "run-b-2",
            task_id="t2",
            agent_role="teacher",
            model=ModelInfo(route="sim/teacher"),
            final_output="[bold]not markup[/bold]",
        )
    )
    return root


def test_ls_table(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "ls"]) == 0
    out = capsys.readouterr().out
    assert "run-a-1" in out
    assert "run-b-2" in out
    assert "2 run(s)" in out


def test_ls_filters_and_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "ls", "--role", "teacher", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == ["run-b-2"]
    assert main(["trace", "ls", "--task", "t1", "--model", "sim/student", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == ["run-a-1"]
    assert doc["runs"][0]["passed"] is True


def test_ls_bad_role_is_usage_error(home: Path) -> None:
    assert main(["trace", "ls", "--role", "boss"]) == 2


def test_show(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", "run-b"]) == 0
    out = capsys.readouterr().out
    assert "run run-b-2" in out
    assert "tool_call" in out
    assert "run(cmd='pytest -x') #c1" in out
    assert "skillci/workflows/ci-failure.md (311 tokens)" in out
    assert "[bold]not markup[/bold]" in out  # untrusted text is escaped, not rendered
    assert main(["trace", "show", "run-a-1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == "run-a-1"
    assert doc["evaluation"]["state"] == "passed"


def test_show_unknown_run(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_empty_store_reads_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "none"
    assert main(["trace", "ls", "--home", str(root)]) == 0
    assert "0 run(s)" in capsys.readouterr().out
    assert not root.exists()
    assert main(["trace", "show", "x", "--home", str(root)]) == 2
    assert not root.exists()


def test_reindex(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "reindex", "--dry-run"]) == 0
    assert "would index 2 record file(s)" in capsys.readouterr().out
    assert main(["trace", "reindex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 2
