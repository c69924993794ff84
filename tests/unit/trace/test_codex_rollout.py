"""Codex rollouts → run records through ATIF (design 388).

The fixture is a rollout the real Codex CLI 0.171.0 wrote in
tests/integration/agents/test_native_logs.py (long strings cut to 400 characters); the
variants below add what that run did not produce: null usage, reasoning, custom tool calls,
an item type Codex may add later, a broken line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillci.trace.atif import to_atif
from skillci.trace.importers.claude_code import read_session
from skillci.trace.importers.codex import import_jobs, import_rollout, rollout_to_atif

FIXTURE = next(
    (Path(__file__).resolve().parents[2] / "fixtures" / "agent-logs" / "codex").glob(
        "rollout-*.jsonl"
    )
)
SID = "01a23db0-4143-7121-9768-5f97e3e55d32"


def lines() -> list[dict[str, Any]]:
    return [json.loads(x) for x in FIXTURE.read_text().splitlines()]


def write(path: Path, entries: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + tail)
    return path


def test_a_real_rollout_keeps_ids_times_models_and_tokens() -> None:
    rec = import_rollout(FIXTURE)
    assert rec.run_id == f"codex-{SID}"
    assert (rec.runtime.harness, rec.runtime.harness_version) == ("codex", "0.171.0")
    assert (rec.model.name, rec.model.route) == ("scripted", "skillci/scripted")
    calls = {e.call_id: e for e in rec.events if e.kind == "tool_call"}
    results = {e.call_id: e for e in rec.events if e.kind == "tool_result"}
    assert set(calls) == set(results) == {f"call_{i}_0" for i in range(1, 5)}
    assert calls["call_1_0"].arguments == {"cmd": "cat .agents/skills/repo-debugger/SKILL.md"}
    assert "config/service.ini: ok" in results["call_4_0"].output
    # 5 model responses of 100 in / 50 out each (the fake's usage), reported per response
    assert (rec.cost.model_calls, rec.cost.input_tokens, rec.cost.output_tokens) == (5, 500, 250)
    assert rec.cost.tool_calls == 4 and rec.metadata["unknown_counts"] == []
    assert rec.final_output is not None and rec.final_output.startswith("Fixed config/service.ini")
    assert rec.created_at.isoformat() == "2026-12-03T20:54:51.860000+00:00"
    assert [e.t for e in rec.events if e.kind == "tool_call"] == [0.191, 0.315, 0.43, 0.578]
    traj = to_atif(rec)
    assert traj == rollout_to_atif(lines())  # export gives back the converted rollout
    agent = [s for s in traj["steps"] if s["source"] == "agent"]
    assert {s["model_name"] for s in agent} == {"scripted"}
    assert all(s["timestamp"].endswith("Z") for s in traj["steps"])
    assert agent[0]["metrics"]["extra"]["usage"]["total_tokens"] == 150
    out = agent[0]["observation"]["results"][0]
    assert out["extra"]["codex"]["id"].startswith("fco_")  # the item id, next to the call id
    assert out["extra"]["codex"]["timestamp"] == "2026-12-03T20:54:51.306Z"


def test_nothing_is_dropped_every_line_is_a_step_or_kept_verbatim() -> None:
    entries = lines()
    traj = rollout_to_atif(entries)
    kept = traj["extra"]["codex_entries"]
    items = [e for e in entries if e["type"] == "response_item"]
    assert len(kept) + len(items) == len(entries) and all(e in entries for e in kept)
    in_steps = sum(len(s["extra"].get("codex_items", [])) or 1 for s in traj["steps"])
    outputs = sum(1 for e in items if e["payload"]["type"] == "function_call_output")
    assert in_steps + outputs == len(items)
    assert {e["type"] for e in kept} >= {"session_meta", "turn_context", "event_msg"}
    first = next(s for s in traj["steps"] if s["source"] == "agent")
    assert first["extra"]["codex_items"][0]["line.ordinal"] == 9  # line keys too


def test_unknown_usage_items_and_bad_lines_are_named(tmp_path: Path) -> None:
    entries = lines()
    for e in entries:  # the provider reported no usage for any response
        if e["type"] == "token_usage_record" or e["payload"].get("type") == "token_count":
            e["payload"] = {"type": e["payload"].get("type"), "info": None}
    ts = "2026-12-03T20:54:51.870Z"
    more = [
        {"timestamp": ts, "type": "response_item", "payload": {"type": "reasoning", "id": "rs_1",
         "summary": [{"type": "summary_text", "text": "Patch it."}], "encrypted_content": "gAAA"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "custom_tool_call",
         "call_id": "call_p", "name": "apply_patch", "input": "*** Begin Patch"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "custom_tool_call_output",
         "call_id": "call_p", "output": {"content": "Done", "success": True}}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "ghost_snapshot", "x": 1}},
        {"timestamp": ts, "type": "compacted", "payload": {"message": "summary"}},
    ]  # fmt: skip
    rec = import_rollout(write(tmp_path / "r.jsonl", entries + more, "{broken\n"))
    assert rec.metadata["unknown_counts"] == ["input_tokens", "output_tokens"]
    assert (rec.cost.input_tokens, rec.cost.output_tokens, rec.cost.tokens) == (None,) * 3
    assert rec.cost.model_calls == 6  # the calls are known; their tokens are not (design 389)
    assert any("6 of 6 model call(s) report no token usage" in w for w in rec.warnings)
    assert any("r.jsonl:40: not JSON" in w for w in rec.warnings)
    assert rec.metadata["unmapped"] == {"response_item:ghost_snapshot": 1}
    traj = to_atif(rec)
    last = [s for s in traj["steps"] if s["source"] == "agent"][-1]
    assert last["reasoning_content"] == "Patch it."
    assert last["tool_calls"] == [{"tool_call_id": "call_p", "function_name": "apply_patch",
                                   "arguments": {"input": "*** Begin Patch"}}]  # fmt: skip
    [res] = last["observation"]["results"]
    assert res["content"] == "Done" and res["extra"]["codex"]["output"]["success"] is True
    assert last["extra"]["codex_items"][0]["encrypted_content"] == "gAAA"
    assert "metrics" not in last
    assert {"type": "compacted", "payload": {"message": "summary"}, "timestamp": ts} in traj[
        "extra"
    ]["codex_entries"]


def test_a_sessions_tree_is_searched_and_other_jsonl_is_ignored(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "03"
    day.mkdir(parents=True)
    write(day / FIXTURE.name, lines())
    write(day / "history.jsonl", [{"session_id": SID, "ts": 1, "text": "fix"}])
    assert [r.run_id for r in import_jobs(tmp_path / "sessions")] == [f"codex-{SID}"]
    assert read_session(day / "history.jsonl")[1] == []
