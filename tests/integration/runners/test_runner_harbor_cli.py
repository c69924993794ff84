"""``--runner harbor --env NAME`` on ``eval run``, ``gate``, ``review`` and ``propose``
(issue 36 item 1, docs/design/412): a bad combination is refused with one line and exit 2, a
cloud environment without its credentials or a missing Harbor with exit 4 — each before any
trial, so no trial dir, no Harbor job and no run exists afterwards. Hermetic: every refusal
happens before Harbor would be started."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.store import TraceStore
from tests.integration.loop.conftest import make_scratch

CLOUD_VARS = ("DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID",
              "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "E2B_API_KEY", "RUNLOOP_API_KEY")  # fmt: skip
GATE = ["--base", "main", "--head", "main", "--suites", "regression", "--repeat", "1"]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in CLOUD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # no ~/.modal.toml
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "state"))
    return make_scratch(tmp_path / "repo")


def _nothing_ran(state: Path) -> None:
    assert not (state / "trials").exists()
    assert not (state / "harbor-jobs").exists()
    if (state / "index.sqlite").exists() or TraceStore(state).index_path.exists():
        assert TraceStore(state).query(limit=10) == []


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(args)
    err = capsys.readouterr().err
    return rc, " ".join(err.split())  # the console wraps long lines


def test_gate_on_daytona_without_its_key_exits_4_naming_it_before_any_trial(
    scratch: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["gate", "--repo", str(scratch), *GATE, "--agent", "claude-code"]
    rc, err = _run([*args, "--runner", "harbor", "--env", "daytona"], capsys)
    assert rc == 4, err
    assert "Harbor environment 'daytona' needs credentials" in err
    assert "DAYTONA_API_KEY" in err and "export DAYTONA_API_KEY=..." in err
    _nothing_ran(tmp_path / "state")


def test_gate_takes_the_built_in_agent_on_harbor_and_refuses_env_without_runner(
    scratch: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = ["gate", "--repo", str(scratch), *GATE]
    # the skill targets skillci's own loop: it runs on Harbor (design 426), so what stops
    # this gate is the environment's missing key, not the agent
    rc, err = _run([*base, "--runner", "harbor", "--env", "daytona"], capsys)
    assert rc == 4 and "DAYTONA_API_KEY" in err, err
    rc, err = _run([*base, "--env", "docker"], capsys)
    assert rc == 2 and "--env needs --runner benchflow|harbor" in err, err
    rc, err = _run([*base, "--runner", "harbor", "--env", "k8s"], capsys)
    assert rc == 2 and "unknown Harbor environment 'k8s'" in err, err
    assert "docker, daytona, modal, e2b, runloop" in err
    rc, err = _run([*base, "--runner", "harbor"], capsys)
    assert rc == 2 and "--runner harbor needs --env NAME" in err, err
    # BenchFlow where its engine is absent: exit 2 with the fix (design 431)
    monkeypatch.setenv("SKILLCI_BENCH", str(tmp_path / "no" / "bench"))
    rc, err = _run([*base, "--runner", "benchflow", "--env", "docker"], capsys)
    assert rc == 2 and "--runner benchflow: BenchFlow's `bench` not found" in err, err
    rc, err = _run([*base, "--runner", "docker"], capsys)
    assert rc == 2 and "--runner 'docker' cannot run these trials" in err, err
    rc, err = _run([*base, "--max-trials", "3"], capsys)
    assert rc == 2 and "--max-trials needs --runner benchflow|harbor" in err, err
    _nothing_ran(tmp_path / "state")


def test_eval_run_review_and_propose_refuse_before_any_trial(
    scratch: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    ev = ["eval", "run", "--root", str(scratch), "--task", "cfg-bool-flag", "--home", str(state)]
    rc, err = _run([*ev, "--agent", "oracle", "--runner", "harbor", "--env", "e2b"], capsys)
    assert rc == 4 and "E2B_API_KEY" in err, err
    # Harbor not installed: exit 4 saying how to install it (the built-in agent included)
    missing = str(tmp_path / "no" / "harbor")
    for agent in ("oracle", "builtin"):
        rc, err = _run([*ev, "--agent", agent, "--runner", "harbor", "--env", "docker",
                        "--harbor", missing], capsys)  # fmt: skip
        assert rc == 4 and "Harbor's `harbor` not found" in err, err
        assert "pip install harbor==" in err
    rc, err = _run(["review", "--repo", str(scratch), "--pr", "1", "--runner", "harbor",
                    "--env", "modal"], capsys)  # fmt: skip
    assert rc == 4 and "MODAL_TOKEN_ID+MODAL_TOKEN_SECRET" in err and "modal token new" in err
    pr = ["propose", "--repo", str(scratch), "--task", "cfg-bool-flag", "--dry-run"]
    rc, err = _run([*pr, "--agent", "claude-code", "--runner", "harbor", "--env", "runloop"],
                   capsys)  # fmt: skip
    assert rc == 4 and "RUNLOOP_API_KEY" in err, err
    rc, err = _run([*pr, "--runner", "harbor", "--env", "docker", "--harbor", missing], capsys)
    assert rc == 4 and "Harbor's `harbor` not found" in err, err
    rc, err = _run([*pr, "--env", "docker"], capsys)
    assert rc == 2 and "--env needs --runner benchflow|harbor" in err, err
    _nothing_ran(state)
