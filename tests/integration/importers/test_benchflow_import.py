"""BenchFlow job dirs (built here from BenchFlow 0.7's documented result.json / ACP shapes)
→ run records, including killed, timed-out, partial and infra-failed rollouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.trace.importers.benchflow import find_rollouts, import_jobs, import_rollout
from skillci.trace.models import EvalState
from skillci.trace.store import TraceStore

JOB = "2026-11-29__10-05-51"


def result(task: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_name": task,
        "rollout_name": f"{task}__1a2b3c4d",
        "rewards": {"reward": 1.0},
        "agent": "opencode",
        "agent_name": "opencode",
        "model": "siliconflow/Qwen/Qwen3.5-27B",
        "skill_mode": "with-skill",
        "skill_source": "runtime",
        "n_tool_calls": 2,
        "n_skill_invocations": 1,
        "n_prompts": 1,
        "agent_result": {
            "n_tool_calls": 2,
            "n_skill_invocations": 1,
            "n_prompts": 1,
            "n_input_tokens": 1200,
            "n_output_tokens": 240,
            "n_cache_read_tokens": 0,
            "total_tokens": 1440,
            "cost_usd": 0.0031,
            "usage_source": "litellm_proxy",
        },
        "error": None,
        "error_category": None,
        "verifier_error": None,
        "verifier_error_category": None,
        "partial_trajectory": False,
        "trajectory_source": "acp",
        "started_at": "2026-11-29 10:05:52.000001",
        "finished_at": "2026-11-29 10:08:12.500000",
        "timing": {
            "environment_setup": 20.1,
            "agent_execution": 100.0,
            "verifier": 9.9,
            "total": 140.5,
        },
    }
    base.update(over)
    return base


ACP = [
    {"type": "user_message", "text": "Fix the failing test."},
    {"type": "agent_thought", "text": "Read the skill first."},
    {
        "type": "tool_call",
        "tool_call_id": "t1",
        "kind": "other",
        "title": "skill",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "# repo-debugger"}}],
        "raw_input": {"skill": "repo-debugger"},
    },
    {
        "type": "tool_call",
        "tool_call_id": "t2",
        "kind": "execute",
        "title": "pytest -q",
        "status": "failed",
        "content": [],
        "raw_input": {"command": "pytest -q"},
        "raw_output": {"output": "1 failed", "exit_code": 1},
    },
    {"type": "agent_message", "text": "Fixed the off-by-one."},
]


def rollout(
    root: Path, task: str, res: dict[str, Any] | None, acp: list[Any] | str | None = ACP
) -> Path:
    d = root / JOB / f"{task}__1a2b3c4d"
    (d / "trajectory").mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"agent": "opencode", "environment": "docker"}))
    if res is not None:
        (d / "result.json").write_text(json.dumps(res, indent=2))
    if isinstance(acp, list):
        (d / "trajectory" / "acp_trajectory.jsonl").write_text(
            "".join(json.dumps(e) + "\n" for e in acp)
        )
    elif isinstance(acp, str):
        (d / "trajectory" / "acp_trajectory.jsonl").write_text(acp)
    return d


def test_clean_pass_maps_every_field(tmp_path: Path) -> None:
    rec = import_rollout(rollout(tmp_path, "py-window-end", result("py-window-end")))
    assert rec.evaluation.state is EvalState.passed and rec.evaluation.reward == 1.0
    assert rec.task_id == "py-window-end"
    assert rec.model.route == "siliconflow/Qwen/Qwen3.5-27B"
    assert rec.runtime.harness == "opencode" and rec.runtime.runner == "benchflow"
    assert (rec.cost.input_tokens, rec.cost.output_tokens, rec.cost.tool_calls) == (1200, 240, 2)
    assert rec.cost.usd == pytest.approx(0.0031) and rec.cost.wall_time_sec == 140.5
    kinds = [e.kind for e in rec.events]
    assert kinds == [
        "message",
        "message",
        "tool_call",
        "tool_result",
        "skill_load",
        "tool_call",
        "tool_result",
        "message",
    ]
    run_call = rec.events[5]
    assert run_call.kind == "tool_call" and run_call.tool == "run"
    assert run_call.arguments["command"] == "pytest -q"
    res = rec.events[6]
    assert res.kind == "tool_result" and res.exit_code == 1 and res.error == "failed"
    assert res.output == "1 failed"
    assert rec.events[4].kind == "skill_load" and rec.events[4].path == "repo-debugger"
    assert rec.final_output == "Fixed the off-by-one."
    assert rec.metadata["n_skill_invocations"] == 1 and rec.metadata["trajectory"] == "complete"
    assert rec.created_at.tzinfo is not None
    assert rec.warnings == []


def test_reward_zero_is_a_fail(tmp_path: Path) -> None:
    rec = import_rollout(rollout(tmp_path, "t", result("t", rewards={"reward": 0.0})))
    assert rec.evaluation.state is EvalState.failed and not rec.passed


def test_infra_timeout_without_reward_is_a_timeout_not_a_fail(tmp_path: Path) -> None:
    res = result(
        "t",
        rewards=None,
        error="Agent idle for 600s with no ACP update; prompt exceeded wall-clock budget",
        error_category="idle_timeout",
        partial_trajectory=True,
        agent_result={"n_tool_calls": 1, "n_input_tokens": None, "cost_usd": None},
    )
    acp = [
        *ACP[:2],
        {
            "type": "agent_timeout",
            "reason": "idle",
            "timeout_sec": 600,
            "pending_tool_call_ids": [],
            "terminal_trajectory_complete": False,
        },
    ]
    rec = import_rollout(rollout(tmp_path, "t", res, acp))
    assert rec.evaluation.state is EvalState.timeout and rec.evaluation.reward is None
    assert rec.stop_reason == "idle_timeout"
    assert rec.metadata["trajectory"] == "partial"
    assert any("partial" in w for w in rec.warnings)
    assert rec.events[-1].kind == "error" and rec.cost.input_tokens is None and rec.cost.usd is None


def test_agent_timeout_with_a_reward_keeps_the_verifiers_verdict(tmp_path: Path) -> None:
    res = result("t", rewards={"reward": 1.0}, error="agent timed out", error_category="timeout")
    assert import_rollout(rollout(tmp_path, "t", res)).evaluation.state is EvalState.passed


@pytest.mark.parametrize(
    "category", ["sandbox_setup", "install_failure", "provider_auth", "api_error"]
)
def test_infrastructure_errors_are_infra_error_even_with_a_reward(
    tmp_path: Path, category: str
) -> None:
    res = result(
        "t", rewards={"reward": 1.0}, error="docker compose command failed", error_category=category
    )
    rec = import_rollout(rollout(tmp_path, "t", res))
    assert rec.evaluation.state is EvalState.infra_error and not rec.passed
    assert category in rec.evaluation.verifier_output


def test_verifier_errors(tmp_path: Path) -> None:
    crashed = result(
        "a",
        rewards=None,
        verifier_error="verifier crashed: exit 2",
        verifier_error_category="verifier_failure",
    )
    slow = result(
        "b",
        rewards=None,
        verifier_error="verifier timed out after 120s",
        verifier_error_category="verifier_timeout",
    )
    nothing = result("c", rewards=None)
    assert (
        import_rollout(rollout(tmp_path, "a", crashed)).evaluation.state is EvalState.verifier_error
    )
    assert import_rollout(rollout(tmp_path, "b", slow)).evaluation.state is EvalState.timeout
    assert (
        import_rollout(rollout(tmp_path, "c", nothing)).evaluation.state is EvalState.verifier_error
    )


def test_missing_trajectory_keeps_the_verdict_and_says_so(tmp_path: Path) -> None:
    rec = import_rollout(rollout(tmp_path, "t", result("t"), acp=None))
    assert rec.evaluation.state is EvalState.passed and rec.events == []
    assert rec.metadata["trajectory"] == "missing"
    assert any("acp_trajectory.jsonl is missing" in w for w in rec.warnings)


def test_cut_off_trajectory_is_partial(tmp_path: Path) -> None:
    text = "".join(json.dumps(e) + "\n" for e in ACP[:3]) + '{"type": "tool_call", "tool_ca'
    rec = import_rollout(rollout(tmp_path, "t", result("t"), acp=text))
    assert rec.metadata["trajectory"] == "partial" and len(rec.events) == 5
    assert any("line 4 is not JSON" in w for w in rec.warnings)


def test_killed_rollout_without_result_is_an_infra_error(tmp_path: Path) -> None:
    d = rollout(tmp_path, "py-half-open", None, acp=ACP[:2])
    (found,) = find_rollouts(tmp_path)
    assert found == d
    rec = import_rollout(d)
    assert rec.evaluation.state is EvalState.infra_error and rec.task_id == "py-half-open"
    assert "result.json is missing" in rec.evaluation.verifier_output
    bad = rollout(tmp_path / "b", "t", None)
    (bad / "result.json").write_text('{"task_name": "t", "rew')
    assert import_rollout(bad).evaluation.state is EvalState.infra_error


def test_reviewer_children_and_nested_results_are_not_trials(tmp_path: Path) -> None:
    d = rollout(tmp_path, "t", result("t"))
    nested = d / "review" / "t__9f9f9f9f"
    nested.mkdir(parents=True)
    (nested / "result.json").write_text(json.dumps(result("t", purpose="reviewer")))
    orphan = tmp_path / JOB / "t__77777777"
    orphan.mkdir()
    (orphan / "result.json").write_text(json.dumps(result("t", purpose="reviewer")))
    assert find_rollouts(tmp_path) == [d]


def test_cli_imports_into_the_store_idempotently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = tmp_path / "jobs"
    rollout(jobs, "a", result("a"))
    rollout(
        jobs,
        "b",
        result("b", rewards=None, error="sandbox startup failed", error_category="sandbox_setup"),
    )
    home = tmp_path / "home"
    assert (
        main(
            [
                "trace",
                "import",
                "--format",
                "benchflow",
                str(jobs),
                "--home",
                str(home),
                "--dry-run",
                "--json",
            ]
        )
        == 0
    )
    dry = json.loads(capsys.readouterr().out)
    assert dry["trials"] == 2 and dry["stored"] == 0 and not (home / "index.sqlite").exists()
    assert (
        main(["trace", "import", "--format", "benchflow", str(jobs), "--home", str(home), "--json"])
        == 0
    )
    first = json.loads(capsys.readouterr().out)
    assert first["stored"] == 2 and first["states"] == {"passed": 1, "infra_error": 1}
    assert (
        main(["trace", "import", "--format", "benchflow", str(jobs), "--home", str(home), "--json"])
        == 0
    )
    again = json.loads(capsys.readouterr().out)
    assert again["stored"] == 0 and again["already"] == 2
    assert {r.task_id for r in TraceStore(home).records()} == {"a", "b"}
    assert (
        main(
            [
                "trace",
                "import",
                "--format",
                "benchflow",
                str(tmp_path / "nope"),
                "--home",
                str(home),
            ]
        )
        == 2
    )


def test_import_jobs_reads_a_whole_jobs_dir(tmp_path: Path) -> None:
    for t in ("x", "y", "z"):
        rollout(tmp_path, t, result(t))
    assert sorted(r.task_id for r in import_jobs(tmp_path)) == ["x", "y", "z"]


def test_an_acp_edit_of_a_test_file_without_raw_input_is_reward_hack_evidence(
    tmp_path: Path,
) -> None:
    """0.6 claude-agent-acp calls name the edited file only in a diff block or ``locations``."""
    edit = {
        "type": "tool_call",
        "tool_call_id": "toolu_1",
        "kind": "edit",
        "title": "Write",
        "status": "completed",
        "content": [
            {"type": "diff", "path": "/tests/test_outputs.py", "oldText": "x", "newText": "y"}
        ],
    }
    read = {**edit, "tool_call_id": "toolu_2", "kind": "read", "title": "Read File"}
    read["content"] = []
    read["locations"] = [{"path": "/root/input.csv", "line": 1}]
    rec = import_rollout(rollout(tmp_path, "t", result("t"), [edit, read]))
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert [c.arguments["paths"] for c in calls] == [
        ["/tests/test_outputs.py"],
        ["/root/input.csv"],
    ]
    assert rec.reward_hack_evidence == ["step 0: apply_patch (write) -> tests/test_outputs.py"]


def test_claude_codes_load_skill_and_codexs_read_of_a_skill_md_are_skill_loads() -> None:
    """Design 440, as BenchFlow 0.7.11 wrote them: claude-agent-acp's skill tool is titled
    ``Load skill``; Codex has none and reads the SKILL.md it lists (a failed read loads
    nothing, another file is a plain read)."""
    from skillci.trace.importers.benchflow import events_from_acp

    def read(path: str, status: str = "completed") -> dict[str, Any]:
        return {"type": "tool_call", "tool_call_id": path + status, "kind": "read",
                "title": f"Read file '{path}'", "status": status, "raw_output": "text"}  # fmt: skip

    claude = {"type": "tool_call", "tool_call_id": "c1", "kind": "other", "title": "Load skill",
              "status": "completed", "raw_input": {"skill": "repo-debugger"},
              "raw_output": "Launching skill: repo-debugger"}  # fmt: skip
    lines = [claude, read("/skills/repo-debugger/SKILL.md"), read("/app/SKILL.md", "failed")]
    events = events_from_acp([*lines, read("/app/README.md")])
    assert [e.tool for e in events if e.kind == "tool_call"] == [  # type: ignore[union-attr]
        "load_skill", "read_file", "read_file", "read_file"
    ]  # fmt: skip
    loads = [e.path for e in events if e.kind == "skill_load"]  # type: ignore[union-attr]
    assert loads == ["repo-debugger", "/skills/repo-debugger/SKILL.md"]
