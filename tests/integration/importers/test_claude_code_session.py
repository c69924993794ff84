"""Claude Code session logs (~/.claude/projects/<p>/<session>.jsonl) → run records with the
fidelity of an ATIF trajectory: times, models, tokens, paired tool calls, sub-agent turns."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from skillci.cli.main import main
from skillci.trace.atif import to_atif
from skillci.trace.importers.claude_code import (
    import_jobs,
    import_session,
    read_session,
    session_to_atif,
)

SID = "7d0c1f7e-2b1a-4a57-9a36-3f0e8a1c2b11"


def entry(kind: str, ts: str, message: dict[str, Any], **over: Any) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/app",
            "sessionId": SID, "version": "2.0.46", "gitBranch": "main", "type": kind,
            "message": message, "uuid": f"u-{ts}", "timestamp": ts, **over}  # fmt: skip


def assistant(ts: str, mid: str, block: dict[str, Any], model: str, **over: Any) -> dict[str, Any]:
    usage = {"input_tokens": 12, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0,
             "output_tokens": 7}  # fmt: skip
    msg = {"model": model, "id": mid, "type": "message", "role": "assistant",
           "content": [block], "stop_reason": None, "usage": usage}  # fmt: skip
    return entry("assistant", ts, msg, requestId=f"req_{mid}", **over)


SONNET, HAIKU = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
SESSION = [
    {"type": "summary", "summary": "Fix the failing test", "leafUuid": "u-x"},
    entry("user", "2025-11-20T22:11:00.000Z", {"role": "user", "content": "Fix tests/test_a.py"}),
    assistant("2025-11-20T22:11:02.000Z", "msg_1", {"type": "thinking", "thinking": "Look first."},
              SONNET),
    assistant("2025-11-20T22:11:02.500Z", "msg_1",
              {"type": "tool_use", "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "Task",
               "input": {"prompt": "find the bug"}}, SONNET),
    # the sub-agent's turns (isSidechain), in their place in time
    entry("user", "2025-11-20T22:11:03.000Z", {"role": "user", "content": "find the bug"},
          isSidechain=True),
    assistant("2025-11-20T22:11:04.000Z", "msg_2",
              {"type": "tool_use", "id": "toolu_01SideChainCall00000000", "name": "Bash",
               "input": {"command": "pytest -q"}}, HAIKU, isSidechain=True),
    entry("user", "2025-11-20T22:11:06.000Z",
          {"role": "user", "content": [{"type": "tool_result",
                                        "tool_use_id": "toolu_01SideChainCall00000000",
                                        "content": "1 failed", "is_error": False}]},
          isSidechain=True, toolUseResult={"stdout": "1 failed"}),
    entry("user", "2025-11-20T22:11:08.000Z",
          {"role": "user", "content": [{"type": "tool_result",
                                        "tool_use_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv",
                                        "content": [{"type": "text", "text": "off by one"}]}]}),
    assistant("2025-11-20T22:11:10.000Z", "msg_3", {"type": "text", "text": "Fixed it."}, SONNET),
    {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
]  # fmt: skip


def write(tmp: Path, name: str = f"{SID}.jsonl") -> Path:
    path = tmp / "-app" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in SESSION) + "{broken\n")
    return path


def test_session_becomes_a_record_with_times_models_and_sidechain(tmp_path: Path) -> None:
    rec = import_session(write(tmp_path))
    assert rec.run_id == f"claude-code-{SID}"
    assert rec.runtime.harness_version == "2.0.46"
    assert rec.model.name == SONNET
    kinds = [(e.kind, getattr(e, "role", None)) for e in rec.events]
    assert kinds[0] == ("message", "user") and ("tool_call", None) in kinds
    calls = {e.call_id: e for e in rec.events if e.kind == "tool_call"}
    results = {e.call_id: e for e in rec.events if e.kind == "tool_result"}
    assert set(calls) == set(results) == {"toolu_01AbCdEfGhIjKlMnOpQrStUv",
                                          "toolu_01SideChainCall00000000"}  # fmt: skip
    assert results["toolu_01AbCdEfGhIjKlMnOpQrStUv"].output == "off by one"
    assert [e.t for e in rec.events][:2] == [0.0, 2.0]
    assert rec.metadata["sidechain_steps"] == 2 and rec.metadata["other_entries"] == 2
    assert rec.cost.model_calls == 3 and rec.cost.input_tokens == 3 * 112
    assert any("not JSON" in w for w in rec.warnings)
    traj = to_atif(rec)
    models = [s.get("model_name") for s in traj["steps"] if s["source"] == "agent"]
    assert models == [SONNET, HAIKU, SONNET]
    side = [s["step_id"] for s in traj["steps"] if s["extra"]["is_sidechain"]]
    assert side == [3, 4]  # after the prompt and the call that started the sub-agent
    assert traj == session_to_atif(read_session(write(tmp_path / "again"))[0])
    extra = traj["steps"][1]["extra"]["claude_code"]
    assert extra["requestId"] == "req_msg_1" and extra["gitBranch"] == "main"


def test_cli_imports_a_session_file_once(tmp_path: Path) -> None:
    path, home = write(tmp_path), tmp_path / "home"
    copy = write(tmp_path / "copy")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["trace", "import", "--format", "claude-code", str(path), "--home",
                     str(home), "--json"])  # fmt: skip
    assert code == 0 and json.loads(out.getvalue())["stored"] == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["trace", "import", "--format", "claude-code", str(copy.parent), "--home",
                     str(home), "--json"])  # fmt: skip
    assert code == 0 and json.loads(out.getvalue())["already"] == 1
    assert [r.run_id for r in import_jobs(copy.parent)] == [f"claude-code-{SID}"]
