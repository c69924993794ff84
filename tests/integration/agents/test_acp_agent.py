"""skillci's ACP client (skillci.agents.acp) against a tiny ACP agent, through ``eval run``.

The agent is tests/fakes/acp_agent.py installed where the agents cache keeps OpenCode, so
``--agent opencode-acp`` starts it exactly as it starts ``opencode acp``: the trial's
sandbox, a fresh HOME with OpenCode's configuration naming the trial's loopback gateway,
the skill installed in ``.opencode/skills``. The agent boundary is the one fake; the
gateway, the route (a loopback scripted model), the workspace and the task's verifier are
real. The real OpenCode over ACP runs in test_real_agents.py (``agents``-marked).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillci.agents.acp import serve
from skillci.agents.acp_client import AcpConnection
from skillci.cli.main import main
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.scripted_agents import solve_cfg_log_level
from tests.integration.agents.helpers import use_route

ROOT = Path(__file__).resolve().parents[3]
SKILL = ROOT / "skills" / "repo-debugger"
FAKE = ROOT / "tests" / "fakes" / "acp_agent.py"
VERSION = "0.0.1-fake"


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeOpenAI, Path]]:
    """The scripted route, and the fake ACP agent installed as OpenCode ``VERSION``; write
    its mode to the returned path."""
    with FakeOpenAI([solve_cfg_log_level]) as fake:
        use_route(tmp_path, monkeypatch, fake.base_url)
        bin_dir = tmp_path / "agents" / f"opencode-{VERSION}" / "node_modules" / ".bin"
        bin_dir.mkdir(parents=True)
        shutil.copy(FAKE, bin_dir / "opencode")
        (bin_dir / "opencode").chmod(0o755)
        monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "agents"))
        yield fake, bin_dir / "mode"


def eval_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str, task: str = "cfg-log-level"
) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """``eval run --agent opencode-acp``: exit code, the trial's summary, its record."""
    root = extra[0] if extra else str(ROOT)
    argv = ["eval", "run", "--task", task, "--root", root, "--skill", str(SKILL)]
    argv += ["--agent", "opencode-acp", "--agent-version", VERSION, "--model", "scripted"]
    code = main([*argv, "--home", str(tmp_path / "state"), "--json"])
    [trial] = json.loads(capsys.readouterr().out)["trials"]
    record = json.loads((Path(trial["trial_dir"]) / "record.json").read_text())
    return code, trial, record


def test_a_session_becomes_the_record_with_tool_calls_results_and_the_skill_load(
    agent: tuple[FakeOpenAI, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, mode = agent
    mode.write_text("solve")
    code, trial, record = eval_run(tmp_path, capsys)
    assert (code, trial["state"]) == (0, "passed"), trial  # the allowed command fixed it
    assert (record["runtime"]["harness"], record["runtime"]["harness_version"]) == (
        "opencode-acp",
        VERSION,
    )
    events = record["events"]
    kinds = [e["kind"] for e in events]
    assert kinds == [
        "message",  # the task
        "tool_call",
        "skill_load",
        "tool_result",
        "tool_call",
        "tool_result",
        "message",  # the plan
        "message",  # the two chunks, joined
    ]
    skill_call, bash_call = (e for e in events if e["kind"] == "tool_call")
    assert (skill_call["tool"], skill_call["arguments"]) == ("skill", {"name": "repo-debugger"})
    assert bash_call["tool"] == "bash" and "log_level = debug" in bash_call["arguments"]["command"]
    result = next(e for e in events if e["kind"] == "tool_result" and e["call_id"] == "c2")
    assert (result["exit_code"], result["error"]) == (0, None)
    assert events[2]["path"] == "SKILL.md"
    assert events[-2]["content"] == "Plan:\n- [completed] fix the config"
    assert record["final_output"] == events[-1]["content"] == "Fixed the config."
    # the permission request was answered with the allow option, and the transcript kept it
    logs = Path(trial["trial_dir"]) / "logs" / "agent"
    said = [json.loads(x) for x in (logs / "opencode-acp.jsonl").read_text().splitlines()]
    [allow] = [
        m["message"] for m in said if m["from"] == "client" and m["message"].get("id") == 100
    ]
    assert allow["result"] == {"outcome": {"outcome": "selected", "optionId": "yes"}}
    # the session's cwd is the workspace as the agent sees it
    [new] = [m["message"] for m in said if m["message"].get("method") == "session/new"]
    assert new["params"]["mcpServers"] == []
    # calls recorded == calls the endpoint saw
    assert len((logs / "gateway.jsonl").read_text().splitlines()) == len(fake.requests) == 1
    assert record["cost"]["model_calls"] == 1


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("crash", "opencode-acp exited 3: fake agent: lost its mind mid-session"),
        ("garbage", "broke the ACP protocol: not a JSON-RPC 2.0 message: 'this is not json-rpc'"),
        ("deep", "broke the ACP protocol: not a JSON-RPC 2.0 message: '[[[["),
        ("error", "answered session/prompt with error -32603: Internal error: boom"),
    ],
)
def test_an_agent_that_crashes_or_breaks_the_protocol_is_an_error_never_a_failure(
    mode: str,
    said: str,
    agent: tuple[FakeOpenAI, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, mode_file = agent
    mode_file.write_text(mode)
    code, trial, record = eval_run(tmp_path, capsys)
    assert (code, trial["state"]) == (4, "infra_error"), trial
    assert record["stop_reason"] == "agent_error"
    assert said in record["evaluation"]["verifier_output"]
    assert record["evaluation"]["reward"] is None  # the verifier did not judge it
    logs = Path(trial["trial_dir"]) / "logs" / "agent"
    assert len((logs / "gateway.jsonl").read_text().splitlines()) == len(fake.requests)


def time_limited(
    agent: tuple[FakeOpenAI, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """``eval run`` of the fake agent in ``mode`` on a task whose agent has 3 s."""
    from tests.unit.tasks.helpers import TASK_TOML, make_harbor_task

    agent[1].write_text(mode)
    toml = TASK_TOML.replace("[agent]\ntimeout_sec = 300.0", "[agent]\ntimeout_sec = 3.0")
    make_harbor_task(tmp_path / "root" / "evals" / "tasks", "answer-42", toml=toml)
    return eval_run(tmp_path, capsys, str(tmp_path / "root"), task="answer-42")


def test_an_agent_that_never_answers_within_the_time_limit_is_an_error(
    agent: tuple[FakeOpenAI, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, trial, record = time_limited(agent, tmp_path, capsys, "hang")
    assert (code, trial["state"]) == (4, "infra_error"), trial
    assert (
        "time limit was reached before scripted answered"
        in (record["evaluation"]["verifier_output"])
    )


def test_at_the_time_limit_the_session_is_cancelled_and_what_the_agent_reports_is_kept(
    agent: tuple[FakeOpenAI, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, trial, record = time_limited(agent, tmp_path, capsys, "slow-tool")
    assert (code, trial["state"]) == (4, "infra_error"), trial
    logs = Path(trial["trial_dir"]) / "logs" / "agent"
    said = [json.loads(x) for x in (logs / "opencode-acp.jsonl").read_text().splitlines()]
    cancels = [m for m in said if m["message"].get("method") == "session/cancel"]
    assert [(c["from"], c["message"]["params"]) for c in cancels] == [
        ("client", {"sessionId": "s1"})
    ]
    answered = [m["message"]["result"] for m in said if "result" in m["message"]]
    assert {"stopReason": "cancelled"} in answered
    events = record["events"]
    [result] = [e for e in events if e["kind"] == "tool_result" and e["call_id"] == "c9"]
    assert result["output"] == "interrupted" and result["error"] == "interrupted"


def _connect(tmp_path: Path, script: str) -> tuple[AcpConnection, subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    notes: list[Any] = []
    conn = AcpConnection(
        proc.stdin,
        proc.stdout,
        tmp_path / "t.jsonl",
        serve=serve,
        notify=lambda m, p: notes.append((m, p)),
    )
    return conn.start(), proc


def _end(conn: AcpConnection, proc: subprocess.Popen[bytes]) -> None:
    conn.close()
    proc.wait(10)
    conn.join(5)
    assert proc.stdout is not None
    proc.stdout.close()


def test_a_response_to_no_call_of_ours_breaks_the_connection(tmp_path: Path) -> None:
    script = 'import sys; sys.stdin.readline(); print(\'{"jsonrpc": "2.0", "id": 7, "result": 1}\', flush=True); sys.stdin.read()'
    conn, proc = _connect(tmp_path, script)
    pending = conn.call("initialize", {})
    assert conn.closed.wait(10)
    assert pending.done.is_set() and not pending.answered
    assert conn.broken is not None and "a response to no call of ours" in conn.broken
    _end(conn, proc)


def test_an_agent_that_exits_leaves_the_call_unanswered_and_asks_are_answered(
    tmp_path: Path,
) -> None:
    ask = {"jsonrpc": "2.0", "id": "p", "method": "fs/read_text_file", "params": {"path": "/x"}}
    script = f"import sys; print({json.dumps(json.dumps(ask))}, flush=True); print(sys.stdin.readline(), file=sys.stderr); sys.stdin.readline()"
    conn, proc = _connect(tmp_path, script)
    pending = conn.call("session/prompt", {})
    assert pending.done.wait(10) and not pending.answered and conn.broken is None
    _end(conn, proc)
    said = [json.loads(x)["message"] for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    [answer] = [m for m in said if m.get("id") == "p" and "method" not in m]
    assert answer["error"]["code"] == -32601  # no fs offered
