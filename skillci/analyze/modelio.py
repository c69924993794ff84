"""Talking to a model safely: the call protocol, quoting untrusted data, parsing JSON answers.

Pure helpers used by the LLM diagnosis (``skillci.analyze.llm``) and the LLM compiler
(``skillci.compile.llm``, ``fast_lessons``, ``deep``); :func:`ask_until_valid` is the one
ask-validate-re-ask loop they share. The model itself is a callable the caller provides (for
example ``ModelClient.complete`` from ``skillci.providers``), so nothing here does I/O.

Quoting rule (ARCHITECTURE.md: untrusted text is quoted, never concatenated): trajectory
data goes into a prompt only as JSON inside a block fenced by markers that carry a hash of
the block's own content, with every non-ASCII character escaped. A payload cannot close
the block (it would have to predict the hash of a text containing its own guess), cannot
hide zero-width or bidi characters, and cannot start a new line outside a JSON string.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.errors import ModelOutputError
from skillci.trace.models import (
    ErrorEvent,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)

Message = dict[str, Any]


class ModelReply(Protocol):
    """What a model call returns (``skillci.providers.types.Completion`` fits)."""

    @property
    def content(self) -> str | None: ...

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    @property
    def usd(self) -> float | None: ...


#: An answer longer than this is not parsed ("oversized"): no patch or diagnosis needs it.
MAX_ANSWER_CHARS = 32_000
#: Each raw answer is kept (in the exchange, and in the retry conversation) up to this size,
#: so an oversized answer is neither stored whole nor sent back to the model on retry.
KEEP_ANSWER_CHARS = 8_000
FailureKind = str
"""Why an answer was rejected: malformed (not JSON), truncated (``finish_reason: length``),
oversized (over :data:`MAX_ANSWER_CHARS`), refused (no JSON, a refusal), invalid (JSON that
breaks the schema or the checks)."""
_REFUSAL_RE = re.compile(
    r"\b(?:i\s+(?:can(?:no|')t|cannot|won't|will\s+not|am\s+unable|'m\s+unable|am\s+not\s+able)"
    r"|i'm\s+sorry|i\s+apologi[sz]e|as\s+an\s+ai)\b|无法|不能",
    re.IGNORECASE,
)


ModelCall = Callable[[list[Message]], ModelReply]
"""One chat call: messages in, reply out. Raise ``ModelError`` on transport failures."""


class ModelExchange(BaseModel):
    """Everything said to and by a model for one decision (kept with the proposal)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=2, description="ModelExchange schema version.")
    kind: str = Field(description="What the model was asked for: diagnosis or compile.")
    model: str | None = Field(default=None, description="Route or model name, when known.")
    messages: list[Message] = Field(
        default_factory=list, description="The prompt of the first attempt (system + user)."
    )
    responses: list[str] = Field(
        default_factory=list,
        description="Raw model answers, one per attempt (untrusted), each cut to "
        "KEEP_ANSWER_CHARS (see answer_chars for the full size).",
    )
    answer_chars: list[int] = Field(
        default_factory=list, description="Full length of each answer, in characters."
    )
    finish_reasons: list[str | None] = Field(
        default_factory=list, description="The provider's finish_reason of each answer."
    )
    errors: list[str] = Field(
        default_factory=list, description="Why each rejected answer was rejected (ours)."
    )
    failures: list[FailureKind] = Field(
        default_factory=list,
        description="Kind of each rejection: malformed, truncated, oversized, refused, invalid.",
    )
    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens over all attempts.")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float = Field(default=0.0, ge=0, description="Dollars over all attempts (0 if unknown).")

    @property
    def attempts(self) -> int:
        return len(self.responses)

    def record(self, reply: ModelReply) -> str:
        """Keep ``reply`` (its text cut to :data:`KEEP_ANSWER_CHARS`); returns the kept text."""
        full = reply.content or ""
        text = _clip(full, KEEP_ANSWER_CHARS)
        self.responses.append(text)
        self.answer_chars.append(len(full))
        finish = getattr(reply, "finish_reason", None)
        self.finish_reasons.append(finish if isinstance(finish, str) else None)
        self.input_tokens += int(reply.input_tokens or 0)
        self.output_tokens += int(reply.output_tokens or 0)
        self.usd += float(reply.usd or 0.0)
        return text


# ---------------------------------------------------------------------------- quoting


def quote_untrusted(label: str, payload: Any) -> str:
    """``payload`` as escaped JSON inside content-hash-tagged markers (see module doc)."""
    body = json.dumps(payload, ensure_ascii=True, indent=1, sort_keys=True, default=str)
    tag = hashlib.sha256(f"{label}\0{body}".encode()).hexdigest()[:16]
    safe_label = re.sub(r"[^A-Za-z0-9_-]", "_", label)[:40]
    return f"<<<UNTRUSTED-DATA {safe_label} {tag}>>>\n{body}\n<<<END-UNTRUSTED-DATA {safe_label} {tag}>>>"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f" …[{len(text) - limit} chars cut]… " + text[-half:]


def trajectory_digest(
    record: RunRecord, *, max_text: int = 400, steps: Sequence[int] | None = None, window: int = 2
) -> dict[str, Any]:
    """A compact, prompt-sized view of a run: its events with long texts clipped.

    With ``steps``, only events within ``window`` of those steps are kept (plus the end).
    Everything a model or tool produced stays marked as untrusted by the caller's quoting.
    """
    keep: set[int] | None = None
    if steps is not None:
        keep = {s + d for s in steps for d in range(-window, window + 1)}
        keep |= {len(record.events) - 1}
    events: list[dict[str, Any]] = []
    for ev in record.events:
        if keep is not None and ev.step not in keep:
            continue
        item: dict[str, Any] = {"step": ev.step, "kind": ev.kind}
        if isinstance(ev, ToolCallEvent):
            args = json.dumps(ev.arguments, sort_keys=True, ensure_ascii=True, default=str)
            item.update(tool=ev.tool, call_id=ev.call_id, arguments=_clip(args, max_text))
        elif isinstance(ev, ToolResultEvent):
            item.update(
                call_id=ev.call_id, exit_code=ev.exit_code, output=_clip(ev.output, max_text)
            )
            if ev.error:
                item["error"] = _clip(ev.error, max_text)
        elif isinstance(ev, MessageEvent):
            if ev.role == "system":
                continue  # the skill and harness prompt are ours; not needed here
            item.update(role=ev.role, content=_clip(ev.content, max_text))
        elif isinstance(ev, SkillLoadEvent):
            item.update(path=ev.path)
        elif isinstance(ev, ErrorEvent):
            item.update(error_type=ev.error_type, message=_clip(ev.message, max_text))
        events.append(item)
    return {
        "run_id": record.run_id,
        "role": record.agent_role.value,
        "verdict": record.evaluation.state.value,
        "stop_reason": record.stop_reason,
        "n_events": len(record.events),
        "events": events,
        "final_output": _clip(record.final_output or "", max_text),
    }


# ---------------------------------------------------------------------------- parsing

_FENCE_RE = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any]:
    """The one JSON object in a model answer (bare, or in a ```json fence).

    Raises ValueError with a one-line reason when there is none.
    """
    candidates = [m.group(1) for m in _FENCE_RE.finditer(text)] or [text]
    for cand in candidates:
        s = cand.strip()
        start, end = s.find("{"), s.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            data = json.loads(s[start : end + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"the answer is not valid JSON: {exc.msg} at char {exc.pos}") from None
        except RecursionError:  # model output is untrusted
            raise ValueError("the answer's JSON is nested too deep") from None
        if isinstance(data, dict):
            return data
    raise ValueError("the answer contains no JSON object")


def retry_message(error: str) -> Message:
    """The user turn that asks for a corrected answer (our text only)."""
    return {
        "role": "user",
        "content": "Your answer was rejected: "
        + error[:600]
        + "\nAnswer again with only the corrected JSON object, nothing else.",
    }


def validation_reason(exc: Exception, limit: int = 6) -> str:
    """Why an answer was rejected, without echoing the model's text (pydantic errors list
    locations and messages only, the first ``limit`` of them)."""
    if isinstance(exc, ValidationError):
        items = exc.errors(include_input=False, include_url=False)
        return "; ".join(
            ".".join(str(p) for p in e["loc"]) + ": " + e["msg"] for e in items[:limit]
        )
    return str(exc)


def first_line(exc: Exception) -> str:
    """The first line of an error, at most 300 characters."""
    return (str(exc).splitlines() or [""])[0][:300]


T = TypeVar("T")


def ask_until_valid(
    call: ModelCall,
    exchange: ModelExchange,
    parse: Callable[[str], T],
    *,
    attempts: int,
    failure: str,
    reason_of: Callable[[Exception], str] = validation_reason,
    hint: str | None = None,
) -> T:
    """Ask the model ``exchange.messages``; ``parse`` its answer. A ``ValidationError`` or
    ``ValueError`` from ``parse`` is recorded in ``exchange.errors`` and the model is asked
    again with the reason (:func:`retry_message`), ``attempts`` times in all. Raises
    :class:`~skillci.errors.ModelOutputError` ("``failure`` in N attempts: <last reason>",
    carrying the exchange) when no answer parsed."""
    convo = list(exchange.messages)
    for _ in range(attempts):
        reply = call(convo)
        full = reply.content or ""
        kept = exchange.record(reply)
        finish = exchange.finish_reasons[-1]
        if len(full) > MAX_ANSWER_CHARS:
            kind: FailureKind = "oversized"
            reason = f"the answer is {len(full)} characters long; at most {MAX_ANSWER_CHARS} are read (oversized)"
        else:
            try:
                return parse(full)
            except (ValidationError, ValueError) as exc:
                kind, reason = _failure(full, finish, exc, reason_of)
        exchange.errors.append(reason)
        exchange.failures.append(kind)
        # the kept (capped) answer goes back, never a 2 MB one
        convo = [*convo, {"role": "assistant", "content": kept}, retry_message(reason)]
    kinds = ", ".join(dict.fromkeys(exchange.failures))
    raise ModelOutputError(
        f"{failure} in {attempts} attempts ({kinds}): {exchange.errors[-1]}",
        exchange=exchange,
        hint=hint,
    )


def _failure(
    text: str, finish: str | None, exc: Exception, reason_of: Callable[[Exception], str]
) -> tuple[FailureKind, str]:
    """(kind, reason) of an answer ``parse`` rejected."""
    reason = reason_of(exc)
    if finish == "length":
        return (
            "truncated",
            f"the answer was cut by the token limit (finish_reason: length): {reason}",
        )
    if isinstance(exc, ValidationError):
        return "invalid", reason
    no_json = "{" not in text
    if no_json and _REFUSAL_RE.search(text[:2000]):
        return "refused", f"the model declined to answer (no JSON object): {reason}"
    if "not valid JSON" in reason or "no JSON object" in reason:
        return "malformed", reason
    return "invalid", reason


__all__ = [
    "KEEP_ANSWER_CHARS",
    "MAX_ANSWER_CHARS",
    "FailureKind",
    "Message",
    "ModelCall",
    "ModelExchange",
    "ModelReply",
    "ask_until_valid",
    "first_line",
    "parse_json_object",
    "quote_untrusted",
    "retry_message",
    "trajectory_digest",
    "validation_reason",
]
