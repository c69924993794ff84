"""Claude Code session logs (``~/.claude/projects/<project>/<session id>.jsonl``) → run records.

Each line of a session is one entry: ``user`` (a prompt, or ``tool_result`` blocks answering
calls), ``assistant`` (one content block per line in recent versions — ``thinking``,
``text``, ``tool_use`` — grouped here by ``message.id``), and bookkeeping (``summary``,
``system``, ``file-history-snapshot``, ...). Every entry carries ``timestamp`` (UTC, ``Z``),
``sessionId``, ``version`` (of Claude Code), ``uuid``/``parentUuid`` and ``isSidechain`` (a
sub-agent's turn).

The session becomes an ATIF trajectory first (:func:`session_to_atif`), then a record
through :mod:`skillci.trace.atif`, so a session has the fidelity of a Harbor trajectory: step
times, per-step model and token metrics (``prompt_tokens`` = input + cache read + cache
creation; ``cached_tokens`` = cache read), tool calls paired with their results by
``tool_use`` id, sub-agent turns in their place in time with ``extra.is_sidechain: true``.
Entry fields ATIF has no slot for are kept in the step's ``extra.claude_code``; lines that
are not turns are kept in the trajectory's ``extra.claude_code_entries``; nothing is dropped.
A session has no verifier: the state is ``not_run``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillci.trace.atif import AtifTrace, parse_stamp
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

LAYOUT = "no Claude Code session (*.jsonl with sessionId/type user|assistant lines)"
#: Entry keys that become ATIF fields (the rest goes to ``extra.claude_code``).
_MAPPED = frozenset({"type", "message", "timestamp", "isSidechain", "sessionId", "version"})


def read_session(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(entries, warnings): one JSON object a line; bad lines are named, not fatal."""
    entries: list[dict[str, Any]] = []
    warnings: list[str] = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            warnings.append(f"{path.name}:{n}: not JSON ({exc}); line skipped")
            continue
        if isinstance(data, dict):
            entries.append(data)
        else:
            warnings.append(f"{path.name}:{n}: not a JSON object; line skipped")
    return entries, warnings


def _extra(entry: dict[str, Any], message: dict[str, Any], *keys: str) -> dict[str, Any]:
    out: dict[str, Any] = {"is_sidechain": bool(entry.get("isSidechain"))}
    rest = {k: v for k, v in entry.items() if k not in _MAPPED}
    for k in keys:
        if message.get(k) is not None:
            rest[f"message.{k}"] = message[k]
    if rest:
        out["claude_code"] = rest
    return out


def _metrics(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    ints = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    if "input_tokens" not in ints and "output_tokens" not in ints:
        return None
    cache_read = ints.get("cache_read_input_tokens", 0)
    prompt = ints.get("input_tokens", 0) + cache_read + ints.get("cache_creation_input_tokens", 0)
    out: dict[str, Any] = {"prompt_tokens": prompt, "cached_tokens": cache_read}
    if "output_tokens" in ints:
        out["completion_tokens"] = ints["output_tokens"]
    out["extra"] = {"usage": usage}
    return out


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content, sort_keys=True)


def session_to_atif(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """A Claude Code session as an ATIF trajectory (steps in the order they were written)."""
    steps: list[dict[str, Any]] = []
    owner: dict[str, dict[str, Any]] = {}
    by_message: dict[str, dict[str, Any]] = {}
    other: list[dict[str, Any]] = []

    def new(source: str, entry: dict[str, Any], message: str, extra: dict[str, Any]) -> Any:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": source}
        if isinstance(entry.get("timestamp"), str):
            step["timestamp"] = entry["timestamp"]
        step["message"] = message
        step["extra"] = extra
        steps.append(step)
        return step

    for entry in entries:
        kind = entry.get("type")
        message = entry.get("message") if isinstance(entry.get("message"), dict) else None
        if kind not in ("user", "assistant") or message is None:
            other.append(entry)
            continue
        content = message.get("content")
        if kind == "user":
            blocks = content if isinstance(content, list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if not results:
                new("user", entry, _content_text(content), _extra(entry, message))
                continue
            for b in results:
                call_id = str(b.get("tool_use_id"))
                target = owner.get(call_id)
                result: dict[str, Any] = {"content": _content_text(b.get("content"))}
                if b.get("is_error"):
                    result["extra"] = {"is_error": True}
                if target is None:  # a result whose call is not in this file
                    new("system", entry, "", _extra(entry, message))["observation"] = {
                        "results": [result]
                    }
                    continue
                result = {"source_call_id": call_id, **result}
                target.setdefault("observation", {"results": []})["results"].append(result)
            others = [b for b in blocks if b not in results]
            if others:
                other.append({**entry, "message": {**message, "content": others}})
            continue
        mid = str(message.get("id") or entry.get("uuid") or len(steps))
        step = by_message.get(mid)
        if step is None:
            step = new("agent", entry, "", _extra(entry, message, "id", "stop_reason"))
            if message.get("model"):
                step["model_name"] = message["model"]
            by_message[mid] = step
        metrics = _metrics(message.get("usage"))
        if metrics is not None:
            step["metrics"] = metrics
        for b in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and b.get("text"):
                step["message"] = "\n".join(x for x in (step["message"], str(b["text"])) if x)
            elif b.get("type") == "thinking" and b.get("thinking"):
                prev = step.get("reasoning_content")
                step["reasoning_content"] = "\n".join(x for x in (prev, str(b["thinking"])) if x)
            elif b.get("type") == "tool_use":
                call_id = str(b.get("id"))
                args = (
                    b.get("input")
                    if isinstance(b.get("input"), dict)
                    else {"input": b.get("input")}
                )
                step.setdefault("tool_calls", []).append(
                    {
                        "tool_call_id": call_id,
                        "function_name": str(b.get("name")),
                        "arguments": args,
                    }
                )
                owner[call_id] = step
    first = next((e for e in entries if e.get("sessionId")), {})
    models = [s["model_name"] for s in steps if s.get("model_name")]
    agent: dict[str, Any] = {
        "name": "claude-code",
        "version": str(first.get("version") or "unknown"),
    }
    if models:
        agent["model_name"] = max(set(models), key=models.count)
    traj: dict[str, Any] = {
        "schema_version": "ATIF-v1.6",
        "session_id": str(first.get("sessionId") or "unknown"),
        "agent": agent,
        "steps": steps,
    }
    if other:
        traj["extra"] = {"claude_code_entries": other}
    return traj


def import_session(
    path: Path, *, role: AgentRole = AgentRole.production, skill: SkillRef | None = None
) -> RunRecord:
    """One session file → a run record (bad lines are warnings)."""
    from skillci.trace.importers.harbor import events_from_atif

    entries, warnings = read_session(path)
    traj = session_to_atif(entries)
    events, trace, more = events_from_atif(traj)
    warnings += more
    times = [t for t in (parse_stamp(s.get("timestamp"))[0] for s in traj["steps"]) if t]
    aware = [t if t.tzinfo else t.replace(tzinfo=UTC) for t in times]
    created = max(aware) if aware else datetime.fromtimestamp(path.stat().st_mtime, UTC)
    model = traj["agent"].get("model_name")
    tokens = [s.get("metrics") or {} for s in traj["steps"] if s["source"] == "agent"]
    unknown = [  # a turn without usage: the total is unknown (null), not a smaller number
        name
        for name, key in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"))
        if any(key not in m for m in tokens)
    ]
    sidechain = sum(1 for s in traj["steps"] if s["extra"].get("is_sidechain"))
    return RunRecord(
        run_id=run_id_for("claude-code", traj["session_id"]),
        task_id=str(path.parent.name or "session"),
        agent_role=role,
        model=ModelInfo(route=f"anthropic/{model}" if model else "claude-code", name=model),
        runtime=RuntimeInfo(
            harness="claude-code", harness_version=traj["agent"]["version"], skill=skill
        ),
        events=events,
        final_output=next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        evaluation=Evaluation(state=EvalState.not_run, verifier_output="no verifier"),
        cost=Cost(
            input_tokens=None
            if "input_tokens" in unknown
            else sum(int(m["prompt_tokens"]) for m in tokens),
            output_tokens=None
            if "output_tokens" in unknown
            else sum(int(m["completion_tokens"]) for m in tokens),
            model_calls=sum(1 for s in traj["steps"] if s["source"] == "agent"),
            tool_calls=sum(1 for e in events if e.kind == "tool_call"),
            wall_time_sec=(max(aware) - min(aware)).total_seconds() if aware else 0.0,
        ),
        created_at=created,
        warnings=warnings,
        atif=AtifTrace.model_validate(trace.model_dump()),
        metadata={
            "importer": "claude-code",
            "sidechain_steps": sidechain,
            "unknown_counts": unknown,
            "entries": len(entries),
            "other_entries": len((traj.get("extra") or {}).get("claude_code_entries") or []),
            "unmapped": {},
        },
    )


def import_jobs(
    root: Path, *, role: AgentRole = AgentRole.production, skill: SkillRef | None = None
) -> list[RunRecord]:
    """Every session under ``root`` (a session file, or a project dir of them)."""
    files = [root] if root.is_file() else sorted(root.rglob("*.jsonl"))
    out = []
    for f in files:
        entries, _ = read_session(f)
        if any(e.get("sessionId") and e.get("type") in ("user", "assistant") for e in entries):
            out.append(import_session(f, role=role, skill=skill))
    return out


__all__ = ["LAYOUT", "import_jobs", "import_session", "read_session", "session_to_atif"]
