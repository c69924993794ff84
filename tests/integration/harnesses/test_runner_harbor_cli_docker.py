"""``eval run`` and ``gate`` with ``--runner harbor --env docker`` through the real Harbor
venv (issue 36 item 1, docs/design/412): each trial is a ``harbor run -e docker`` job read
back by the Harbor importer into the trial cache and trace store, and the gate decides over
them with its usual code.

Harbor's docker environment needs a Docker engine and the ``docker compose`` v2 plugin. Where
either is missing (this machine's engine has no compose plugin; without scripts/ci_docker.sh
no engine answers at all), Harbor exits without a trial: every trial must come back as an
``infra_error`` naming that cause, and the command exits 4 — never a ``failed`` trial or a
verdict over it. Both outcomes are asserted, whichever this machine gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.models import EvalState
from skillci.trace.store import TraceStore
from tests.integration.loop.conftest import git, make_scratch

ROOT = Path(__file__).resolve().parents[3]
#: what Harbor's log says when its docker environment cannot start here
DOCKER_CAUSES = ("compose", "Docker daemon", "docker")


def _harness_failure(cause: str | None) -> bool:
    """A cause a harness failure leaves: Harbor's job crashed (its log tail names the Docker
    cause: no compose plugin, no engine), or Harbor recorded the trial's own exception
    (agent setup, environment start) — never empty."""
    if not cause:
        return False
    if cause.startswith("harbor exited"):
        return any(c in cause for c in DOCKER_CAUSES)
    return True


@pytest.mark.slow  # 2 harbor jobs (a trial and its retry): 7-18 s measured without an engine
def test_eval_run_on_harbors_docker_environment(
    harbor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "state"
    rc = main(["eval", "run", "--root", str(ROOT), "--task", "cfg-bool-flag", "--agent",
               "oracle", "--runner", "harbor", "--env", "docker", "--harbor", harbor,
               "--home", str(home), "--json"])  # fmt: skip
    out = capsys.readouterr()
    (trial,) = json.loads(out.out)["trials"]
    rec = TraceStore(home).get(trial["run_id"])
    assert rec.runtime.runner == "harbor" and rec.runtime.sandbox == "harbor:docker"
    assert rec.metadata["remote_environment"] == "harbor:docker"
    assert trial["state"] != "failed"  # the oracle never fails: a harness failure is not one
    if trial["state"] == "passed":
        assert rc == 0
        return
    assert rc == 4, out.err
    assert trial["state"] == "infra_error" and _harness_failure(trial["error"]), trial
    assert rec.evaluation.state is EvalState.infra_error
    assert "measured nothing (not the skill's failure)" in " ".join(out.err.split())


@pytest.mark.slow  # 8 harbor jobs (2 rounds x 2 sides, each retried): 30 s measured without an engine
def test_the_gate_runs_its_rounds_on_harbors_docker_environment(
    harbor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "state"))
    repo = make_scratch(tmp_path / "repo")
    skill_md = repo / "skills" / "repo-debugger" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nRun the task's checks before you finish.\n")
    git(repo, "commit", "-qam", "head: one more line")
    rc = main(["gate", "--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD",
               "--suites", "regression", "--repeat", "2", "--agent", "claude-code",
               "--runner", "harbor", "--env", "docker", "--harbor", harbor,
               "--concurrency", "2", "--json"])  # fmt: skip
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["config"]["runner"] == "harbor:docker"
    remote = report["config"]["remote"]
    assert remote["submitted"] >= 1 and report["trials_run"] >= 1
    # the head side ran in the gate's rounds (the skill changed: no base trial reused)
    assert any(sides.get("head") for sides in report["evidence"].values())
    store = TraceStore(tmp_path / "state")
    runs = [store.get(r.run_id) for r in store.query(limit=100)]
    assert runs and all(r.runtime.sandbox == "harbor:docker" for r in runs)
    errors = report["config"].get("measurement_errors")
    if errors:  # the engine could not run Harbor's docker environment: no verdict over it
        assert rc == 4, out.err
        lines = [ln for side in errors.values() for ln in side]
        assert all(_harness_failure(ln.split(": ", 1)[1]) for ln in lines), lines
        assert all(
            r.evaluation.state is EvalState.infra_error for r in runs if r.evaluation.state.is_error
        )
        assert remote["retried"] >= 1  # each failed measurement got its retry
    else:
        assert rc in (0, 1, 5), out.err
