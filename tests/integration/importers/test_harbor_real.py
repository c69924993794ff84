"""Real Harbor job dirs (copied verbatim from a public Harbor fork's committed jobs/, see
tests/fixtures/harness-results/harbor/SOURCES.yaml) → run records: every trial imported with its
verdict, the verifier's output, the model from the trial config when the agent reports none,
killed trials as infra_error, unmapped fields listed and counted, nothing dropped silently."""

from __future__ import annotations

import json
import runpy
import shutil
from pathlib import Path

import pytest
import yaml

from skillci.cli.main import main
from skillci.trace.importers import benchflow
from skillci.trace.importers.harbor import find_trials, import_jobs, import_trial
from skillci.trace.models import EvalState

ROOT = Path(__file__).parents[2] / "fixtures" / "harness-results"
REAL = ROOT / "harbor"
BENCHMARK = Path(__file__).parents[3] / "benchmarks" / "import_fields.py"


def test_the_corpus_is_what_sources_yaml_lists() -> None:
    sources = yaml.safe_load((REAL / "SOURCES.yaml").read_text(encoding="utf-8"))
    listed = {item["path"] for item in sources["items"]}
    on_disk = {d.name for d in REAL.iterdir() if d.is_dir()}
    assert listed == on_disk
    assert len(on_disk) >= 10
    assert all(len(item["commit"]) == 40 for item in sources["items"])
    assert {item["split"] for item in sources["items"]} == {"dev", "test"}
    assert (REAL / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


def test_every_trial_is_imported_and_nothing_is_unmapped() -> None:
    records = import_jobs(REAL)
    assert len(records) == len(find_trials(REAL)) >= 50
    for rec in records:
        assert rec.metadata["unmapped"] == {}, rec.run_id
        assert rec.runtime.harness != "unknown", rec.run_id
    states = {r.evaluation.state for r in records}
    assert {EvalState.passed, EvalState.failed, EvalState.infra_error} <= states
    # BenchFlow's importer does not take Harbor's trials (or job summaries) for rollouts
    assert benchflow.find_rollouts(REAL) == []


def test_a_trial_with_an_atif_trajectory_keeps_tool_calls_rewards_and_verifier_output() -> None:
    trial = REAL / "2026-05-15__02-35-26" / "hermes-telegram-mirror-drop__GUTierP"
    rec = import_trial(trial)
    assert rec.evaluation.state == EvalState.failed and rec.evaluation.reward == 0.0
    assert rec.metadata["rewards"]["format_adherence"] == 0.8
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert calls[0].tool == "session_search"
    assert calls[0].arguments == {"query": "meeting time schedule"}
    assert [e.kind for e in rec.events].count("tool_result") == len(calls)
    assert rec.evaluation.verifier_output.startswith("=== fetching transcript")
    assert rec.atif is not None and rec.atif.root["schema_version"] == "ATIF-v1.2"
    assert rec.metadata["trial"]["trial_uri"].endswith("hermes-telegram-mirror-drop__GUTierP")
    assert "verifier/judge_reasoning.txt" in rec.metadata["unread_files"]


def test_the_model_comes_from_the_trial_config_when_the_agent_reports_none(
    tmp_path: Path,
) -> None:
    trial = tmp_path / "heartbeat-status-watcher__gnLkZ6D"
    shutil.copytree(REAL / "2026-05-26__11-41-23" / trial.name, trial)
    data = json.loads((trial / "result.json").read_text(encoding="utf-8"))
    assert import_trial(trial).model.name == data["agent_info"]["model_info"]["name"]
    data["agent_info"]["model_info"] = None  # as agents that do not report their model write
    (trial / "result.json").write_text(json.dumps(data), encoding="utf-8")
    rec = import_trial(trial)
    assert rec.model.name == data["config"]["agent"]["model_name"] == "anthropic/claude-opus-4-6"
    assert rec.evaluation.state == EvalState.passed


def test_a_killed_trial_is_infra_error_with_what_its_files_say() -> None:
    trial = REAL / "2026-05-15__02-40-18" / "hermes-telegram-mirror-drop__YVXHE7Y"
    assert not (trial / "result.json").exists()
    rec = import_trial(trial)
    assert rec.evaluation.state == EvalState.infra_error
    assert rec.runtime.harness == "hermes-gateway"  # from the trial's config.json
    assert rec.metadata["file_reward"] == 0.0
    assert any("verifier/ holds reward 0.0" in w for w in rec.warnings)


def test_environment_and_verifier_exceptions_keep_their_kind() -> None:
    timeout = import_trial(
        REAL / "2026-05-26__01-55-27" / "openclaw-telegram-media-failure__MttExFG"
    )
    assert timeout.evaluation.state == EvalState.infra_error
    assert timeout.stop_reason == "RuntimeError"
    assert "exception_info.exception_traceback" in timeout.metadata["trial"]
    tests_dir = import_trial(
        REAL / "2026-05-26__11-12-36" / "openclaw-telegram-media-failure__AK79ZWH"
    )
    assert tests_dir.evaluation.state == EvalState.verifier_error


def test_unknown_trial_result_fields_are_warned_counted_and_kept_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "2026-05-15__02-35-26"
    shutil.copytree(REAL / job.name, job)
    path = job / "hermes-telegram-mirror-drop__GUTierP" / "result.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["novel_field"] = {"x": 1}
    data["agent_result"]["n_reasoning_tokens"] = 7
    data["agent_result"]["n_cache_tokens"] = 3  # a kept field: not unmapped
    path.write_text(json.dumps(data), encoding="utf-8")
    (rec,) = import_jobs(job)
    assert rec.metadata["unmapped"] == {
        "result.json:novel_field": 1,
        "result.json:agent_result.n_reasoning_tokens": 1,
    }
    assert "unmapped result.json:novel_field" in rec.warnings
    assert rec.metadata["trial"]["agent_result.n_cache_tokens"] == 3
    assert main(["trace", "import", str(job), "--format", "harbor", "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["unmapped"] == {
        "result.json:agent_result.n_reasoning_tokens": 1,
        "result.json:novel_field": 1,
    }


def test_the_cli_imports_the_real_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "import", str(REAL), "--format", "harbor", "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["trials"] == len(find_trials(REAL))
    assert report["unmapped"] == {}
    assert sum(report["states"].values()) == report["trials"]


def test_the_import_benchmark_finds_no_silent_drop(capsys: pytest.CaptureFixture[str]) -> None:
    mod = runpy.run_path(str(BENCHMARK))
    assert mod["main"]() == 0
    out = capsys.readouterr().out
    assert "silent drops: 0" in out and "SILENT DROP" not in out
    assert "harbor test" in out and "benchflow dev" in out
    assert "codex dev       sessions=1" in out and "paired with their output 4" in out
