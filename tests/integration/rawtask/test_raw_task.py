"""`skillci eval raw-task` with the local runner: test-NNN layout, reuse of complete attempts,
quarantine of incomplete ones (also after a killed run), up-front tool checks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.cli.rawtask import progress_line
from skillci.flows.rawtask import (
    RawTaskRequest,
    preflight,
    read_attempt,
    request_key,
    run_raw_task,
)

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "evals" / "tasks" / "py-window-end"
SKILL = ROOT / "skills" / "repo-debugger"


def _args(out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "raw-task",
        "--harness",
        "builtin",
        "--model",
        "sim/student",
        "--task",
        str(TASK),
        "--skill-source",
        str(SKILL),
        "--output",
        str(out),
        "--require-skill",
        "--runner",
        "local",
        *extra,
    ]


def test_progress_line_matches_the_seed_format() -> None:
    assert progress_line("test-001", 1, 1, "preparing", 0.05, 177) == (
        "test-001 (1/1) [#----] 5% preparing elapsed=02:57"
    )
    assert progress_line("test-003", 3, 3, "done", 1.0, 61).endswith(
        "[#####] 100% done elapsed=01:01"
    )


def test_attempts_layout_reuse_and_quarantine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main([*_args(out, "--repeat", "2", "--max-parallel", "2", "--json")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in first["attempts"]] == ["test-001", "test-002"]
    assert first["reused"] == [] and first["errors"] == {}
    for a in first["attempts"]:
        d = out / a["name"]
        assert {p.name for p in d.iterdir()} >= {
            "summary.json",
            "result.json",
            "trajectory.json",
            "skill_check.json",
            "run",
        }
        check = json.loads((d / "skill_check.json").read_text())
        assert (
            check["required"]
            and check["ok"]
            and check["invocations"] >= 1
            and "SKILL.md" in check["evidence"]
        )
        record = json.loads((d / "result.json").read_text())
        assert (
            record["run_id"] == a["run_id"]
            and len(json.loads((d / "trajectory.json").read_text())) == a["events"]
        )
        assert a["state"] in ("passed", "failed") and a["passed"] == (a["state"] == "passed")
    # a second run reuses both; a third with a damaged attempt re-runs just that one
    assert main([*_args(out, "--repeat", "2", "--json")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["reused"] == ["test-001", "test-002"] and again["quarantined"] == []
    (out / "test-002" / "trajectory.json").write_text("[]")
    assert main([*_args(out, "--repeat", "2", "--json")]) == 0
    third = json.loads(capsys.readouterr().out)
    assert third["reused"] == ["test-001"] and len(third["quarantined"]) == 1
    assert third["quarantined"][0].startswith(".incomplete/test-002-")
    assert (out / third["quarantined"][0] / "trajectory.json").read_text() == "[]"
    assert read_attempt(out / "test-002", third["attempts"][1]["request_key"]) is not None
    # the same output dir for another model is refused, not mixed
    other = [a if a != "sim/student" else "sim/teacher" for a in _args(out, "--repeat", "2")]
    assert main(other) == 2
    assert "different request" in capsys.readouterr().err


def _slow_task(tmp_path: Path) -> Path:
    root = tmp_path / "tasks" / "slow-task"
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "data.txt").write_text("old\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(
        "mkdir -p /logs/verifier\nif grep -q new data.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
    )
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("sleep 4\necho new > data.txt\n")
    (root / "instruction.md").write_text("Write new into data.txt.\n")
    (root / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n'
    )
    return root


def test_a_killed_run_leaves_an_attempt_that_the_next_run_quarantines(tmp_path: Path) -> None:
    task, out = _slow_task(tmp_path), tmp_path / "out"
    argv = [
        sys.executable,
        "-m",
        "skillci.cli.main",
        "eval",
        "raw-task",
        "--harness",
        "oracle",
        "--model",
        "none",
        "--task",
        str(task),
        "--output",
        str(out),
        "--repeat",
        "2",
        "--runner",
        "local",
    ]
    code = "import sys; from skillci.cli.main import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv[3:]],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (out / "test-001" / "run" / "logs").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the attempt never started"
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (out / "test-001").is_dir() and not (out / "test-001" / "summary.json").exists()
    res = run_raw_task(
        RawTaskRequest(
            harness="oracle",
            model="none",
            task=task,
            skill_source=None,
            output=out,
            repeat=2,
            runner="local",
        )
    )
    assert [a.name for a in res.attempts] == ["test-001", "test-002"]
    assert all(a.passed for a in res.attempts) and res.errors == {}
    assert len(res.quarantined) == 1 and res.quarantined[0].startswith(".incomplete/test-001-")
    assert not (out / res.quarantined[0] / "summary.json").exists()


def test_missing_tools_are_reported_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("SKILLCI_BENCH", raising=False)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    from skillci.runners import docker as dr

    dr.client.cache_clear()
    bench = [
        a if a not in ("local", "builtin") else {"local": "benchflow", "builtin": "opencode"}[a]
        for a in _args(out)
    ]
    assert main(bench) == 4
    err = capsys.readouterr().err
    assert "no Docker engine" in err and "ci_docker.sh" in err
    assert main([*bench, "--bench", str(tmp_path / "bench")]) == 4  # docker is checked first
    harbor = [
        *[a if a != "benchflow" else "harbor" for a in bench],
        "--harbor",
        str(tmp_path / "nope"),
    ]
    assert main(harbor) == 4
    assert "pip install harbor==" in capsys.readouterr().err
    assert main([a if a != "builtin" else "opencode" for a in _args(out)]) == 2
    assert "--runner benchflow or harbor" in capsys.readouterr().err
    assert not out.exists() or not any(out.glob("test-*"))
    dr.client.cache_clear()


def test_dry_run_lists_what_would_happen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    req = RawTaskRequest(
        harness="builtin",
        model="sim/student",
        task=TASK,
        skill_source=SKILL,
        output=out,
        runner="local",
        repeat=1,
    )
    task, skill = preflight(req)
    assert skill == SKILL and len(request_key(req, task, skill)) == 64
    assert main([*_args(out, "--repeat", "2", "--dry-run")]) == 0
    assert capsys.readouterr().out.split("\n")[:2] == ["would run test-001", "would run test-002"]
    assert not out.exists()
