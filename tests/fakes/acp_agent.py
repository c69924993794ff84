#!/usr/bin/env python3
"""A tiny ACP agent for the client's tests: JSON-RPC 2.0 on stdin/stdout, like ``opencode acp``.

Installed by the tests as ``<agents cache>/opencode-<version>/node_modules/.bin/opencode``
(so ``--agent opencode-acp`` runs it in the trial's sandbox with the fresh HOME OpenCode's
adapter configures); what it does comes from the file ``mode`` beside it:

- ``solve``: initialize, session/new, then on the prompt: one call to the model gateway
  named in ``$OPENCODE_CONFIG``, a ``skill`` tool call loading ``repo-debugger``, a
  permission request, and — once allowed — a ``bash`` tool call that fixes the bundled
  task cfg-log-level (run for real in its cwd), a plan, a message in two chunks,
  ``end_turn``;
- ``crash``: as ``solve`` up to the first tool call, then exits 3 mid-session;
- ``garbage``: answers ``initialize`` with a line that is not JSON;
- ``deep``: answers ``initialize`` with JSON nested 100,000 levels deep;
- ``error``: answers ``session/prompt`` with a JSON-RPC error;
- ``hang``: answers ``initialize``, then never anything else;
- ``slow-tool``: on the prompt, starts a ``bash`` tool call that never finishes by itself;
  a ``session/cancel`` ends it (status ``failed``, output ``interrupted``) and the turn
  (``cancelled``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

MODE = (Path(sys.argv[0]).resolve().parent / "mode").read_text().strip()
FIX = "sed -i 's/^log_level = verbose$/log_level = debug/' config/service.ini"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session: str, **fields: Any) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": fields}})


def read() -> dict[str, Any]:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    message: dict[str, Any] = json.loads(line)
    return message


def ask_model() -> None:
    config = json.loads(Path(os.environ["OPENCODE_CONFIG"]).read_text())
    provider = config["provider"]["skillci"]
    body = {
        "model": config["model"].split("/", 1)[1],
        "messages": [{"role": "user", "content": "hi"}],
    }
    req = urllib.request.Request(
        provider["options"]["baseURL"] + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {provider['options']['apiKey']}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        resp.read()


def prompt(msg_id: Any, session: str, cwd: str) -> None:
    ask_model()
    update(session, sessionUpdate="tool_call", toolCallId="c1", title="skill", status="pending")
    update(
        session,
        sessionUpdate="tool_call_update",
        toolCallId="c1",
        status="in_progress",
        title="skill",
        rawInput={"name": "repo-debugger"},
    )
    if MODE == "crash":
        sys.stderr.write("fake agent: lost its mind mid-session\n")
        sys.exit(3)
    update(
        session,
        sessionUpdate="tool_call_update",
        toolCallId="c1",
        status="completed",
        title="Loaded skill: repo-debugger",
        content=[{"type": "content", "content": {"type": "text", "text": "<skill_content/>"}}],
    )
    call = {"toolCallId": "c2", "title": "bash", "kind": "execute", "rawInput": {"command": FIX}}
    update(session, sessionUpdate="tool_call", status="pending", **call)
    options = [
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        {"optionId": "yes", "name": "Allow once", "kind": "allow_once"},
    ]
    params = {"sessionId": session, "toolCall": call, "options": options}
    send({"id": 100, "method": "session/request_permission", "params": params})
    answer = read()
    outcome = answer.get("result", {}).get("outcome", {})
    if outcome.get("optionId") == "yes":
        done = subprocess.run(
            ["sh", "-c", FIX], cwd=cwd, capture_output=True, text=True, check=False
        )
        raw = {"output": done.stdout + done.stderr, "metadata": {"exit": done.returncode}}
        update(
            session,
            sessionUpdate="tool_call_update",
            toolCallId="c2",
            status="completed",
            title=FIX,
            rawOutput=raw,
        )
    else:
        update(
            session,
            sessionUpdate="tool_call_update",
            toolCallId="c2",
            status="failed",
            rawOutput={"output": "denied"},
        )
    update(
        session,
        sessionUpdate="plan",
        entries=[{"content": "fix the config", "status": "completed"}],
    )
    update(session, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "Fixed "})
    update(
        session,
        sessionUpdate="agent_message_chunk",
        content={"type": "text", "text": "the config."},
    )
    send({"id": msg_id, "result": {"stopReason": "end_turn"}})


def slow_tool(msg_id: Any, session: str) -> None:
    call = {"toolCallId": "c9", "title": "bash", "kind": "execute"}
    update(
        session,
        sessionUpdate="tool_call",
        status="in_progress",
        **call,
        rawInput={"command": "sleep 3600"},
    )
    while read().get("method") != "session/cancel":
        pass
    update(
        session,
        sessionUpdate="tool_call_update",
        toolCallId="c9",
        status="failed",
        rawOutput={"output": "interrupted"},
    )
    send({"id": msg_id, "result": {"stopReason": "cancelled"}})


def main() -> None:
    cwd = sys.argv[sys.argv.index("--cwd") + 1] if "--cwd" in sys.argv else os.getcwd()
    while True:
        msg = read()
        method, msg_id = msg.get("method"), msg.get("id")
        if method == "initialize":
            if MODE in ("garbage", "deep"):
                n = 100_000
                junk = "[" * n + "]" * n if MODE == "deep" else "this is not json-rpc"
                sys.stdout.write(junk + "\n")
                sys.stdout.flush()
                continue
            send({"id": msg_id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif MODE == "hang":
            time.sleep(3600)
        elif method == "session/new":
            send({"id": msg_id, "result": {"sessionId": "s1"}})
        elif method == "session/prompt" and MODE == "error":
            send({"id": msg_id, "error": {"code": -32603, "message": "Internal error: boom"}})
        elif method == "session/prompt" and MODE == "slow-tool":
            slow_tool(msg_id, msg["params"]["sessionId"])
        elif method == "session/prompt":
            prompt(msg_id, msg["params"]["sessionId"], cwd)


if __name__ == "__main__":
    main()
