"""``tasks validate --run`` names the cause (docs/design/311): on real Harbor-format tasks the
verdict is what the stored trial records say (environment_unsupported, with the record's
reason), a multi-dimensional reward is named as such, and only the task's own defects exit 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.store import TraceStore
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "skillsbench-tasks"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SKILLCI_HOME", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("SKILLCI_SANDBOX", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _expected(store: TraceStore, task_id: str) -> tuple[str, str]:
    """(verdict, a reason it must name) from the stored oracle and do-nothing records."""
    oracle, noop = (
        store.get(store.query(task_id=task_id, agent_role=role)[0].run_id)
        for role in ("oracle", "student")
    )
    env = [r for r in (oracle, noop) if r.evaluation.state.value == "environment_unsupported"]
    if env:
        return "environment_unsupported", env[0].evaluation.details["environment"]["reasons"][0]
    if not oracle.evaluation.passed:
        return "verifier-broken", ""
    return ("trivially-satisfied" if noop.evaluation.passed else "ok"), ""


def test_verdicts_on_real_harbor_tasks_match_the_stored_records(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    rc = main(["tasks", "validate", "--run", "--json", "--repo", str(repo), str(FIXTURES)])
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert len(runs) == 16
    store = TraceStore(repo / ".skillci")
    table = []
    for r in runs:
        verdict, reason = _expected(store, r["task_id"])
        assert r["verdict"] == verdict, r
        assert reason[:100] in r["detail"], (reason, r["detail"])
        table.append((r["task_id"], verdict))
    defects = [t for t, v in table if v in ("verifier-broken", "trivially-satisfied")]
    assert rc == (2 if defects else 0)
    assert all(r["verdict"] != "verifier-broken" for r in runs if r["oracle_state"] != "failed")
    # the text form: one line per task with its cause, and a count per verdict
    assert main(["tasks", "validate", "--run", "--repo", str(repo), str(FIXTURES)]) == rc
    out = " ".join(capsys.readouterr().out.split())
    assert "run environment_unsupported 3d-scan-calc: oracle environment_unsupported" in out
    assert "COPY scan_data.stl /root/" in out and "(+1 more)" in out


MULTI = """#!/usr/bin/env bash
mkdir -p "${LOGS_DIR:-/logs}/verifier"
if [ "$(cat answer.txt 2>/dev/null)" = "done" ]; then c=1; else c=0; fi
echo "{\\"correctness\\": $c, \\"performance\\": 0.5}" > "${LOGS_DIR:-/logs}/verifier/reward.json"
"""


def test_a_multi_dimensional_reward_is_named_not_called_verifier_broken(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tasks", "new", "multi", "--repo", str(repo)]) == 0
    task = repo / "evals" / "tasks" / "multi"
    (task / "tests" / "test.sh").write_text(MULTI)
    capsys.readouterr()
    rc = main(["tasks", "validate", "--run", "--json", "--repo", str(repo), str(task)])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert rc == 0, run
    assert run["verdict"] == "error" and run["oracle_state"] == "verifier_error"
    assert "multi-dimensional reward (keys correctness, performance)" in run["detail"]
    assert '"reward": <number>' in run["detail"]
