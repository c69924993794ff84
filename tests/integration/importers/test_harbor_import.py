"""Harbor job dirs (built here from Harbor 0.25's TrialResult and ATIF shapes) → run records,
including killed trials, timeouts, verifier failures and environment failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillci.trace.importers.harbor import find_trials, import_jobs, import_trial
from skillci.trace.models import EvalState

JOB = "2026-11-29__10-49-28"


def trial_result(task: str, name: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "15aa6b72-513c-4d47-a18d-87ff40bab9bb",
        "task_name": task,
        "trial_name": name,
        "trial_uri": f"file:///jobs/{JOB}/{name}",
        "task_id": {"path": f"/tasks/{task}"},
        "source": "tasks",
        "task_checksum": "feb0b0c1",
        "config": {},
        "agent_info": {
            "name": "terminus-2",
            "version": "2.0.0",
            "model_info": {"name": "gpt-4o-mini", "provider": "openai"},
        },
        "agent_result": {
            "n_input_tokens": 900,
            "n_cache_tokens": 0,
            "n_output_tokens": 120,
            "cost_usd": 0.002,
        },
        "verifier_result": {"rewards": {"reward": 1.0, "hidden_tests": 1.0}},
        "exception_info": None,
        "started_at": "2026-11-29T10:49:34.894157Z",
        "finished_at": "2026-11-29T10:50:36.303249Z",
        "environment_setup": {
            "started_at": "2026-11-29T10:49:34.9Z",
            "finished_at": "2026-11-29T10:49:35.9Z",
        },
        "agent_execution": {
            "started_at": "2026-11-29T10:49:36Z",
            "finished_at": "2026-11-29T10:50:30Z",
        },
        "verifier": {"started_at": "2026-11-29T10:50:31Z", "finished_at": "2026-11-29T10:50:36Z"},
        "step_results": None,
    }
    base.update(over)
    return base


ATIF = {
    "schema_version": "ATIF-v1.4",
    "session_id": "s1",
    "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o-mini"},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You are an agent."},
        {"step_id": 2, "source": "user", "message": "Fix the failing test."},
        {
            "step_id": 3,
            "source": "agent",
            "message": "Let me run the tests.",
            "reasoning_content": "Start with the failing test.",
            "tool_calls": [
                {
                    "tool_call_id": "c1",
                    "function_name": "bash_command",
                    "arguments": {"keystrokes": "pytest -q\n"},
                },
                {
                    "tool_call_id": "c2",
                    "function_name": "skill",
                    "arguments": {"name": "repo-debugger"},
                },
            ],
            "observation": {
                "results": [
                    {"source_call_id": "c1", "content": "1 failed"},
                    {
                        "source_call_id": "c2",
                        "content": [{"type": "text", "text": "# repo-debugger"}],
                    },
                ]
            },
            "metrics": {"prompt_tokens": 500, "completion_tokens": 60},
        },
        {"step_id": 4, "source": "agent", "message": "Done: fixed the bound."},
    ],
}


def trial(
    root: Path, task: str, res: dict[str, Any] | None, atif: dict[str, Any] | None = ATIF
) -> Path:
    name = f"{task}__AbC12xY"
    d = root / JOB / name
    (d / "agent").mkdir(parents=True)
    (d / "config.json").write_text("{}")
    if res is not None:
        (d / "result.json").write_text(json.dumps(res if res else trial_result(task, name)))
    if atif is not None:
        (d / "agent" / "trajectory.json").write_text(json.dumps(atif))
    return d


def test_a_passing_trial_with_an_atif_trajectory(tmp_path: Path) -> None:
    d = trial(tmp_path, "py-window-end", trial_result("py-window-end", "py-window-end__AbC12xY"))
    (tmp_path / JOB / "result.json").write_text(
        json.dumps({"id": "job", "n_total_trials": 1, "stats": {}})
    )
    assert find_trials(tmp_path) == [d]
    rec = import_trial(d)
    assert rec.evaluation.state is EvalState.passed and rec.evaluation.reward == 1.0
    assert rec.model.route == "openai/gpt-4o-mini" and rec.runtime.harness == "terminus-2"
    assert rec.runtime.harness_version == "2.0.0" and rec.runtime.runner == "harbor"
    assert (rec.cost.input_tokens, rec.cost.output_tokens, rec.cost.usd) == (900, 120, 0.002)
    assert rec.cost.wall_time_sec == pytest.approx(61.409, abs=0.01)
    assert [e.kind for e in rec.events] == [
        "message",
        "message",
        "message",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "skill_load",
        "message",
    ]
    assert rec.events[3].kind == "message" and rec.events[3].output_tokens == 60
    assert rec.events[5].kind == "tool_result" and rec.events[5].output == "1 failed"
    assert rec.events[8].kind == "skill_load" and rec.events[8].path == "repo-debugger"
    assert rec.final_output == "Done: fixed the bound."
    assert rec.metadata["timing"]["agent_execution"] == 54.0


@pytest.mark.parametrize(
    ("exc", "rewards", "state"),
    [
        ("AgentTimeoutError", None, EvalState.timeout),
        ("AgentTimeoutError", {"reward": 0.0}, EvalState.failed),
        ("VerifierTimeoutError", None, EvalState.timeout),
        ("RewardFileNotFoundError", None, EvalState.verifier_error),
        ("VerifierOutputParseError", None, EvalState.verifier_error),
        ("EnvironmentStartTimeoutError", None, EvalState.infra_error),
        ("DockerComposeError", {"reward": 1.0}, EvalState.infra_error),
    ],
)
def test_exceptions_become_explicit_states(
    tmp_path: Path, exc: str, rewards: dict[str, float] | None, state: EvalState
) -> None:
    name = "t__AbC12xY"
    res = trial_result(
        "t",
        name,
        verifier_result={"rewards": rewards} if rewards is not None else None,
        exception_info={
            "exception_type": exc,
            "exception_message": "boom",
            "exception_traceback": "...",
            "occurred_at": "2026-11-29T10:50:00Z",
        },
    )
    rec = import_trial(trial(tmp_path, "t", res))
    assert rec.evaluation.state is state and rec.passed is False
    assert rec.stop_reason == exc


def test_killed_trial_without_result_is_an_infra_error(tmp_path: Path) -> None:
    d = trial(tmp_path, "py-half-open", None, atif=None)
    assert find_trials(tmp_path) == [d]
    rec = import_trial(d)
    assert rec.evaluation.state is EvalState.infra_error and rec.task_id == "py-half-open"
    assert rec.metadata["trajectory"] == "missing"


def test_missing_trajectory_of_a_model_agent_is_a_warning(tmp_path: Path) -> None:
    rec = import_trial(trial(tmp_path, "t", trial_result("t", "t__AbC12xY"), atif=None))
    assert rec.evaluation.state is EvalState.passed and rec.events == []
    assert rec.metadata["trajectory"] == "missing"
    assert any("trajectory.json is missing" in w for w in rec.warnings)


def test_reimport_is_the_same_record(tmp_path: Path) -> None:
    trial(tmp_path, "t", trial_result("t", "t__AbC12xY"))
    a, b = import_jobs(tmp_path), import_jobs(tmp_path)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]


def test_a_tool_call_that_rewrites_the_tests_is_reward_hack_evidence(tmp_path: Path) -> None:
    clean = import_trial(trial(tmp_path / "a", "t", trial_result("t", "t__AbC12xY")))
    assert clean.reward_hack_evidence == []  # `pytest -q` and a skill load touch no test file
    hacked = json.loads(json.dumps(ATIF))
    call = hacked["steps"][2]["tool_calls"][0]
    call["arguments"] = {"keystrokes": "echo 'def test_ok(): pass' > /tests/test_outputs.py\n"}
    rec = import_trial(trial(tmp_path / "b", "t", trial_result("t", "t__AbC12xY"), hacked))
    assert len(rec.reward_hack_evidence) == 1
    assert "tests/test_outputs.py" in rec.reward_hack_evidence[0]
    assert rec.reward_hack_evidence[0].startswith("step 4: ")
