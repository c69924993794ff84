"""ATIF (Harbor's Agent Trajectory Interchange Format) in and out of a :class:`RunRecord`.

Import splits each ATIF step in two: what skillci's events carry (the message text, the
reasoning, each tool call's id, name and arguments, each observation result paired with its
call by ``source_call_id``) becomes events; everything else of the step (``step_id``,
``timestamp``, ``source``, ``model_name``, ``metrics``, ``extra`` with ``is_sidechain``,
``reasoning_effort``, ``is_copied_context``, ...) is kept verbatim in :class:`AtifStep.rest`,
together with any content field the events cannot rebuild exactly (multimodal content parts,
outputs cut at the event cap, results without a call id, per-call ``extra``). The root fields
(``schema_version``, ``session_id``, ``agent``, ``notes``, ``final_metrics``, ``extra``, ...)
are kept verbatim in :attr:`AtifTrace.root`.

Export (:func:`to_atif`) rebuilds every step from the events and lays ``rest`` over it, so
import → export gives the original trajectory back, field for field (checked on every
trajectory of the corpora by the tests and ``benchmarks/import_fields.py``). A record with no
ATIF origin (skillci's own trials) is exported by grouping its events into steps.

Pure: no I/O. See docs/design/385-atif-interchange.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: The ATIF version skillci writes when a record did not come from an ATIF file.
EXPORT_VERSION = "ATIF-v1.6"
#: Prefix of the assistant message that holds an ATIF step's ``reasoning_content``.
THINKING = "(thinking) "
#: Longest tool output an event holds (longer ones keep their full text in ``rest``).
OUTPUT_CAP = 12_000

PartKind = Literal["message", "reasoning", "tool_call", "tool_result", "skill_load"]


class AtifStep(BaseModel):
    """One ATIF step: which events hold its content, and the fields they do not carry."""

    model_config = ConfigDict(extra="forbid")

    first_event: int = Field(ge=0, description="Index in RunRecord.events of its first event.")
    parts: list[PartKind] = Field(
        default_factory=list, description="What each of its events (in order) holds."
    )
    rest: dict[str, Any] = Field(
        default_factory=dict,
        description="Step fields kept verbatim (timestamp, model_name, metrics, extra, ...).",
    )
    omit: list[str] = Field(
        default_factory=list, description="Fields the events would add that the step lacked."
    )


class AtifTrace(BaseModel):
    """What an ATIF trajectory held beyond the events (saved on ``RunRecord.atif``)."""

    model_config = ConfigDict(extra="forbid")

    root: dict[str, Any] = Field(
        description="Root fields but steps, verbatim (schema_version, session_id, agent, ...)."
    )
    steps: list[AtifStep] = Field(default_factory=list, description="One per ATIF step.")


def text_of(value: Any) -> str:
    """Plain text of an ATIF message/content (a string or a list of content parts)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in value
        ).strip()
    return json.dumps(value, sort_keys=True, default=str)


def parse_stamp(value: object) -> tuple[datetime | None, bool]:
    """(time, had a zone) of an ISO 8601 timestamp; naive ones are returned naive."""
    if not isinstance(value, str) or not value.strip():
        return None, False
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None, False
    return dt, dt.tzinfo is not None


def naive_offset(
    naive: list[datetime], start: datetime | None, end: datetime | None
) -> tuple[timedelta | None, str]:
    """The UTC offset of a writer's naive timestamps, judged from the aware window they belong
    in (the trial's agent run). UTC when they fall in it as they are; else the quarter-hour
    offset that puts the first one in it; None (zone unknown) when none does."""
    if not naive or start is None:
        return None, "no aware time to compare with"
    slack = timedelta(minutes=2)
    stop = (end or start) + slack
    first = naive[0].replace(tzinfo=UTC)
    if start - slack <= first <= stop:
        return timedelta(0), "UTC (falls inside the trial's aware times)"
    quarter = timedelta(minutes=15)
    offset = round((first - start) / quarter) * quarter
    if abs(offset) <= timedelta(hours=14) and start - slack <= first - offset <= stop:
        hours = offset.total_seconds() / 3600
        return offset, f"UTC{hours:+g}h (inferred from the trial's aware start time)"
    return None, "no UTC offset puts it inside the trial's aware times"


def events_from_atif(
    traj: dict[str, Any],
    *,
    start: datetime | None = None,
    window: tuple[datetime | None, datetime | None] = (None, None),
) -> tuple[list[dict[str, Any]], AtifTrace, list[str]]:
    """(event dicts, the rest of the trajectory, warnings) of an ATIF trajectory.

    Event dicts are RunRecord event fields (``kind`` …, ``step`` numbered later by position);
    ``t`` is seconds since ``start`` (the trial's start; else the first step's time).
    Naive step timestamps are placed with :func:`naive_offset` in ``window`` (the aware times of
    the agent's run): Harbor's own agents write UTC, some write the container's local time
    without a zone."""
    events: list[dict[str, Any]] = []
    steps_meta: list[AtifStep] = []
    warnings: list[str] = []
    raw_steps = [s for s in traj.get("steps") or [] if isinstance(s, dict)]
    if len(raw_steps) != len(traj.get("steps") or []):
        warnings.append("trajectory.json: steps that are not objects were skipped")
    stamps = [parse_stamp(s.get("timestamp")) for s in raw_steps]
    naive = [dt for dt, aware in stamps if dt is not None and not aware]
    offset = timedelta(0)
    if naive:
        found, why = naive_offset(naive, *window)
        if found is None:
            warnings.append(f"trajectory.json: naive step timestamps read as UTC: {why}")
        else:
            offset = found
            warnings.append(f"trajectory.json: naive step timestamps read as {why}")
    times: list[datetime | None] = [
        None if dt is None else (dt if aware else dt.replace(tzinfo=UTC) - offset)
        for dt, aware in stamps
    ]
    origin = start or next((t for t in times if t is not None), None)

    for step, when in zip(raw_steps, times, strict=True):
        t = None
        if when is not None and origin is not None:
            t = max(0.0, round((when - origin).total_seconds(), 3))
        meta = AtifStep(first_event=len(events))
        source = step.get("source")

        def add(part: PartKind, meta: AtifStep = meta, t: float | None = t, **f: Any) -> None:
            meta.parts.append(part)
            events.append({"t": t, **f})

        text = text_of(step.get("message"))
        if source in ("system", "user"):
            add("message", kind="message", role=source, content=text)
        else:
            metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
            assert isinstance(metrics, dict)
            if step.get("reasoning_content"):
                reasoning = THINKING + str(step["reasoning_content"])
                add("reasoning", kind="message", role="assistant", content=reasoning)
            if text or not step.get("tool_calls"):
                tin, tout = metrics.get("prompt_tokens"), metrics.get("completion_tokens")
                add(
                    "message",
                    kind="message",
                    role="assistant",
                    content=text,
                    input_tokens=tin if isinstance(tin, int) and tin >= 0 else None,
                    output_tokens=tout if isinstance(tout, int) and tout >= 0 else None,
                )
            results: dict[str, str] = {}
            obs = step.get("observation")
            if isinstance(obs, dict):
                for r in obs.get("results") or []:
                    if isinstance(r, dict) and r.get("source_call_id"):
                        results.setdefault(str(r["source_call_id"]), text_of(r.get("content")))
            for i, call in enumerate(step.get("tool_calls") or []):
                if not isinstance(call, dict):
                    continue
                call_id = str(call.get("tool_call_id") or f"atif-{step.get('step_id')}-{i}")
                name = str(call.get("function_name") or "tool")
                args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
                add("tool_call", kind="tool_call", tool=name, arguments=args, call_id=call_id)
                if call_id in results:
                    body = results.pop(call_id)
                    add(
                        "tool_result",
                        kind="tool_result",
                        call_id=call_id,
                        tool=name,
                        output=body[:OUTPUT_CAP],
                        truncated=len(body) > OUTPUT_CAP,
                    )
                if name.lower() in SKILL_TOOLS:
                    assert isinstance(args, dict)
                    target = args.get("name") or args.get("skill") or args.get("path") or name
                    add("skill_load", kind="skill_load", path=str(target)[:500], on_demand=True)
        rebuilt = _rebuild(source, [events[meta.first_event + j] for j in range(len(meta.parts))],
                           meta.parts)  # fmt: skip
        meta.rest = {k: v for k, v in step.items() if k not in rebuilt or rebuilt[k] != v}
        meta.omit = [k for k in rebuilt if k not in step]
        steps_meta.append(meta)
    root = {k: v for k, v in traj.items() if k != "steps"}
    return events, AtifTrace(root=root, steps=steps_meta), warnings


#: Tool names whose call loads a skill (an extra ``skill_load`` event follows the call).
SKILL_TOOLS = frozenset({"skill", "load_skill", "invoke_skill", "activate_skill"})


def _rebuild(source: Any, evs: list[dict[str, Any]], parts: list[PartKind]) -> dict[str, Any]:
    """The step fields the events of one step carry."""
    out: dict[str, Any] = {"message": ""}
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for ev, part in zip(evs, parts, strict=True):
        if part == "message":
            out["message"] = ev["content"]
        elif part == "reasoning":
            out["reasoning_content"] = str(ev["content"])[len(THINKING) :]
        elif part == "tool_call":
            calls.append(
                {
                    "tool_call_id": ev["call_id"],
                    "function_name": ev["tool"],
                    "arguments": ev["arguments"],
                }
            )
        elif part == "tool_result":
            results.append({"source_call_id": ev["call_id"], "content": ev["output"]})
    if calls:
        out["tool_calls"] = calls
    if results:
        out["observation"] = {"results": results}
    return out


def to_atif(record: Any) -> dict[str, Any]:
    """The record as an ATIF trajectory (a JSON object)."""
    events = [ev.model_dump(mode="json") for ev in record.events]
    trace: AtifTrace | None = record.atif
    if trace is None:
        return _synthesize(record, events)
    steps: list[dict[str, Any]] = []
    for meta in trace.steps:
        evs = events[meta.first_event : meta.first_event + len(meta.parts)]
        step = _rebuild(meta.rest.get("source"), evs, meta.parts)
        for key in meta.omit:
            step.pop(key, None)
        step.update(meta.rest)
        steps.append(step)
    return {**trace.root, "steps": steps}


def _synthesize(record: Any, events: list[dict[str, Any]]) -> dict[str, Any]:
    """ATIF for a record skillci produced itself: one step per system/user message, one agent
    step per assistant turn (its tool calls and their results), errors as system steps;
    ``extra.skillci`` keeps each step's events' ``t`` and skill loads."""
    steps: list[dict[str, Any]] = []
    owner: dict[str, dict[str, Any]] = {}

    def new(source: str, message: str, t: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": source, "message": message}
        step["extra"] = {"skillci": {"t": t}}
        steps.append(step)
        return step

    current: dict[str, Any] | None = None
    for ev in events:
        kind = ev["kind"]
        if kind == "message" and ev["role"] in ("system", "user"):
            new(ev["role"], ev["content"], ev["t"])
            current = None
        elif kind == "message":  # assistant, or a tool message of a plain-text harness
            current = new("agent", ev["content"], ev["t"])
            if record.model.name:
                current["model_name"] = record.model.name
            tokens = {"prompt_tokens": ev.get("input_tokens"),
                      "completion_tokens": ev.get("output_tokens")}  # fmt: skip
            if any(v is not None for v in tokens.values()):
                current["metrics"] = {k: v for k, v in tokens.items() if v is not None}
        elif kind == "tool_call":
            if current is None:
                current = new("agent", "", ev["t"])
            current.setdefault("tool_calls", []).append(
                {
                    "tool_call_id": ev["call_id"],
                    "function_name": ev["tool"],
                    "arguments": ev["arguments"],
                }
            )
            owner[ev["call_id"]] = current
        elif kind == "tool_result":
            target = owner.get(ev["call_id"])
            if target is None:
                target = current if current is not None else new("agent", "", ev["t"])
            result: dict[str, Any] = {"content": ev["output"]}
            if ev["call_id"] in owner:
                result = {"source_call_id": ev["call_id"], **result}
            target.setdefault("observation", {"results": []})["results"].append(result)
        elif kind == "skill_load":
            holder = current if current is not None else new("system", "", ev["t"])
            holder["extra"]["skillci"].setdefault("skill_loads", []).append(ev["path"])
        else:  # error
            new("system", f"{ev['error_type']}: {ev['message']}", ev["t"])
            current = None
    if not steps:
        new("system", "", None)
    cost = record.cost
    final = {
        "total_prompt_tokens": cost.input_tokens,
        "total_completion_tokens": cost.output_tokens,
        "total_steps": len(steps),
    }
    if cost.usd is not None:
        final["total_cost_usd"] = cost.usd
    agent = {"name": record.runtime.harness, "version": record.runtime.harness_version or "unknown"}
    if record.model.name:
        agent["model_name"] = record.model.name
    return {
        "schema_version": EXPORT_VERSION,
        "session_id": record.run_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": final,
        "extra": {
            "skillci": {
                "run_id": record.run_id,
                "task_id": record.task_id,
                "state": record.evaluation.state.value,
                "reward": record.evaluation.reward,
            }
        },
    }


def sidechain_steps(trace: AtifTrace | None) -> int:
    """How many steps a sub-agent took (``extra.is_sidechain``)."""
    if trace is None:
        return 0
    return sum(
        1
        for s in trace.steps
        if isinstance(s.rest.get("extra"), dict) and s.rest["extra"].get("is_sidechain")
    )


__all__ = [
    "EXPORT_VERSION",
    "OUTPUT_CAP",
    "SKILL_TOOLS",
    "AtifStep",
    "AtifTrace",
    "events_from_atif",
    "naive_offset",
    "parse_stamp",
    "sidechain_steps",
    "text_of",
    "to_atif",
]
