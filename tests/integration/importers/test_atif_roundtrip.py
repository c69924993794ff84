"""ATIF in and out (issue 35): every trajectory of the corpora comes back field for field;
trial ids, naive timestamps, unknown counts, sub-agent steps, job settings and named rewards."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.tasks.reward import primary_reward
from skillci.trace.atif import events_from_atif, naive_offset, to_atif
from skillci.trace.importers.harbor import import_trial
from skillci.trace.models import EvalState, RunRecord

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "harness-results"
TRAJECTORIES = sorted(
    [*FIXTURES.rglob("agent/trajectory.json"), *FIXTURES.rglob("trainer/atif.json")]
)
CHAT = FIXTURES / "harbor" / "appSim-example-chat-local"


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    return code, out.getvalue()


def test_the_corpora_hold_trajectories_of_several_atif_versions() -> None:
    versions = {json.loads(p.read_text())["schema_version"] for p in TRAJECTORIES}
    assert len(TRAJECTORIES) >= 40
    assert {"ATIF-v1.2", "ATIF-v1.5", "ATIF-v1.6", "ATIF-v1.7"} <= versions


@pytest.mark.parametrize("path", TRAJECTORIES, ids=lambda p: p.parent.parent.name)
def test_import_then_export_gives_the_trajectory_back(path: Path) -> None:
    original = json.loads(path.read_text(encoding="utf-8"))
    events, trace, _ = events_from_atif(original)
    rec = RunRecord.model_validate(
        {
            "run_id": "r1",
            "task_id": "t",
            "agent_role": "student",
            "model": {"route": "m"},
            "runtime": {"harness": "h"},
            "evaluation": {"state": "failed"},
            "events": [{**ev, "step": i} for i, ev in enumerate(events)],
            "atif": trace.model_dump(),
        }
    )
    again = RunRecord.model_validate_json(rec.model_dump_json())  # as saved and read back
    assert to_atif(again) == original


def test_tool_call_ids_pair_calls_with_their_results() -> None:
    trial = CHAT / "acme-support-mcp__BQ7FcM6"
    rec = import_trial(trial)
    calls = {e.call_id for e in rec.events if e.kind == "tool_call"}
    results = {e.call_id for e in rec.events if e.kind == "tool_result"}
    assert calls and results and results <= calls
    assert all(not c.startswith("[REDACTED") for c in calls)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_reimport_from_another_path_is_already_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    other = _copy(CHAT, tmp_path / "elsewhere" / "renamed-job")
    code1, first = cli("trace", "import", "--format", "harbor", str(CHAT), "--home", str(home),
                       "--json")  # fmt: skip
    code2, second = cli("trace", "import", "--format", "harbor", str(other), "--home",
                        str(home), "--json")  # fmt: skip
    assert (code1, code2) == (0, 0)
    assert json.loads(first)["stored"] == 2
    assert json.loads(second)["already"] == 2
    rid = import_trial(CHAT / "acme-support-api__epLjshu").run_id
    result = json.loads((CHAT / "acme-support-api__epLjshu" / "result.json").read_text())
    assert rid == f"harbor-{result['id']}"


def test_cli_export_writes_the_original_trajectory(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out.json"
    trial = CHAT / "acme-support-api__epLjshu"
    assert cli("trace", "import", "--format", "harbor", str(trial), "--home", str(home))[0] == 0
    rid = import_trial(trial).run_id
    code, _ = cli("trace", "export", "--format", "atif", rid, "--home", str(home), "--out",
                  str(out))  # fmt: skip
    assert code == 0
    assert json.loads(out.read_text()) == json.loads((trial / "agent/trajectory.json").read_text())
    assert cli("trace", "export", "--format", "otel", rid, "--home", str(home))[0] == 2


def _edit(trial: Path, name: str, fn: Any) -> None:
    path = trial / name
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def test_naive_step_times_in_another_zone_are_placed_by_the_trial_window(tmp_path: Path) -> None:
    trial = _copy(CHAT / "acme-support-api__epLjshu", tmp_path / "job" / "acme__abcdefg")
    res = json.loads((trial / "result.json").read_text())
    start = datetime.fromisoformat(res["agent_execution"]["started_at"].replace("Z", "+00:00"))

    def local_minus_8h(traj: dict[str, Any]) -> None:
        for i, step in enumerate(traj["steps"]):
            when = start - timedelta(hours=8) + timedelta(seconds=5 * i)
            step["timestamp"] = when.replace(tzinfo=None).isoformat()

    _edit(trial, "agent/trajectory.json", local_minus_8h)
    rec = import_trial(trial)
    assert any("UTC-8h" in w for w in rec.warnings), rec.warnings
    ts = [e.t for e in rec.events if e.t is not None]
    assert ts and max(ts) < 600  # placed in the run, not 8 hours off
    assert to_atif(rec) == json.loads((trial / "agent/trajectory.json").read_text())


def test_naive_offset_rules() -> None:
    start = datetime(2026, 5, 1, 22, 11, tzinfo=UTC)
    end = datetime(2026, 5, 1, 22, 20, tzinfo=UTC)
    utc, _ = naive_offset([datetime(2026, 5, 1, 22, 12)], start, end)
    pst, why = naive_offset([datetime(2026, 5, 1, 14, 12)], start, end)
    lost, _ = naive_offset([datetime(2026, 5, 3, 1, 0)], start, end)
    assert utc is not None and utc.total_seconds() == 0
    assert pst is not None and pst.total_seconds() == -8 * 3600 and "UTC-8h" in why
    assert lost is None


def test_unknown_tokens_stay_named_and_model_calls_count_agent_steps(tmp_path: Path) -> None:
    trial = _copy(CHAT / "acme-support-api__epLjshu", tmp_path / "job" / "acme__abcdefg")

    def null_tokens(res: dict[str, Any]) -> None:
        res["agent_result"] = {"n_input_tokens": None, "n_output_tokens": None}

    def no_totals(traj: dict[str, Any]) -> None:
        traj.pop("final_metrics", None)

    _edit(trial, "result.json", null_tokens)
    _edit(trial, "agent/trajectory.json", no_totals)
    traj = json.loads((trial / "agent/trajectory.json").read_text())
    rec = import_trial(trial)
    assert set(rec.metadata["unknown_counts"]) == {"n_input_tokens", "n_output_tokens"}
    assert rec.cost.model_calls == sum(1 for s in traj["steps"] if s["source"] == "agent") > 0


def test_sidechain_steps_are_counted_and_kept(tmp_path: Path) -> None:
    trial = _copy(CHAT / "acme-support-api__epLjshu", tmp_path / "job" / "acme__abcdefg")

    def mark(traj: dict[str, Any]) -> None:
        for s in traj["steps"][1:3]:
            s["extra"] = {**(s.get("extra") or {}), "is_sidechain": True}

    _edit(trial, "agent/trajectory.json", mark)
    rec = import_trial(trial)
    assert rec.metadata["sidechain_steps"] == 2
    assert any("2 sub-agent step(s)" in w for w in rec.warnings), rec.warnings
    assert to_atif(rec) == json.loads((trial / "agent/trajectory.json").read_text())


def test_job_settings_are_read_and_the_rest_listed() -> None:
    job = FIXTURES / "harbor" / "2026-05-15__05-26-37"
    rec = import_trial(job / "hermes-telegram-clarify-mis-rout__7pYNGtk")
    settings = rec.metadata["job"]
    assert settings["config"]["n_attempts"] == 1 and "n_concurrent_trials" in settings["config"]
    assert "agents" in settings["config_unread"] and "stats" in settings["result_unread"]
    code, out = cli("trace", "import", "--format", "harbor", str(job), "--dry-run", "--json")
    (reported,) = json.loads(out)["jobs"]
    assert code == 0 and reported["config"]["n_attempts"] == 1
    code, text = cli("trace", "import", "--format", "harbor", str(job), "--dry-run")
    assert code == 0 and "n_concurrent_trials=" in text and "not read: " in text


def test_named_rewards_pick_a_primary_without_a_verifier_error(tmp_path: Path) -> None:
    trial = _copy(CHAT / "acme-support-api__epLjshu", tmp_path / "job" / "acme__abcdefg")

    def two(res: dict[str, Any]) -> None:
        res["verifier_result"] = {"rewards": {"correctness": 1.0, "performance": 0.4}}

    _edit(trial, "result.json", two)
    rec = import_trial(trial)
    assert rec.evaluation.state is not EvalState.verifier_error
    assert rec.evaluation.reward == 0.4
    assert rec.metadata["rewards"] == {"correctness": 1.0, "performance": 0.4}
    assert "minimum" in rec.metadata["primary_reward"]
    assert primary_reward({"correctness": 1.0, "performance": 0.4}, "correctness")[0] == 1.0
    assert primary_reward({"reward": 0.5, "x": 1})[0] == 0.5
    assert primary_reward({"a": "n/a"})[0] is None
    assert primary_reward({"a": 1.0}, "b")[0] is None


def test_export_of_a_native_record_pairs_calls_and_results() -> None:
    rec = RunRecord.model_validate(
        {
            "run_id": "run-1",
            "task_id": "t",
            "agent_role": "student",
            "model": {"route": "sim/student", "name": "sim"},
            "runtime": {"harness": "skillci-agent", "harness_version": "1"},
            "evaluation": {"state": "passed", "passed": True, "reward": 1.0},
            "events": [
                {"step": 0, "kind": "message", "role": "user", "content": "fix it"},
                {"step": 1, "kind": "message", "role": "assistant", "content": "looking",
                 "input_tokens": 10, "output_tokens": 2},
                {"step": 2, "kind": "tool_call", "tool": "run", "call_id": "c1",
                 "arguments": {"command": "ls"}},
                {"step": 3, "kind": "tool_result", "call_id": "c1", "output": "a.py"},
                {"step": 4, "kind": "message", "role": "assistant", "content": "done"},
            ],
        }
    )  # fmt: skip
    traj = to_atif(rec)
    assert [s["source"] for s in traj["steps"]] == ["user", "agent", "agent"]
    step = traj["steps"][1]
    assert step["tool_calls"][0]["tool_call_id"] == "c1"
    assert step["observation"]["results"][0] == {"source_call_id": "c1", "content": "a.py"}
    assert step["metrics"] == {"prompt_tokens": 10, "completion_tokens": 2}
    assert [s["step_id"] for s in traj["steps"]] == [1, 2, 3]
