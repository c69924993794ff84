"""The bridge between skillci's built-in loop and its Harbor shim (design 426), without
Harbor: a loopback client speaking the shim's side of the protocol runs each command with
bash in a workspace directory, as ``environment.exec`` does in a container. The loop
(``sim/student``, offline) fixes the task through it — ``run`` and the file tools both go
over the bridge — and hands back a ``SkillciRun`` whose events are the loop's. A client
without the token is ignored; a client that hangs up ends the trial as an infra error."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

from skillci.runners.harbor_builtin import AgentBridge
from skillci.trace.importers.harbor import SkillciRun
from tests.integration.runners.helpers import SKILL, model_agent, specs

TASK_ENV = Path(__file__).resolve().parents[3] / "evals" / "tasks" / "cfg-bool-flag" / "environment"


def _workspace(tmp: Path) -> Path:
    ws = tmp / "app"
    shutil.copytree(TASK_ENV, ws, ignore=shutil.ignore_patterns("Dockerfile"))
    return ws


def _shim(
    address: str, hello: dict[str, Any], *, hang_up_after: int | None = None
) -> dict[str, Any]:
    """The shim's side: answer ``exec`` with bash's result, stop at ``done``."""
    host, port = address.rsplit(":", 1)
    seen: dict[str, Any] = {"execs": 0, "done": None}
    with socket.create_connection((host, int(port))) as conn, conn.makefile("rwb") as f:
        f.write(json.dumps(hello).encode() + b"\n")
        f.flush()
        while line := f.readline():
            msg = json.loads(line)
            if msg["op"] == "done":
                seen["done"] = msg
                f.write(b'{"ok": true}\n')
                f.flush()
                break
            if hang_up_after is not None and seen["execs"] >= hang_up_after:
                break
            seen["execs"] += 1
            proc = subprocess.run(["bash", "-c", msg["command"]], cwd=msg["cwd"],
                                  capture_output=True, text=True, timeout=msg["timeout"],
                                  check=False)  # fmt: skip
            reply = {"stdout": proc.stdout, "stderr": proc.stderr, "return_code": proc.returncode}
            f.write(json.dumps(reply).encode() + b"\n")
            f.flush()
    return seen


def _bridge(tmp: Path) -> AgentBridge:
    from skillci.skill.package import SkillPackage

    (spec,) = specs(["cfg-bool-flag"], model_agent("student"), tmp / ".skillci",
                    pkg=SkillPackage.from_dir(SKILL))  # fmt: skip
    return AgentBridge(spec)


def test_the_loop_works_the_task_through_the_bridge_and_returns_its_record(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    bridge = _bridge(tmp_path)
    # a stranger without the token is ignored; the shim that has it is served
    stranger = _shim(bridge.address, {"token": "nope", "cwd": str(ws)})
    seen = _shim(bridge.address, {"token": bridge.token, "cwd": str(ws), "logs_dir": "x"})
    bridge.close()
    assert stranger == {"execs": 0, "done": None}
    res = bridge.result
    assert res is not None and res.infra_error is None, res and res.warnings
    assert res.stop_reason == "final_answer"
    tools = [e.tool for e in res.events if e.kind == "tool_call"]
    assert "run" in tools and {"read_file", "apply_patch"} & set(tools), tools
    assert "enabled = true" in (ws / "config" / "service.ini").read_text()  # done over the bridge
    assert seen["execs"] >= len(tools) - tools.count("load_skill_file")
    done = seen["done"]
    assert done is not None and set(done["files"]) == {"skillci-run.json"}
    run = SkillciRun.model_validate_json(done["files"]["skillci-run.json"])
    assert run.events == res.events and run.final_output == res.final_output
    assert sum(e.kind == "skill_load" for e in run.events) >= 1
    assert done["context"]["n_input_tokens"] == res.cost.input_tokens > 0


def test_a_shim_that_hangs_up_ends_the_trial_as_an_infra_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    bridge = _bridge(tmp_path)
    seen = _shim(bridge.address, {"token": bridge.token, "cwd": str(ws)}, hang_up_after=1)
    bridge.close()
    assert seen["execs"] == 1 and seen["done"] is None
    res = bridge.result
    assert res is not None and res.stop_reason == "agent_crash"
    assert res.infra_error is not None and "closed the bridge" in res.infra_error


def test_a_bridge_no_agent_connects_to_closes_with_no_result(tmp_path: Path) -> None:
    bridge = _bridge(tmp_path)
    t = threading.Thread(target=bridge.close)
    t.start()
    t.join(timeout=10)
    assert not t.is_alive() and bridge.result is None
