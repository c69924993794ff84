"""The commands: tasks new --grader, judge calibrate (exit 1 when unfit), tasks import
and export, and their bad-input errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "graded-tasks"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    shutil.copytree(FIXTURE, tmp_path / "r")
    return tmp_path / "r"


def test_scaffolded_graded_tasks_pass_their_run_checks(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tasks", "new", "a1", "--grader", "assertions", "--repo", str(repo)]) == 0
    assert main(["tasks", "new", "r1", "--grader", "rubric", "--repo", str(repo)]) == 0
    tasks = repo / "evals" / "tasks"
    for t in ("a1", "r1"):
        assert (tasks / t / "tests/graders.toml").is_file()
        assert not (tasks / t / "tests/test.sh").exists()
    capsys.readouterr()
    rc = main(
        [
            "tasks",
            "validate",
            "--run",
            "--json",
            "--repo",
            str(repo),
            str(tasks / "a1"),
            str(tasks / "r1"),
        ]
    )
    runs = {r["task_id"]: r["verdict"] for r in json.loads(capsys.readouterr().out)["runs"]}
    assert rc == 0 and runs == {"a1": "ok", "r1": "ok"}


def test_calibrate_reports_agreement_and_exits_1_for_an_unfit_judge(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["judge", "calibrate", "--suite", "plans-strict", "--repo", str(repo), "--json"])
    out, err = capsys.readouterr()
    assert out, err
    report = json.loads(out)
    assert rc == 1
    assert report["judge"] == "sim/judge" and report["agreement"]["n"] == 12
    assert report["fit"]["fit"] is False and report["min_kappa"] == 0.6
    assert report["usage"]["model_calls"] == 12
    # a lenient minimum: the same figures (cached calls), now fit
    rc = main(
        [
            "judge",
            "calibrate",
            "--suite",
            "plans-strict",
            "--min-kappa",
            "-0.5",
            "--repo",
            str(repo),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "is fit" in out and "12 cached" in out
    assert main(["judge", "calibrate", "--suite", "plans", "--repo", str(repo)]) == 2
    assert "declares no judge" in capsys.readouterr().err


def test_import_export_and_bad_evals_json(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evals = tmp_path / "skill" / "evals" / "evals.json"
    evals.parent.mkdir(parents=True)
    evals.write_text(
        json.dumps(
            [{"id": 7, "prompt": "Summarise the notes.", "expectations": ["It has a title"]}]
        )
    )
    assert (
        main(["tasks", "import", str(evals), "--prefix", "notes", "--repo", str(repo), "--dry-run"])
        == 0
    )
    assert not (repo / "evals/tasks/notes-eval-7").exists()
    assert main(["tasks", "import", str(evals), "--prefix", "notes", "--repo", str(repo)]) == 0
    assert (repo / "evals/tasks/notes-eval-7/tests/graders.toml").is_file()
    assert main(["tasks", "import", str(evals), "--prefix", "notes", "--repo", str(repo)]) == 2
    assert "already exist" in capsys.readouterr().err
    out = tmp_path / "back.json"
    assert main(["tasks", "export", "--repo", str(repo), "--out", str(out)]) == 0
    back = json.loads(out.read_text())
    assert {e["id"] for e in back["evals"]} >= {7}
    err = capsys.readouterr().err
    assert "assertion plan-saved (file-exists) has no evals.json form" in err
    evals.write_text('{"evals": [{"id": 1}]}')
    assert main(["tasks", "import", str(evals), "--repo", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "evals.json" in err and "evals.0.prompt" in err


def test_a_judge_that_answers_prose_is_unfit_not_an_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge that answers, but not its JSON, cannot be trusted: its unreadable answers
    count as wrong and the calibration says unfit (exit 1) — no exit 4, which means a
    measurement failed (a refused connection, a missing key)."""
    from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI

    with FakeOpenAI(["Here is a plan: 1. add the flag."]) as server:
        route = {"model": "openai/prose", "api_base": server.base_url, "api_key_env": FAKE_KEY_ENV}
        routes = repo / "provider_routes.json"
        routes.write_text(json.dumps({"schema_version": 1, "routes": {"prose/judge": route}}))
        monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(routes))
        monkeypatch.setenv(FAKE_KEY_ENV, "not-a-secret")
        argv = ["judge", "calibrate", "--suite", "plans-strict", "--judge", "prose/judge"]
        rc = main([*argv, "--repo", str(repo), "--json"])
        report = json.loads(capsys.readouterr().out)
        assert len(server.requests) == 12
        assert main([*argv, "--repo", str(repo)]) == 1  # the same answers, from the cache
        assert len(server.requests) == 12
        text = " ".join(capsys.readouterr().out.split())
    assert rc == 1 and report["fit"]["fit"] is False
    assert len(report["unreadable"]) == 12 and set(report["unreadable"]) == set(
        report["disagreements"]
    )
    assert report["agreement"]["accuracy"] == 0.0
    assert "12 of 12 answers unreadable (counted as wrong)" in report["fit"]["reason"]
    assert "unreadable answers" in text and "12 cached" in text
