"""A run record as OpenTelemetry spans, in the GenAI semantic conventions (design 411).

One trial is one trace. Its root span is the agent's run (``invoke_agent``); below it, one
``chat`` span per model call (an assistant message), one ``execute_tool`` span per tool call
(paired with its result by call id) and one ``verifier`` span; skill loads and error events
are span events on the root. Times are the record's own: the trial ends at ``created_at``,
it began ``max(wall_time_sec, last event t)`` before, and event ``i`` is at begin + ``t``.

Ids are derived from the run id (sha256), so exporting a record twice sends the same spans:
a backend that keys on trace/span ids keeps one copy.

Content (prompts, answers, tool arguments and outputs, the verifier's output, untrusted
error text) is left out unless ``include_content``; every record passes the redactor first,
content or not (:func:`trial_spans` takes the :class:`~skillci.trace.redact.Redactor`).

Pure: no I/O and no OpenTelemetry import (``skillci.trace.otlp`` turns these into SDK spans).
Attribute names: semantic-conventions-genai (gen_ai.*), the rest under ``skillci.*``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from skillci.trace.enums import EvalState
from skillci.trace.models import (
    ErrorEvent,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from skillci.trace.redact import Redactor

#: Span kinds used (the SDK's names).
Kind = Literal["INTERNAL", "CLIENT"]
#: An attribute value as OpenTelemetry takes it.
Value = str | bool | int | float

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Trial states whose verifier did not run: no verifier span.
_NO_VERIFIER = frozenset(
    {EvalState.infra_error, EvalState.not_run, EvalState.environment_unsupported}
)


@dataclass(frozen=True)
class SpanEvent:
    """A point in time on a span (a skill load, an error)."""

    name: str
    time_ns: int
    attributes: dict[str, Value]


@dataclass(frozen=True)
class SpanData:
    """One span, as plain data."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: Kind
    start_ns: int
    end_ns: int
    attributes: dict[str, Value]
    events: list[SpanEvent] = field(default_factory=list)
    error: str | None = None
    """Set when the span's status is ERROR: the status description."""


def _digest(run_id: str, key: str) -> bytes:
    return hashlib.sha256(f"skillci-otel\0{run_id}\0{key}".encode()).digest()


def trace_id_of(run_id: str) -> int:
    """The 128-bit trace id of a run (never 0, which OpenTelemetry reads as invalid)."""
    return int.from_bytes(_digest(run_id, "trace")[:16], "big") or 1


def span_id_of(run_id: str, key: str) -> int:
    """The 64-bit id of the span ``key`` (``trial``, ``event:N``, ``verifier``) of a run."""
    return int.from_bytes(_digest(run_id, key)[:8], "big") or 1


def _ns(dt: datetime) -> int:
    return (dt - _EPOCH) // timedelta(microseconds=1) * 1000


def _secs_ns(sec: float) -> int:
    return round(sec * 1e9)


def provider_of(route: str) -> str:
    """``gen_ai.provider.name`` of a model route: the part before its first ``/`` (routes are
    named provider/model, ``sim/student``); the whole name when it has none."""
    return route.split("/", 1)[0]


def _put(attrs: dict[str, Value], key: str, value: Any) -> None:
    if value is not None:
        attrs[key] = value


def _text_message(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


class _Trial:
    """Builds the spans of one (already redacted) record."""

    def __init__(self, rec: RunRecord, include_content: bool) -> None:
        self.rec = rec
        self.content = include_content
        self.trace_id = trace_id_of(rec.run_id)
        self.root_id = span_id_of(rec.run_id, "trial")
        self.end_ns = _ns(rec.created_at)
        times: list[float] = []
        last = 0.0
        for ev in rec.events:
            last = ev.t if ev.t is not None else last
            times.append(last)
        self.last_t = times[-1] if times else 0.0
        self.start_ns = self.end_ns - _secs_ns(max(rec.cost.wall_time_sec, self.last_t))
        self.at = [self.start_ns + _secs_ns(t) for t in times]
        self.model = rec.model.name or rec.model.route
        self.provider = provider_of(rec.model.route)

    def span(self, key: str, name: str, kind: Kind, start: int, end: int, **kw: Any) -> SpanData:
        return SpanData(
            name=name,
            trace_id=self.trace_id,
            span_id=span_id_of(self.rec.run_id, key),
            parent_id=self.root_id,
            kind=kind,
            start_ns=start,
            end_ns=max(start, end),
            **kw,
        )

    def model_attrs(self, attrs: dict[str, Value]) -> None:
        attrs["gen_ai.provider.name"] = self.provider
        attrs["gen_ai.system"] = self.provider  # the pre-1.37 name some backends still read
        attrs["gen_ai.request.model"] = self.model
        params = self.rec.model.params
        for key in ("temperature", "max_tokens", "top_p"):
            if isinstance(params.get(key), int | float) and not isinstance(params[key], bool):
                attrs[f"gen_ai.request.{key}"] = params[key]
        _put(attrs, "gen_ai.request.seed", self.rec.runtime.seed)
        _put(attrs, "skillci.model.route", self.rec.model.route)
        _put(attrs, "skillci.model.revision", self.rec.model.revision)
        _put(attrs, "skillci.model.quantization", self.rec.model.quantization)

    def chat(self, i: int, ev: MessageEvent) -> SpanData:
        """A model call: from the event before the answer to the answer."""
        start = self.at[i - 1] if i > 0 else self.start_ns
        attrs: dict[str, Value] = {"gen_ai.operation.name": "chat"}
        self.model_attrs(attrs)
        _put(attrs, "gen_ai.usage.input_tokens", ev.input_tokens)
        _put(attrs, "gen_ai.usage.output_tokens", ev.output_tokens)
        attrs["skillci.step"] = ev.step
        if self.content:
            parts: list[dict[str, Any]] = [{"type": "text", "content": ev.content}]
            for nxt in self.rec.events[i + 1 :]:
                if not isinstance(nxt, ToolCallEvent):
                    break
                parts.append(
                    {
                        "type": "tool_call",
                        "id": nxt.call_id,
                        "name": nxt.tool,
                        "arguments": nxt.arguments,
                    }
                )
            attrs["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": parts}])
        return self.span(
            f"event:{ev.step}", f"chat {self.model}", "CLIENT", start, self.at[i], attributes=attrs
        )

    def tool(self, i: int, call: ToolCallEvent | None, res: ToolResultEvent | None) -> SpanData:
        """A tool call, from the call to its result (either may be missing in an import)."""
        first = call or res
        assert first is not None
        name = (call.tool if call else None) or (res.tool if res else None) or "tool"
        attrs: dict[str, Value] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": first.call_id,
            "gen_ai.tool.type": "function",
            "skillci.step": first.step,
        }
        end = self.at[res.step] if res else self.at[i]
        error = None
        if res is not None:
            _put(attrs, "skillci.tool.exit_code", res.exit_code)
            attrs["skillci.tool.truncated"] = res.truncated
            if res.error is not None:
                attrs["error.type"] = "tool_error"
                error = res.error if self.content else "tool_error"
        if self.content:
            if call is not None:
                attrs["gen_ai.tool.call.arguments"] = json.dumps(call.arguments, sort_keys=True)
            if res is not None:
                attrs["gen_ai.tool.call.result"] = res.output
        return self.span(
            f"event:{first.step}",
            f"execute_tool {name}",
            "INTERNAL",
            self.at[i],
            end,
            attributes=attrs,
            error=error,
        )

    def verifier(self) -> SpanData | None:
        ev = self.rec.evaluation
        if ev.state in _NO_VERIFIER and ev.verifier_exit_code is None:
            return None
        attrs: dict[str, Value] = {
            "gen_ai.evaluation.name": "skillci.verifier",
            "gen_ai.evaluation.score.label": ev.state.value,
            "skillci.outcome": ev.state.value,
            "skillci.passed": ev.passed,
            "skillci.threshold": ev.threshold,
        }
        _put(attrs, "gen_ai.evaluation.score.value", ev.reward)
        _put(attrs, "skillci.reward", ev.reward)
        _put(attrs, "skillci.verifier.exit_code", ev.verifier_exit_code)
        _put(attrs, "skillci.failure_class", ev.failure_class)
        _put(attrs, "skillci.evaluator_version", self.rec.runtime.evaluator_version)
        if self.content and ev.verifier_output:
            attrs["skillci.verifier.output"] = ev.verifier_output
        error = None
        if ev.state is EvalState.verifier_error:
            attrs["error.type"] = ev.state.value
            error = ev.state.value
        start = self.start_ns + _secs_ns(self.last_t)
        return self.span(
            "verifier",
            f"verifier {self.rec.task_id}",
            "INTERNAL",
            start,
            self.end_ns,
            attributes=attrs,
            error=error,
        )

    def root_attrs(self) -> dict[str, Value]:
        rec, rt, cost, ev = self.rec, self.rec.runtime, self.rec.cost, self.rec.evaluation
        attrs: dict[str, Value] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": rt.harness,
            "gen_ai.conversation.id": rec.run_id,
        }
        _put(attrs, "gen_ai.agent.version", rt.harness_version)
        self.model_attrs(attrs)
        _put(attrs, "gen_ai.usage.input_tokens", cost.input_tokens)
        _put(attrs, "gen_ai.usage.output_tokens", cost.output_tokens)
        attrs |= {
            "skillci.run_id": rec.run_id,
            "skillci.task_id": rec.task_id,
            "skillci.agent.role": rec.agent_role.value,
            "skillci.outcome": ev.state.value,
            "skillci.passed": ev.passed,
            "skillci.repeat_index": rec.repeat_index,
            "skillci.cost.model_calls": cost.model_calls,
            "skillci.cost.tool_calls": cost.tool_calls,
            "skillci.cost.wall_time_sec": cost.wall_time_sec,
        }
        if rt.skill is not None:
            attrs["skillci.skill.name"] = rt.skill.name
            attrs["skillci.skill.version"] = rt.skill.version
            attrs["skillci.skill.content_hash"] = rt.skill.content_hash
        for key, value in (
            ("skillci.reward", ev.reward),
            ("skillci.failure_class", ev.failure_class),
            ("skillci.cost.usd", cost.usd),
            ("skillci.stop_reason", rec.stop_reason),
            ("skillci.split", rec.split),
            ("skillci.suite", rec.suite),
            ("skillci.trial_cache_key", rec.trial_cache_key),
            ("skillci.runtime.runner", rt.runner),
            ("skillci.runtime.sandbox", rt.sandbox),
        ):
            _put(attrs, key, value)
        if self.content:
            self.root_content(attrs)
        return attrs

    def root_content(self, attrs: dict[str, Value]) -> None:
        msgs = [e for e in self.rec.events if isinstance(e, MessageEvent)]
        system = [m.content for m in msgs if m.role == "system"]
        if system:
            attrs["gen_ai.system_instructions"] = json.dumps(
                [{"type": "text", "content": s} for s in system]
            )
        user = [m for m in msgs if m.role == "user"]
        if user:
            attrs["gen_ai.input.messages"] = _text_message("user", user[0].content)
        if self.rec.final_output:
            attrs["gen_ai.output.messages"] = _text_message("assistant", self.rec.final_output)

    def root_events(self) -> list[SpanEvent]:
        out: list[SpanEvent] = []
        for i, ev in enumerate(self.rec.events):
            if isinstance(ev, SkillLoadEvent):
                attrs: dict[str, Value] = {
                    "skillci.skill.file.path": ev.path,
                    "skillci.skill.file.on_demand": ev.on_demand,
                    "skillci.step": ev.step,
                }
                _put(attrs, "skillci.skill.file.tokens", ev.tokens)
                _put(attrs, "skillci.skill.file.content_hash", ev.content_hash)
                out.append(SpanEvent("skillci.skill_load", self.at[i], attrs))
            elif isinstance(ev, ErrorEvent):
                attrs = {"error.type": ev.error_type, "skillci.step": ev.step}
                if self.content or not ev.untrusted:
                    attrs["skillci.error.message"] = ev.message
                out.append(SpanEvent("skillci.error", self.at[i], attrs))
        return out

    def spans(self) -> list[SpanData]:
        ev = self.rec.evaluation
        error = ev.state.value if ev.state.is_error else None
        attrs = self.root_attrs()
        if error is not None:
            attrs["error.type"] = error
        root = SpanData(
            name=f"invoke_agent {self.rec.runtime.harness}",
            trace_id=self.trace_id,
            span_id=self.root_id,
            parent_id=None,
            kind="INTERNAL",
            start_ns=self.start_ns,
            end_ns=self.end_ns,
            attributes=attrs,
            events=self.root_events(),
            error=error,
        )
        out = [root, *self.children()]
        verifier = self.verifier()
        return [*out, verifier] if verifier is not None else out

    def children(self) -> list[SpanData]:
        events = self.rec.events
        results = {e.call_id: e for e in events if isinstance(e, ToolResultEvent)}
        called = {e.call_id for e in events if isinstance(e, ToolCallEvent)}
        out: list[SpanData] = []
        for i, ev in enumerate(events):
            if isinstance(ev, MessageEvent) and ev.role == "assistant":
                out.append(self.chat(i, ev))
            elif isinstance(ev, ToolCallEvent):
                out.append(self.tool(i, ev, results.get(ev.call_id)))
            elif isinstance(ev, ToolResultEvent) and ev.call_id not in called:
                out.append(self.tool(i, None, ev))
        return out


def trial_spans(
    rec: RunRecord, *, redactor: Redactor, include_content: bool = False
) -> list[SpanData]:
    """The spans of one trial, root first, then its children in event order, then the
    verifier. The record goes through ``redactor`` first (content or not)."""
    return _Trial(redactor.redact_model(rec), include_content).spans()


__all__ = [
    "SpanData",
    "SpanEvent",
    "provider_of",
    "span_id_of",
    "trace_id_of",
    "trial_spans",
]
