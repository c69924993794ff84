"""``eval run --runner benchflow`` on BenchFlow's real docker sandbox (the engine
scripts/ci_docker.sh starts, with its Compose v2 plugin): a bundled task's oracle passes and
its no-op agent fails -- measurements of the task's verifier, each one ``bench eval run`` job
read back by BenchFlow's importer into the trial cache and trace store, the same trial again
submitting nothing -- and a task whose image cannot be built is an ``error`` (exit 4), never a
``failed`` trial (issue 31, docs/design/431)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.models import EvalState
from skillci.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "evals" / "tasks" / "cfg-bool-flag"


def _eval(
    capsys: pytest.CaptureFixture[str], home: Path, task: Path, agent: str
) -> tuple[int, dict[str, object], str]:
    rc = main(["eval", "run", "--task", str(task), "--agent", agent, "--runner", "benchflow",
               "--home", str(home), "--json"])  # fmt: skip
    out = capsys.readouterr()
    return rc, json.loads(out.out), out.err


@pytest.mark.docker
@pytest.mark.slow  # 2 bench jobs (~17 s each: compose up, solve.sh, verifier, teardown) + 2 cached
def test_eval_run_oracle_passes_and_noop_fails_on_benchflows_docker_sandbox_kept_and_reused(
    bench: str, compose: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "state"
    expect = {"oracle": EvalState.passed, "noop": EvalState.failed}
    first: dict[str, str] = {}
    for agent, state in expect.items():
        rc, result, err = _eval(capsys, home, TASK, agent)
        assert rc == 0, err
        (trial,) = result["trials"]  # type: ignore[misc]
        assert trial["state"] == state.value, trial
        assert trial["cached"] is False
        rec = TraceStore(home).get(trial["run_id"])
        first[agent] = rec.run_id
        assert rec.run_id.startswith("benchflow-") and rec.task_id == "cfg-bool-flag"
        assert rec.evaluation.state is state
        assert rec.runtime.runner == "benchflow" and rec.runtime.sandbox == "benchflow:docker"
        assert rec.metadata["remote_environment"] == "benchflow:docker"
        assert rec.metadata["importer"] == "benchflow"
        assert rec.runtime.harness == agent and rec.metadata["benchflow_agent"] == "oracle"
        # the verifier's own checks, as it printed them inside BenchFlow's container
        out = rec.evaluation.verifier_output or ""
        assert ("PASS hidden_tests" in out) == (agent == "oracle"), out
        assert "PASS no_unrelated_changes" in out  # the export left environment/ as it is
        # what ran: the oracle's solve.sh, as a tool call and its exit code; noop did nothing
        calls = [e for e in rec.events if e.kind == "tool_result"]
        assert len(calls) == (1 if agent == "oracle" else 0) == len(rec.events) // 2
        assert all(c.exit_code == 0 for c in calls)
        assert rec.trial_cache_key is not None
    for agent in expect:  # the same trial again: kept, nothing submitted
        rc, result, err = _eval(capsys, home, TASK, agent)
        (trial,) = result["trials"]  # type: ignore[misc]
        assert rc == 0 and trial["run_id"] == first[agent], err
        assert trial["cached"] is True
    assert len(list((home / "benchflow-jobs").iterdir())) == 2  # one job per trial, no more


@pytest.mark.docker
@pytest.mark.slow  # one image build that fails at once; no bench job starts
def test_a_task_whose_image_cannot_be_built_is_an_error_never_a_failed_trial(
    bench: str, compose: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "tasks" / "broken-image"
    shutil.copytree(TASK, task)
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "\nRUN exit 3\n")
    home = tmp_path / "state"
    rc, result, err = _eval(capsys, home, task, "noop")
    (trial,) = result["trials"]  # type: ignore[misc]
    assert rc == 4, err
    assert trial["state"] == "infra_error", trial
    assert "measured nothing (not the skill's failure)" in " ".join(err.split())
    assert "building" in trial["error"] and "Dockerfile" in trial["error"], trial
