"""The gate on a student route that cannot work (issue 28 items 1 and 7): it says which
student it ran and why, leaves the failed measurements out of the verdict, and exits 4 with
the first cause on one line; nothing is cached, so the next gate asks the route again."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.context import RepoContext
from skillci.flows.gate import GATE_BLOB
from skillci.gate.verdict import GateReport
from tests.integration.loop.conftest import git, make_scratch

MANIFEST = "skills/repo-debugger/skillci.yaml"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    with socket.socket() as s:  # a port nobody listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    routes = tmp_path / "provider_routes.json"
    route = {"model": "openai/small", "api_base": f"http://127.0.0.1:{port}/v1"}
    routes.write_text(json.dumps({"schema_version": 1, "routes": {"local/small": route}}))
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(routes))
    repo = make_scratch(tmp_path / "repo")
    m = repo / MANIFEST
    m.write_text(m.read_text().replace("model: sim/student", "model: local/small"))
    git(repo, "commit", "-qam", "target a local model")
    return repo


@pytest.mark.slow  # > 20 s on busy cores: two gates of one suite, 10-39 s measured (2026-12-03)
def test_the_gate_runs_the_skills_student_and_exits_4_on_error_trials(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["gate", "--repo", str(scratch), "--base", "main", "--head", "main"]
    args += ["--suites", "validation", "--repeat", "1"]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 4, err
    assert f"student: local/small (target_runtime.model in {MANIFEST})" in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    reports = RepoContext.open(scratch).store.list_blobs(GATE_BLOB)
    report = RepoContext.open(scratch).store.get_blob(GATE_BLOB, reports[0], GateReport)
    assert report.student == "local/small"
    n = len(report.suites[0].tasks)  # every base trial of the suite (head reuses them)
    assert n > 0 and len(report.config["measurement_errors"]["base"]) == n  # type: ignore[index]
    assert f"trials measured nothing (base {n}; left out of the verdict)" in line
    assert "cannot connect to" in line
    assert any("measured nothing, excluded from the metrics" in w for w in report.warnings)
    # nothing cached: the next gate (--model given: said so) tries the route again
    rc = main([*args, "--model", "local/small"])
    err = capsys.readouterr().err
    assert rc == 4 and "student: local/small (--model)" in err
    assert f"trials measured nothing (base {n};" in err
