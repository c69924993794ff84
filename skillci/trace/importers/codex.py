"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``) → run records.

Each line is ``{"timestamp", "type", "payload", ...}`` (newer versions add ``ordinal`` and a
line-level ``metadata``). ``type`` is one of:

- ``session_meta`` — the session id, ``cli_version``, ``cwd``, ``model_provider``, git info
  and the base instructions (first line);
- ``turn_context`` — the settings of a turn, among them ``model``: it names the model of the
  agent steps that follow;
- ``response_item`` — the Responses API items of the conversation: ``message`` (roles
  ``user``, ``developer``, ``system``, ``assistant``), ``reasoning`` (``summary``/``content``
  texts; ``encrypted_content`` kept as is), the calls ``function_call`` (``arguments`` is a JSON
  string), ``custom_tool_call`` (``input``), ``local_shell_call`` (``action``) and their
  outputs ``function_call_output`` / ``custom_tool_call_output``, paired by ``call_id``;
- ``event_msg`` — UI events; ``token_count`` carries ``info.last_token_usage`` (the usage of
  the latest model response, ``info`` is null when the provider reported none);
- anything else (``compacted``, ``world_state``, ``token_usage_record`` in 0.17x, ...).

The rollout becomes an ATIF trajectory first (:func:`rollout_to_atif`), then a record through
:mod:`skillci.trace.atif`, as Claude Code sessions do (design 386, 388). Consecutive model
output items (reasoning, assistant message, calls) form one agent step; outputs join the step
of their call. Line and payload keys ATIF has no slot for go to the step's ``extra.codex``;
lines that are not conversation items go, verbatim, to the trajectory's
``extra.codex_entries``; nothing is dropped. Token counts: ``prompt_tokens`` = ``input_tokens``
(OpenAI's count includes cached input), ``cached_tokens`` = ``cached_input_tokens``,
``completion_tokens`` = ``output_tokens`` (reasoning included); an agent step no usage was
reported for has no metrics, and the record's totals are then null: unknown (design 389).
A rollout has no verifier: the state is ``not_run``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillci.trace.atif import AtifTrace, parse_stamp
from skillci.trace.importers.claude_code import read_session
from skillci.trace.importers.common import run_id_for
from skillci.trace.models import (
    AgentRole,
    Cost,
    EvalState,
    Evaluation,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
)

LAYOUT = "no Codex rollout (rollout-*.jsonl whose first line is a session_meta)"
#: Response items that are the model's output (one agent step per run of them).
_AGENT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
#: Payload keys that become ATIF fields, per item type (the rest goes to ``extra.codex``).
_MAPPED: dict[str, frozenset[str]] = {
    "message": frozenset({"type", "role", "content"}),
    "reasoning": frozenset({"type", "summary", "content"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "custom_tool_call": frozenset({"type", "call_id", "name", "input"}),
    "local_shell_call": frozenset({"type", "call_id", "action"}),
    "function_call_output": frozenset({"type", "call_id", "output"}),
    "custom_tool_call_output": frozenset({"type", "call_id", "output"}),
}
#: Usage keys → ATIF metric names.
_USAGE = {
    "input_tokens": "prompt_tokens",
    "output_tokens": "completion_tokens",
    "cached_input_tokens": "cached_tokens",
}


def is_rollout(entries: list[dict[str, Any]]) -> bool:
    """A Codex rollout: wrapped lines, one of them the ``session_meta``."""
    return any(
        e.get("type") == "session_meta" and isinstance(e.get("payload"), dict) for e in entries
    )


def _text(content: Any) -> str:
    """The text of a message's content items (``input_text``/``output_text``/``text``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, sort_keys=True)
    return "\n".join(
        str(c.get("text", ""))
        for c in content
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    )


def _arguments(item: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as an object (a string that is not a JSON object is ``{"input": s}``)."""
    kind = item.get("type")
    raw = (
        item.get("action")
        if kind == "local_shell_call"
        else item.get("arguments" if kind == "function_call" else "input")
    )
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {"input": raw}
    return raw if isinstance(raw, dict) else {"input": raw}


def _extra(line: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """What of a line ATIF has no slot for: line keys and unmapped payload keys."""
    mapped = _MAPPED.get(str(payload.get("type")), frozenset({"type"}))
    out = {f"line.{k}": v for k, v in line.items() if k not in ("timestamp", "type", "payload")}
    out.update({k: v for k, v in payload.items() if k not in mapped})
    return out


def _metrics(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    ints = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    out: dict[str, Any] = {_USAGE[k]: ints[k] for k in _USAGE if k in ints}
    if not out:
        return None
    out["extra"] = {"usage": usage}
    return out


def _usage(line: dict[str, Any]) -> Any:
    """The usage of the latest model response a line reports, else None."""
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return None
    if line.get("type") == "event_msg" and payload.get("type") == "token_count":
        info = payload.get("info")
        return info.get("last_token_usage") if isinstance(info, dict) else None
    if line.get("type") == "token_usage_record":
        return payload.get("usage")
    return None


def _ends_response(line: dict[str, Any]) -> bool:
    """A usage report: the model response before it is complete (null usage too)."""
    payload = line.get("payload")
    kind = payload.get("type") if isinstance(payload, dict) else None
    return line.get("type") == "token_usage_record" or (
        line.get("type") == "event_msg" and kind == "token_count"
    )


def _step_extra(line: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    rest = _extra(line, payload)
    return {"codex": rest} if rest else {}


def _result(line: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """An output item as an ATIF observation result (without its ``source_call_id``)."""
    output = payload.get("output")
    result: dict[str, Any] = {
        "content": output
        if isinstance(output, str)
        else _text(output.get("content") if isinstance(output, dict) else output)
    }
    rest = {"timestamp": line.get("timestamp"), **_extra(line, payload)}
    if not isinstance(output, str):  # structured: its text is the content
        rest["output"] = output
    result["extra"] = {"codex": rest}
    return result


def _add_item(step: dict[str, Any], line: dict[str, Any], payload: dict[str, Any]) -> str | None:
    """Add one model output item to its agent step; the call id when it is a call."""
    item = payload.get("type")
    step["extra"]["codex_items"].append(
        {"timestamp": line.get("timestamp"), **_extra(line, payload)}
    )
    if item == "message":
        step["message"] = "\n".join(
            x for x in (step["message"], _text(payload.get("content"))) if x
        )
    elif item == "reasoning":
        texts = [_text(payload.get("summary")), _text(payload.get("content"))]
        prev = step.get("reasoning_content")
        step["reasoning_content"] = "\n".join(x for x in (prev, *texts) if x)
    elif item in _CALLS:
        call_id = str(payload.get("call_id") or payload.get("id"))
        name = payload.get("name") or ("local_shell" if item == "local_shell_call" else item)
        step.setdefault("tool_calls", []).append(
            {"tool_call_id": call_id, "function_name": str(name), "arguments": _arguments(payload)}
        )
        return call_id
    return None


def rollout_to_atif(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """A Codex rollout as an ATIF trajectory (steps in the order they were written)."""
    steps: list[dict[str, Any]] = []
    owner: dict[str, dict[str, Any]] = {}
    other: list[dict[str, Any]] = []
    meta: dict[str, Any] = {}
    model: str | None = None
    open_step: dict[str, Any] | None = None  # the agent step model output items join

    def new(source: str, line: dict[str, Any], message: str) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": source}
        if isinstance(line.get("timestamp"), str):
            step["timestamp"] = line["timestamp"]
        if source == "agent" and model:
            step["model_name"] = model
        step["message"] = message
        steps.append(step)
        return step

    for line in entries:
        kind = line.get("type")
        payload = line.get("payload") if isinstance(line.get("payload"), dict) else None
        if payload is None or kind != "response_item":
            if kind == "session_meta" and payload is not None and not meta:
                meta = payload
            if kind == "turn_context" and payload is not None and payload.get("model"):
                model = str(payload["model"])
            if _ends_response(line):  # the usage of the response that just ended
                usage = _metrics(_usage(line))
                last = next((s for s in reversed(steps) if s["source"] == "agent"), None)
                if usage is not None and last is not None and "metrics" not in last:
                    last["metrics"] = usage
                open_step = None
            other.append(line)
            continue
        item = str(payload.get("type"))
        role = payload.get("role")
        if item in _OUTPUTS:
            open_step = None
            call_id = str(payload.get("call_id"))
            result = _result(line, payload)
            target = owner.get(call_id)
            if target is None:  # an output whose call is not in this file
                new("system", line, "")["observation"] = {"results": [result]}
                continue
            target.setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": call_id, **result}
            )
            continue
        if item == "message" and role != "assistant":
            open_step = None
            step = new("user" if role == "user" else "system", line, _text(payload.get("content")))
            step["extra"] = {"role": role, **_step_extra(line, payload)}
            continue
        if item not in _AGENT_ITEMS and item != "message":  # an item type not known here
            open_step = None
            other.append(line)
            continue
        if open_step is None:
            open_step = new("agent", line, "")
            open_step["extra"] = {"codex_items": []}
        new_call = _add_item(open_step, line, payload)
        if new_call is not None:
            owner[new_call] = open_step
    models = [s["model_name"] for s in steps if s.get("model_name")]
    unknown: dict[str, int] = {}
    for e in other:
        if e.get("type") == "response_item":
            name = f"response_item:{(e.get('payload') or {}).get('type')}"
            unknown[name] = unknown.get(name, 0) + 1
    agent: dict[str, Any] = {"name": "codex", "version": str(meta.get("cli_version") or "unknown")}
    if models:
        agent["model_name"] = max(set(models), key=models.count)
    traj: dict[str, Any] = {
        "schema_version": "ATIF-v1.6",
        "session_id": str(meta.get("id") or meta.get("session_id") or "unknown"),
        "agent": agent,
        "steps": steps,
    }
    if other:
        traj["extra"] = {"codex_entries": other}
    if unknown:
        traj.setdefault("extra", {})["codex_unknown_items"] = dict(sorted(unknown.items()))
    return traj


def import_rollout(
    path: Path, *, role: AgentRole = AgentRole.production, skill: SkillRef | None = None
) -> RunRecord:
    """One rollout file → a run record (bad lines are warnings)."""
    from skillci.trace.importers.harbor import events_from_atif

    entries, warnings = read_session(path)
    traj = rollout_to_atif(entries)
    events, trace, more = events_from_atif(traj)
    warnings += more
    times = [t for t in (parse_stamp(s.get("timestamp"))[0] for s in traj["steps"]) if t]
    aware = [t if t.tzinfo else t.replace(tzinfo=UTC) for t in times]
    created = max(aware) if aware else datetime.fromtimestamp(path.stat().st_mtime, UTC)
    model = traj["agent"].get("model_name")
    meta: dict[str, Any] = next(
        (e["payload"] for e in entries if e.get("type") == "session_meta"), {}
    )
    provider = str(meta.get("model_provider") or "openai")
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    metrics = [s.get("metrics") for s in agent_steps]
    unknown = [
        name
        for name, key in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"))
        if any(m is None or key not in m for m in metrics)
    ]
    if unknown:
        warnings.append(
            f"{sum(1 for m in metrics if m is None)} of {len(metrics)} model call(s) report no "
            f"token usage: {', '.join(unknown)} unknown"
        )
    return RunRecord(
        run_id=run_id_for("codex", traj["session_id"]),
        task_id=str(Path(str(meta.get("cwd") or "session")).name or "session"),
        agent_role=role,
        model=ModelInfo(route=f"{provider}/{model}" if model else "codex", name=model),
        runtime=RuntimeInfo(harness="codex", harness_version=traj["agent"]["version"], skill=skill),
        events=events,
        final_output=next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        evaluation=Evaluation(state=EvalState.not_run, verifier_output="no verifier"),
        cost=Cost(
            input_tokens=None
            if "input_tokens" in unknown
            else sum(int((m or {})["prompt_tokens"]) for m in metrics),
            output_tokens=None
            if "output_tokens" in unknown
            else sum(int((m or {})["completion_tokens"]) for m in metrics),
            model_calls=len(agent_steps),
            tool_calls=sum(1 for e in events if e.kind == "tool_call"),
            wall_time_sec=(max(aware) - min(aware)).total_seconds() if aware else 0.0,
        ),
        created_at=created,
        warnings=warnings,
        atif=AtifTrace.model_validate(trace.model_dump()),
        metadata={
            "importer": "codex",
            "entries": len(entries),
            "other_entries": len((traj.get("extra") or {}).get("codex_entries") or []),
            "unknown_counts": unknown,
            # item types this importer does not know: kept verbatim in extra.codex_entries
            "unmapped": (traj.get("extra") or {}).get("codex_unknown_items") or {},
        },
    )


def import_jobs(
    root: Path, *, role: AgentRole = AgentRole.production, skill: SkillRef | None = None
) -> list[RunRecord]:
    """Every rollout under ``root`` (a rollout file, or ``$CODEX_HOME/sessions`` or below)."""
    files = [root] if root.is_file() else sorted(root.rglob("*.jsonl"))
    out = []
    for f in files:
        entries, _ = read_session(f)
        if is_rollout(entries):
            out.append(import_rollout(f, role=role, skill=skill))
    return out


__all__ = ["LAYOUT", "import_jobs", "import_rollout", "is_rollout", "rollout_to_atif"]
