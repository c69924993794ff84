"""OpenCode sessions (``$XDG_DATA_HOME/opencode/opencode.db``) → run records.

OpenCode 1.x keeps its sessions in SQLite: ``session`` (id, ``parent_id`` of a sub-agent's
session, directory, title, ``version`` of OpenCode, totals), ``message`` (one row a message,
``data`` JSON: ``role``; an assistant message has ``modelID``/``providerID``, ``tokens``
``{input, output, reasoning, cache: {read, write}}``, ``cost``, ``time``, ``finish``) and
``part`` (``data`` JSON, ``type``: ``text``, ``reasoning``, ``tool`` with ``callID``, ``tool``
and ``state`` ``{status, input, output|error, metadata, time}``, ``step-start``,
``step-finish``, ``patch``, ...). Only those three tables are read, read-only: the same file
holds the user's accounts and credentials, which an import must never touch.

Each session becomes an ATIF trajectory (:func:`session_to_atif`) and a record through
:mod:`skillci.trace.atif`, as Claude Code sessions and Codex rollouts do (designs 386, 388):
a user message is a user step, an assistant message one agent step (its model, its tokens as
metrics: ``prompt_tokens`` = input + cache read + cache write, ``cached_tokens`` = cache
read, ``completion_tokens`` = output; the raw ``tokens`` in ``metrics.extra``), tool parts its
calls with their results paired by ``callID``. Message fields ATIF has no slot for go to the
step's ``extra.opencode``, parts other than text/reasoning/tool verbatim to
``extra.opencode_parts``, tool state fields to the result's ``extra``; the session row to the
trajectory's ``extra.opencode_session``. A session has no verifier: the state is ``not_run``.
"""

from __future__ import annotations

import json
import sqlite3
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

LAYOUT = "no OpenCode database (opencode.db with session/message/part tables)"
DB_NAME = "opencode.db"
#: Message keys that become ATIF fields (the rest goes to ``extra.opencode``).
_MAPPED = frozenset({"role", "modelID"})
#: Tool state keys that become the call and its result.
_STATE_MAPPED = frozenset({"input", "output"})


def _stamp(ms: Any) -> str | None:
    """OpenCode's epoch milliseconds as an ISO time in UTC."""
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def read_sessions(db: Path) -> list[dict[str, Any]]:
    """Every session in ``db`` as ``{"info": row, "messages": [{"info", "parts"}]}``, oldest
    first; only the session, message and part tables are read."""
    uri = f"{db.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.row_factory = sqlite3.Row
        sessions = [dict(r) for r in conn.execute("SELECT * FROM session ORDER BY time_created")]
        out = []
        for s in sessions:
            messages = []
            for m in conn.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ? "
                "ORDER BY time_created, id",
                (s["id"],),
            ):
                parts = [
                    {"id": p["id"], **_obj(p["data"])}
                    for p in conn.execute(
                        "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (m["id"],)
                    )
                ]
                info = {"id": m["id"], **_obj(m["data"])}
                info.setdefault("time", {"created": m["time_created"]})
                messages.append({"info": info, "parts": parts})
            out.append({"info": s, "messages": messages})
        return out
    finally:
        conn.close()


def _obj(text: Any) -> dict[str, Any]:
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        data = None
    return data if isinstance(data, dict) else {"unparsed": text}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _metrics(tokens: Any) -> dict[str, Any] | None:
    if not isinstance(tokens, dict):
        return None
    cache = _dict(tokens.get("cache"))
    ints = {k: v for k, v in tokens.items() if isinstance(v, int) and not isinstance(v, bool)}
    if "input" not in ints or "output" not in ints:
        return None
    read, write = (v if isinstance(v, int) else 0 for v in (cache.get("read"), cache.get("write")))
    return {
        "prompt_tokens": ints["input"] + read + write,
        "completion_tokens": ints["output"],
        "cached_tokens": read,
        "extra": {"tokens": tokens},
    }


def _tool(step: dict[str, Any], part: dict[str, Any]) -> None:
    state = _dict(part.get("state"))
    call_id = str(part.get("callID") or part.get("id"))
    args = state.get("input")
    step.setdefault("tool_calls", []).append(
        {
            "tool_call_id": call_id,
            "function_name": str(part.get("tool")),
            "arguments": args if isinstance(args, dict) else {"input": args},
        }
    )
    output = state.get("output")
    if output is None and state.get("error") is not None:
        output = state.get("error")
    result: dict[str, Any] = {
        "source_call_id": call_id,
        "content": output if isinstance(output, str) else json.dumps(output, sort_keys=True),
    }
    rest = {k: v for k, v in part.items() if k not in ("type", "tool", "callID", "state")}
    rest["state"] = {k: v for k, v in state.items() if k not in _STATE_MAPPED}
    result["extra"] = {"opencode": rest}
    step.setdefault("observation", {"results": []})["results"].append(result)


def session_to_atif(session: dict[str, Any]) -> dict[str, Any]:
    """One OpenCode session as an ATIF trajectory (messages in time order)."""
    info = session["info"]
    steps: list[dict[str, Any]] = []
    for msg in session["messages"]:
        m, parts = msg["info"], msg["parts"]
        role = m.get("role")
        step: dict[str, Any] = {"step_id": len(steps) + 1}
        step["source"] = "agent" if role == "assistant" else "user" if role == "user" else "system"
        stamp = _stamp((m.get("time") or {}).get("created"))
        if stamp:
            step["timestamp"] = stamp
        if role == "assistant" and m.get("modelID"):
            step["model_name"] = str(m["modelID"])
        texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
        step["message"] = "\n".join(t for t in texts if t)
        thinking = [str(p.get("text", "")) for p in parts if p.get("type") == "reasoning"]
        if any(thinking):
            step["reasoning_content"] = "\n".join(t for t in thinking if t)
        for p in parts:
            if p.get("type") == "tool":
                _tool(step, p)
        metrics = _metrics(m.get("tokens")) if role == "assistant" else None
        if metrics is not None:
            step["metrics"] = metrics
        extra: dict[str, Any] = {"opencode": {k: v for k, v in m.items() if k not in _MAPPED}}
        kept = [p for p in parts if p.get("type") not in ("text", "reasoning", "tool")]
        kept_text = [
            {k: v for k, v in p.items() if k != "text"}
            for p in parts
            if p.get("type") in ("text", "reasoning") and set(p) - {"type", "text"}
        ]
        if kept:
            extra["opencode_parts"] = kept
        if kept_text:
            extra["opencode_text_parts"] = kept_text
        step["extra"] = extra
        steps.append(step)
    models = [s["model_name"] for s in steps if s.get("model_name")]
    agent: dict[str, Any] = {"name": "opencode", "version": str(info.get("version") or "unknown")}
    if models:
        agent["model_name"] = max(set(models), key=models.count)
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": str(info.get("id") or "unknown"),
        "agent": agent,
        "steps": steps,
        "extra": {"opencode_session": info},
    }


def import_session(
    session: dict[str, Any],
    db: Path,
    *,
    role: AgentRole = AgentRole.production,
    skill: SkillRef | None = None,
) -> RunRecord:
    """One session (from :func:`read_sessions`) → a run record."""
    from skillci.trace.importers.harbor import events_from_atif

    traj = session_to_atif(session)
    events, trace, warnings = events_from_atif(traj)
    times = [t for t in (parse_stamp(s.get("timestamp"))[0] for s in traj["steps"]) if t]
    aware = [t if t.tzinfo else t.replace(tzinfo=UTC) for t in times]
    created = max(aware) if aware else datetime.fromtimestamp(db.stat().st_mtime, UTC)
    info = session["info"]
    model = traj["agent"].get("model_name")
    provider = next(
        (m["info"].get("providerID") for m in session["messages"] if m["info"].get("providerID")),
        None,
    )
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    unknown = [] if all("metrics" in s for s in agent_steps) else ["input_tokens", "output_tokens"]
    if unknown:
        warnings.append("an assistant message reports no tokens: input/output tokens unknown")
    return RunRecord(
        run_id=run_id_for("opencode", traj["session_id"]),
        task_id=str(Path(str(info.get("directory") or "session")).name or "session"),
        agent_role=role,
        model=ModelInfo(
            route=f"{provider}/{model}" if provider and model else "opencode", name=model
        ),
        runtime=RuntimeInfo(
            harness="opencode", harness_version=traj["agent"]["version"], skill=skill
        ),
        events=events,
        final_output=next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        evaluation=Evaluation(state=EvalState.not_run, verifier_output="no verifier"),
        cost=Cost(
            input_tokens=None
            if unknown
            else sum(int(s["metrics"]["prompt_tokens"]) for s in agent_steps),
            output_tokens=None
            if unknown
            else sum(int(s["metrics"]["completion_tokens"]) for s in agent_steps),
            model_calls=len(agent_steps),
            tool_calls=sum(1 for e in events if e.kind == "tool_call"),
            wall_time_sec=(max(aware) - min(aware)).total_seconds() if aware else 0.0,
        ),
        created_at=created,
        warnings=warnings,
        atif=AtifTrace.model_validate(trace.model_dump()),
        metadata={
            "importer": "opencode",
            "parent_session": info.get("parent_id"),
            "unknown_counts": unknown,
            "unmapped": {},
        },
    )


def import_jobs(
    root: Path, *, role: AgentRole = AgentRole.production, skill: SkillRef | None = None
) -> list[RunRecord]:
    """Every session of every ``opencode.db`` at or under ``root``."""
    dbs = [root] if root.is_file() else sorted(root.rglob(DB_NAME))
    out = []
    for db in dbs:
        try:
            sessions = read_sessions(db)
        except sqlite3.DatabaseError:  # not an OpenCode database: nothing to import here
            continue
        out += [import_session(s, db, role=role, skill=skill) for s in sessions]
    return out


__all__ = ["LAYOUT", "import_jobs", "import_session", "read_sessions", "session_to_atif"]
